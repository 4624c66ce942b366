"""Which sweep rows a known divergence of their candidate explains.

The candidate's adapter declares its known upstream divergences
(:class:`~diffcheck.adapters.KnownDivergence`); the plan read them when it resolved the
candidate, so the sweep parent imports nothing new. A matching row gets the divergence:

* a failed check whose report has metrics (a measured numerical failure) counts as
  ``known`` and does not fail the sweep (unless ``--strict-known``);
* a passed check is a known divergence not seen, reported and never a failure;
* a failure with no metrics (a crash, a timeout, a non-finite or short output) and a
  not_run check never match: a numerical divergence explains a number, not a missing one.

Reports are never touched: the report of a known failure still says ``failed``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..adapters import KnownDivergence, matching_divergence
from .plan import SweepPlan
from .summary import KnownDivergenceNote, SummaryRow

__all__ = ["DivergencesFor", "classify", "planned_divergences"]

#: The known divergences a candidate backend name declares.
DivergencesFor = Callable[[str], Sequence[KnownDivergence]]


def planned_divergences(plan: SweepPlan) -> DivergencesFor:
    """What each candidate of ``plan`` declared when the plan resolved it (empty if none)."""
    declared: dict[str, Sequence[KnownDivergence]] = {}
    for pair in plan.pairs:
        declared.setdefault(pair.candidate, pair.known_divergences)
    return lambda candidate: declared.get(candidate, ())


def classify(row: SummaryRow, divergences: Sequence[KnownDivergence]) -> SummaryRow:
    """``row`` with the known divergence it matches, when one explains its verdict.

    Parameters
    ----------
    row
        A check's row, as built from its report.
    divergences
        What its candidate's adapter declares.

    Returns
    -------
    SummaryRow
        ``row`` itself, or a copy with ``known_divergence`` set when a passed check or a
        measured failure matches an active divergence.
    """
    # ``nmse`` is set exactly when the report has metrics, i.e. the comparator measured one.
    measured_failure = row.status == "failed" and row.nmse is not None
    if not (row.status == "passed" or measured_failure):
        return row
    device = row.candidate.partition(":")[2] or None
    found = matching_divergence(divergences, device, row.op, row.precision)
    if found is None:
        return row
    note = KnownDivergenceNote(reason=found.reason, upstream=found.upstream)
    return row.model_copy(update={"known_divergence": note})
