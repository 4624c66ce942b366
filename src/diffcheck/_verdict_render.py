"""Readable renderings of a verdict: plain text for terminals, HTML for notebooks."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from ._numbers import rust_display

if TYPE_CHECKING:
    from .differ import Metrics, Verdict

__all__ = ["render_html", "render_text"]


def _metrics_line(metrics: Metrics | None) -> str:
    if metrics is None:
        return "not measured"
    return (
        f"nmse={metrics.nmse:.3e} max_abs={metrics.max_abs:.3e} at [{metrics.max_abs_index}] "
        f"max_ulp={metrics.max_ulp} n={metrics.element_count}"
        + (" (absolute MSE)" if metrics.uses_absolute_mse else "")
    )


def render_text(verdict: Verdict) -> str:
    """A few lines: status, tolerance, aggregate metrics, then each segment."""
    lines = [
        f"{verdict.status.upper()} (tolerance {rust_display(verdict.tolerance)}): {_metrics_line(verdict.metrics)}"
    ]
    if verdict.reason:
        lines.append(f"  reason: {verdict.reason}")
    for judged in verdict.segments:
        mark = "ok  " if judged.status == "passed" else "FAIL"
        lines.append(
            f"  {mark} {judged.segment.name} [{judged.segment.start}:{judged.segment.stop}] {_metrics_line(judged.metrics)}"
        )
    return "\n".join(lines)


def _bar(nmse: float | None, tolerance: float) -> str:
    """A horizontal bar: log10(nmse / tolerance) mapped onto 0..100 %, red at or past 1."""
    if nmse is None:
        return '<span style="color:#888">not measured</span>'
    ratio = nmse / tolerance if tolerance > 0 else math.inf
    position = 100.0 if ratio >= 1 else max(2.0, 100.0 + 10.0 * math.log10(max(ratio, 1e-10)))
    colour = "#c62828" if ratio >= 1 else "#2e7d32"
    return (
        f'<div style="background:#eee;width:240px;height:10px;display:inline-block">'
        f'<div style="background:{colour};width:{position:.1f}%;height:10px"></div></div>'
        f" {nmse:.3e}"
    )


def render_html(verdict: Verdict) -> str:
    """A small self-contained table with one NMSE bar per segment (log scale to tolerance)."""
    status_colour = "#2e7d32" if verdict.passed else "#c62828"
    rows = [
        f"<tr><td>aggregate</td><td>{verdict.status}</td><td>{_bar(verdict.metrics.nmse if verdict.metrics else None, verdict.tolerance)}</td></tr>"
    ]
    for judged in verdict.segments:
        nmse = judged.metrics.nmse if judged.metrics else None
        rows.append(
            f"<tr><td>{html.escape(judged.segment.name)}</td><td>{judged.status}</td><td>{_bar(nmse, verdict.tolerance)}</td></tr>"
        )
    reason = f"<p>{html.escape(verdict.reason)}</p>" if verdict.reason else ""
    return (
        f'<div><b style="color:{status_colour}">{verdict.status.upper()}</b> '
        f"tolerance {html.escape(rust_display(verdict.tolerance))}{reason}"
        f"<table><tr><th>segment</th><th>status</th><th>NMSE (bar: log scale, full = tolerance)</th></tr>"
        f"{''.join(rows)}</table></div>"
    )
