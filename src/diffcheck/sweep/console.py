"""The summary a person reads at the end of a sweep: a per pair / per op table and the paths.

Failures with a known divergence of their adapter are a column and lines of their own
(``known``, with the declared reason and upstream reference once per divergence), and so
are checks that passed although they match one ("known divergence not seen").
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from rich.markup import escape as _markup_escape

from .._numbers import short_float
from ..text import one_line, rounded
from .summary import GroupSummary, KnownDivergenceNote, SummaryRow, SweepSummary
from .words import verdict_text, worst_case

__all__ = ["print_summary"]


def escape(text: str) -> str:
    """A data text for rich: control characters spelled (rich passes ESC and NUL through to
    the terminal), line breaks spelled (one line per row), markup brackets escaped."""
    return _markup_escape(one_line(text))


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else short_float(value)


def _total(group: GroupSummary) -> int:
    return group.passed + group.failed + group.known + group.not_run


def _known_lines(summary: SweepSummary) -> list[str]:
    """Known failures, known divergences not seen, then each divergence once, with why."""
    known = [row for row in summary.checks if row.outcome == "known"]
    unseen = [row for row in summary.checks if row.divergence_not_seen]
    lines = [
        f"[yellow]known[/] {escape(row.id)}: {escape(rounded(row.reason or ''))}"
        for row in known[:20]
    ]
    if len(known) > 20:
        lines.append(f"... and {len(known) - 20} more known failures (see summary.json)")
    lines += [
        f"[cyan]known divergence not seen[/] in {escape(row.id)}: passed, nmse {_num(row.nmse)} "
        f"(tolerance {_num(row.tolerance)})"
        for row in unseen[:20]
    ]
    if len(unseen) > 20:
        lines.append(f"... and {len(unseen) - 20} more (see unexpected_passes in summary.json)")
    notes: dict[tuple[str, KnownDivergenceNote], None] = {}
    for row in known + unseen:
        assert row.known_divergence is not None
        notes[(row.candidate, row.known_divergence)] = None
    lines += [
        f"known divergence of {escape(candidate)}: {escape(rounded(note.reason))} "
        f"(upstream: {escape(note.upstream)})"
        for candidate, note in notes
    ]
    return lines


def _counts_line(summary: SweepSummary, unseen: list[SummaryRow]) -> str:
    counts = summary.counts
    known = f", {counts.known} known" if counts.known else ""
    not_seen = f", {len(unseen)} known divergence(s) not seen" if unseen else ""
    return (
        f"{counts.total} checks: {counts.passed} passed, {counts.failed} failed{known}, "
        f"{counts.not_run} not_run{not_seen} in {summary.elapsed_s:.1f} s ({summary.executor})"
    )


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
    table = Table(title=f"diffcheck sweep: {escape(summary.matrix)}", title_justify="left")
    for name, justify in (
        ("pair", "left"),
        ("op", "left"),
        ("passed", "right"),
        ("failed", "right"),
        ("known", "right"),
        ("not_run", "right"),
        ("worst check", "left"),
        ("its nmse", "right"),
        ("its tol", "right"),
        ("nmse/tol", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    # A pair none of whose checks ran is one row, not one row of dashes per op.
    ran = {(g.reference, g.candidate) for g in summary.groups if g.not_run < _total(g)}
    idle: dict[tuple[str, str], list[GroupSummary]] = {}
    for group in summary.groups:
        pair = escape(f"{group.reference} -> {group.candidate}") + (
            " (required)" if group.required else ""
        )
        if (group.reference, group.candidate) not in ran:
            idle.setdefault((pair, group.candidate), []).append(group)
            continue
        ratio = _num(group.worst_ratio)
        if group.worst_ratio is not None and group.worst_ratio >= 1.0:
            ratio = f"[red]{ratio}[/]"
        table.add_row(
            pair,
            escape(group.op),
            f"[green]{group.passed}[/]" if group.passed else "0",
            f"[red]{group.failed}[/]" if group.failed else "0",
            f"[yellow]{group.known}[/]" if group.known else "0",
            f"[dim]{group.not_run}[/]" if group.not_run else "0",
            escape(worst_case(summary, group)),
            _num(group.worst_nmse),
            _num(group.worst_tolerance),
            ratio,
        )
    for (pair, _), groups in idle.items():
        ops = f"all {len(groups)} ops" if len(groups) > 1 else groups[0].op
        skipped = sum(g.not_run for g in groups)
        table.add_row(pair, ops, "0", "0", "0", f"[dim]{skipped}[/]", "-", "-", "-", "-")
    console.print(table)
    failed = [row for row in summary.checks if row.outcome == "failed"]
    for row in failed[:20]:
        # Reasons are data: "[cuda]" in an install hint must print, not style the line.
        console.print(
            f"[red]failed[/] {escape(row.id)}: {escape(rounded(row.why or ''))}", soft_wrap=True
        )
    if len(failed) > 20:
        console.print(f"... and {len(failed) - 20} more failed checks (see summary.json)")
    not_run: dict[tuple[str, str], str] = {}
    for row in summary.checks:
        if row.status == "not_run":
            not_run.setdefault((f"{row.reference} -> {row.candidate}", row.reason or ""), row.id)
    for (pair, reason), _ in list(not_run.items())[:20]:
        console.print(f"[dim]not_run[/] {escape(pair)}: {escape(rounded(reason))}", soft_wrap=True)
    for line in _known_lines(summary):
        console.print(line, soft_wrap=True)
    for left in summary.left_out:
        console.print(
            one_line(f"left out {left.reference} -> {left.candidate}: {left.reason}"),
            soft_wrap=True,
            markup=False,
        )
    unseen = [row for row in summary.checks if row.divergence_not_seen]
    console.print(_counts_line(summary, unseen), markup=False)
    text, tone = verdict_text(summary)
    colour = {"ok": "green", "partial": "yellow", "bad": "red"}[tone]
    console.print(f"[{colour}]{escape(text)}[/]", soft_wrap=True)
    for label, path in paths:
        console.print(one_line(f"{label}: {path}"), soft_wrap=True, markup=False)
