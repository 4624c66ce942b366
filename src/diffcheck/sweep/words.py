"""What the sweep's console and page both say about a sweep, in the same words.

The sweep's verdict: a pass over the checks that ran says nothing about those that did not,
so a sweep with not_run checks "passed where it ran", on the console as on the page. And the
worst check of a pair and op is named by its case (shape and precision), since its NMSE and
tolerance are that one check's.
"""

from __future__ import annotations

from .summary import GroupSummary, SweepSummary

__all__ = ["verdict_text", "worst_case"]


def verdict_text(summary: SweepSummary) -> tuple[str, str]:
    """The sweep's verdict in one line, and its tone: ``ok``, ``partial`` or ``bad``."""
    counts = summary.counts
    if summary.exit_status != 0:
        return "Sweep failed: " + "; ".join(summary.exit_reasons), "bad"
    if counts.not_run:
        ran = counts.total - counts.not_run
        return (
            f"Sweep passed where it ran: {ran} of {counts.total} checks ran, "
            f"{counts.not_run} not_run (see their reasons)"
        ), "partial"
    return f"Sweep passed: all {counts.total} checks ran", "ok"


def worst_case(summary: SweepSummary, group: GroupSummary) -> str:
    """The worst check of ``group`` (by nmse / tolerance) as ``64x33x35 f16``, or ``-``."""
    for row in summary.checks:
        if row.id == group.worst_check:
            return f"{row.shape} {row.precision}"
    return "-"
