"""What :func:`diffcheck.locate` found: every call with both errors, and the first wrong one."""

from __future__ import annotations

import html
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

__all__ = ["CallError", "CandidateRaised", "Localization", "LocatedCall", "PathSplit"]

CallStatus = Literal["ok", "inherits", "wrong"]


@dataclass(frozen=True)
class CallError:
    """One comparison of a call's output with the reference's output of the same call."""

    nmse: float
    max_abs: float
    #: The worst element's index in the output's own shape (None: nothing to index).
    worst_index: tuple[int, ...] | None
    #: Whether the values model's bound for this function holds.
    passed: bool
    reason: str | None
    #: Both outputs' values next to the worst element (flat, 3 on each side).
    reference_around: tuple[float, ...]
    candidate_around: tuple[float, ...]


@dataclass(frozen=True)
class LocatedCall:
    """One Array API call of the program, in program order, with its two errors."""

    index: int
    function: str
    #: ``file:line`` of the call in the program.
    site: str
    input_shapes: tuple[tuple[int, ...], ...]
    input_dtypes: tuple[str, ...]
    candidate_input_dtypes: tuple[str, ...]
    output_shapes: tuple[tuple[int, ...], ...]
    output_dtypes: tuple[str, ...]
    candidate_output_dtypes: tuple[str, ...]
    #: The first 16 hex digits of SHA-256 of the reference's output bytes.
    reference_digest: str
    #: The candidate's own output against the reference's (each fed its own side's inputs).
    carried: CallError
    #: The candidate's call re-run on the reference's exact inputs, against the reference.
    local: CallError
    #: wrong: the local error breaks the bound; inherits: only the carried one does, after
    #: the first wrong call (before it, a carried difference is rounding within the bounds).
    status: CallStatus
    #: The local error's bound, short (``<= 2 ULP``, ``exact``, ``NMSE < 1e-07``).
    bound: str = ""

    @property
    def display_site(self) -> str:
        """The site relative to the working directory when it lies inside it."""
        path, _, line = self.site.rpartition(":")
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive
            return self.site
        return self.site if relative.startswith("..") else f"{relative}:{line}"

    @property
    def short_site(self) -> str:
        path, _, line = self.site.rpartition(":")
        return f"{path.rsplit('/', 1)[-1]}:{line}"


@dataclass(frozen=True)
class PathSplit:
    """Where the two sides' call sequences part (control flow that depends on values)."""

    index: int
    #: (function, site) of call ``index`` on each side; None where that side made no such call.
    reference: tuple[str, str] | None
    candidate: tuple[str, str] | None

    def describe(self) -> str:
        def side(value: tuple[str, str] | None) -> str:
            if value is None:
                return "no call (the program ended)"
            path, _, line = value[1].rpartition(":")
            return f"{value[0]} at {path.rsplit('/', 1)[-1]}:{line}"

        return (
            f"the two sides took different paths at call {self.index}: reference "
            f"{side(self.reference)}, candidate {side(self.candidate)}"
        )


@dataclass(frozen=True)
class CandidateRaised:
    """A call (or a namespace attribute) that raised on the candidate only."""

    index: int
    function: str
    site: str
    #: The exception, one line: ``NotImplementedError: "rshift_cpu" not implemented...``.
    error: str

    def describe(self) -> str:
        path, _, line = self.site.rpartition(":")
        return (
            f"the candidate raised at call #{self.index} {self.function} at "
            f"{path.rsplit('/', 1)[-1]}:{line}, where the reference did not: {self.error}"
        )


def _figure(value: float) -> str:
    if math.isnan(value):  # not measured (a re-run the candidate refused)
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.2e}" if value else "0"


@dataclass(frozen=True)
class Localization:
    """The outcome of :func:`diffcheck.locate`. True only when no call is wrong and no path split."""

    reference: str
    candidate: str
    precision: str
    calls: tuple[LocatedCall, ...]
    total_calls: int
    first_wrong: LocatedCall | None
    path_split: PathSplit | None
    #: Runs of each side it took (more than 1 when the reference's arrays outgrew max_memory).
    passes: int
    peak_stored_bytes: int
    max_memory: int
    #: Makes the first wrong call's bundle (and its note) the first time either is asked for:
    #: judging the call again by the search's own path costs about a tenth of a run.
    make_bundle: Callable[[], tuple[Any, str]] | None = field(
        default=None, repr=False, compare=False
    )
    #: The call that raised on the candidate only (no later call was compared), or None.
    raised: CandidateRaised | None = None
    #: Names the precision twin a wrong matmul's error matches, the first time it is asked.
    make_diagnosis: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def diagnosis(self) -> str | None:
        """For a first wrong call that multiplies matrices, the twin its error matches
        (``consistent with TF32 matmul operands ...: twin NMSE 6.8e-08``); else None."""
        return None if self.make_diagnosis is None else self.make_diagnosis()

    @cached_property
    def _bundled(self) -> tuple[Any, str]:
        if self.make_bundle is None:
            return None, "no wrong call"
        return self.make_bundle()

    @property
    def bundle(self) -> Any:
        """The first wrong call as a replay bundle (a ``diffcheck.search.bundle.Bundle``), or None."""
        return self._bundled[0]

    @property
    def bundle_note(self) -> str:
        """Why there is no bundle (or "bundled")."""
        return str(self._bundled[1])

    def save_bundle(self, path: str | os.PathLike[str]) -> Path:
        """Write the first wrong call's bundle as a new file; ``diffcheck replay`` replays it.

        Raises
        ------
        ConfigError
            When there is no bundle (and why), or the file cannot be created new.
        """
        from ..errors import BundleError, ConfigError
        from ..search.bundle import write_bundle

        if self.bundle is None:
            raise ConfigError(f"no bundle to save: {self.bundle_note}")
        target = Path(path)
        try:
            write_bundle(target, self.bundle)
        except BundleError as error:
            raise ConfigError(str(error)) from None
        return target

    @property
    def first_drift(self) -> LocatedCall | None:
        """The first call whose carried error breaks its bound (where the sides part)."""
        return next((c for c in self.calls if not c.carried.passed), None)

    @property
    def passed(self) -> bool:
        return self.first_wrong is None and self.path_split is None and self.raised is None

    def __bool__(self) -> bool:
        return self.passed

    def summary(self) -> str:
        """One paragraph: the first wrong call, or why there is none."""
        head = f"{self.heading()}: {self.total_calls} calls"
        lines = [head + f", {len(self.calls)} compared in {self.passes} run(s) of each side"]
        if self.path_split is not None:
            lines.append(self.path_split.describe())
        if self.raised is not None:
            lines.append(self.raised.describe())
        call = self.first_wrong
        if call is None:
            if self.path_split is None and self.raised is None:
                lines.append("no call is wrong: every call's local error is within its bound")
            drift = self.first_drift
            if drift is not None:
                lines.append(
                    f"the carried error first breaks its bound at #{drift.index} "
                    f"{drift.function} at {drift.display_site} (NMSE "
                    f"{_figure(drift.carried.nmse)}): each call is right on the reference's "
                    "inputs, so the difference comes from the inputs' rounding to the "
                    "candidate's precision or from calls within their bounds that add up"
                )
            return "\n".join(lines)
        lines.append(
            f"first wrong call: #{call.index} {call.function} at {call.display_site}\n"
            f"  inputs {list(call.input_shapes)} {list(call.candidate_input_dtypes)} -> "
            f"{list(call.output_shapes)} {list(call.candidate_output_dtypes)}\n"
            f"  local error: NMSE {_figure(call.local.nmse)}, max |diff| "
            f"{_figure(call.local.max_abs)} at {call.local.worst_index}; {call.local.reason}\n"
            f"  carried error: NMSE {_figure(call.carried.nmse)}\n"
            + (f"  diagnosis: {self.diagnosis}\n" if self.diagnosis else "")
            + f"  reference around it: {list(call.local.reference_around)}\n"
            f"  candidate around it: {list(call.local.candidate_around)}"
        )
        inherits = sum(1 for c in self.calls if c.status == "inherits")
        lines.append(f"{inherits} later call(s) only inherit the divergence")
        return "\n".join(lines)

    def dtypes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The dtypes the program's calls gave on the reference and on the candidate."""
        reference = {d for c in self.calls for d in c.output_dtypes}
        candidate = {d for c in self.calls for d in c.candidate_output_dtypes}
        return tuple(sorted(reference)), tuple(sorted(candidate))

    def heading(self) -> str:
        """``mlx:cpu vs numpy at f16 (reference float32, int64; candidate float16, int64)``."""
        reference, candidate = self.dtypes()
        if not reference and not candidate:
            return f"{self.candidate} vs {self.reference} at {self.precision}"
        ran = f"reference {', '.join(reference) or '-'}; candidate {', '.join(candidate) or '-'}"
        return f"{self.candidate} vs {self.reference} at {self.precision} ({ran})"

    def table(self) -> str:
        """Every compared call: index, function, site, both errors, the bound and the status."""
        rows = [
            self.heading(),
            f"{'#':>4} {'function':<22} {'site':<28} {'local NMSE':>11} {'carried NMSE':>13}  "
            f"{'bound':<16} status",
        ]
        for c in self.calls:
            rows.append(
                f"{c.index:>4} {c.function[:22]:<22} {c.short_site[:28]:<28} "
                f"{_figure(c.local.nmse):>11} {_figure(c.carried.nmse):>13}  "
                f"{c.bound[:16]:<16} {c.status}"
            )
        return "\n".join(rows)

    def __str__(self) -> str:
        return f"{self.summary()}\n\n{self.table()}"

    def __rich__(self) -> object:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        table = Table(title=self.heading())
        for column in ("#", "function", "site", "local NMSE", "carried NMSE", "bound", "status"):
            table.add_column(
                column, justify="right" if "NMSE" in column or column == "#" else "left"
            )
        style = {"ok": "green", "inherits": "yellow", "wrong": "bold red"}
        for c in self.calls:
            table.add_row(
                str(c.index),
                c.function,
                c.short_site,
                _figure(c.local.nmse),
                _figure(c.carried.nmse),
                c.bound,
                Text(c.status, style=style[c.status]),
            )
        return Group(Text(self.summary()), table)

    def to_html(self) -> str:
        """A standalone page: the summary, a per-call error plot and the table."""
        return _page(self)


def _log(value: float) -> float:
    if value <= 0:
        return -20.0
    if math.isinf(value) or math.isnan(value):
        return 5.0
    return max(-20.0, min(5.0, math.log10(value)))


def _plot(result: Localization) -> str:
    """Local and carried NMSE per call (log scale) as an inline SVG."""
    calls = result.calls
    width, height, left, bottom = 900, 260, 50, 30
    step = (width - left - 10) / max(len(calls), 1)

    def y(value: float) -> float:
        return 10 + (5.0 - _log(value)) / 25.0 * (height - bottom - 10)

    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-label="per-call error">'
    ]
    for exponent in range(-20, 6, 5):
        ypos = 10 + (5.0 - exponent) / 25.0 * (height - bottom - 10)
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{ypos:.1f}" y2="{ypos:.1f}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{ypos + 4:.1f}" font-size="11" text-anchor="end">1e{exponent}</text>'
        )
    for name, colour in (("carried", "#e0a000"), ("local", "#c02020")):
        points = " ".join(
            f"{left + (i + 0.5) * step:.1f},{y(getattr(c, name).nmse):.1f}"
            for i, c in enumerate(calls)
        )
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
    for i, c in enumerate(calls):
        x = left + (i + 0.5) * step
        colour = {"ok": "#2a8a2a", "inherits": "#e0a000", "wrong": "#c02020"}[c.status]
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y(c.local.nmse):.1f}" r="4" fill="{colour}">'
            f"<title>#{c.index} {html.escape(c.function)} ({html.escape(c.short_site)}): "
            f"local {_figure(c.local.nmse)}, carried {_figure(c.carried.nmse)}, {c.status}</title></circle>"
        )
    parts.append(
        f'<text x="{left}" y="{height - 8}" font-size="12">call index; red line: local NMSE, '
        "amber line: carried NMSE; dots coloured by status</text></svg>"
    )
    return "".join(parts)


def _page(result: Localization) -> str:
    rows = "".join(
        f'<tr class="{c.status}"><td>{c.index}</td><td>{html.escape(c.function)}</td>'
        f"<td>{html.escape(c.short_site)}</td><td>{html.escape(str(list(c.input_shapes)))}</td>"
        f"<td>{html.escape(', '.join(c.candidate_input_dtypes))}</td>"
        f"<td>{_figure(c.local.nmse)}</td><td>{_figure(c.carried.nmse)}</td>"
        f"<td>{html.escape(c.bound)}</td><td>{c.status}</td></tr>"
        for c in result.calls
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>diffcheck locate</title><style>"
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #ddd;"
        "padding:3px 6px;text-align:left;overflow-wrap:anywhere}tr.wrong{background:#fdd}"
        "tr.inherits{background:#fff4d6}pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}"
        "</style></head><body><h1>Where the candidate diverges</h1>"
        f"<pre>{html.escape(result.summary())}</pre>{_plot(result)}"
        "<table><tr><th>#</th><th>function</th><th>site</th><th>input shapes</th>"
        "<th>candidate dtypes</th><th>local NMSE</th><th>carried NMSE</th><th>bound</th>"
        "<th>status</th></tr>"
        f"{rows}</table></body></html>"
    )
