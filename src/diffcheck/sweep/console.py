"""The summary a person reads at the end of a sweep: a per pair / per op table and the paths."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from rich.markup import escape

from .summary import SweepSummary

__all__ = ["print_summary"]


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:.3g}"


def print_summary(
    summary: SweepSummary, paths: Sequence[tuple[str, Path]], *, stream: IO[str] | None = None
) -> None:
    """Print the totals table, failures with their reasons, the verdict and the output paths.

    Colours only on a terminal; a pipe or a CI log gets plain text at a fixed width.
    """
    from rich.console import Console
    from rich.table import Table

    out = stream or sys.stdout
    console = Console(file=out, width=None if out.isatty() else 140, highlight=False)
    table = Table(title=f"diffcheck sweep: {summary.matrix}", title_justify="left")
    for name, justify in (
        ("pair", "left"),
        ("op", "left"),
        ("passed", "right"),
        ("failed", "right"),
        ("not_run", "right"),
        ("worst nmse", "right"),
        ("tolerance", "right"),
        ("nmse/tol", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for group in summary.groups:
        pair = f"{group.reference} -> {group.candidate}" + (" (required)" if group.required else "")
        ratio = _num(group.worst_ratio)
        if group.worst_ratio is not None and group.worst_ratio >= 1.0:
            ratio = f"[red]{ratio}[/]"
        table.add_row(
            pair,
            group.op,
            f"[green]{group.passed}[/]" if group.passed else "0",
            f"[red]{group.failed}[/]" if group.failed else "0",
            f"[dim]{group.not_run}[/]" if group.not_run else "0",
            _num(group.worst_nmse),
            _num(group.worst_tolerance),
            ratio,
        )
    console.print(table)
    failed = [row for row in summary.checks if row.status == "failed"]
    for row in failed[:20]:
        # Reasons are data: "[cuda]" in an install hint must print, not style the line.
        console.print(
            f"[red]failed[/] {escape(row.id)}: {escape(row.reason or '')}", soft_wrap=True
        )
    if len(failed) > 20:
        console.print(f"... and {len(failed) - 20} more failed checks (see summary.json)")
    not_run: dict[tuple[str, str], str] = {}
    for row in summary.checks:
        if row.status == "not_run":
            not_run.setdefault((f"{row.reference} -> {row.candidate}", row.reason or ""), row.id)
    for (pair, reason), _ in list(not_run.items())[:20]:
        console.print(f"[dim]not_run[/] {escape(pair)}: {escape(reason)}", soft_wrap=True)
    for left in summary.left_out:
        console.print(
            f"left out {left.reference} -> {left.candidate}: {left.reason}",
            soft_wrap=True,
            markup=False,
        )
    counts = summary.counts
    console.print(
        f"{counts.total} checks: {counts.passed} passed, {counts.failed} failed, "
        f"{counts.not_run} not_run in {summary.elapsed_s:.1f} s ({summary.executor})"
    )
    if summary.exit_status == 0:
        console.print("[green]sweep passed[/]")
    else:
        console.print(
            f"[red]sweep failed:[/] {escape('; '.join(summary.exit_reasons))}", soft_wrap=True
        )
    for label, path in paths:
        console.print(f"{label}: {path}", soft_wrap=True, markup=False)
