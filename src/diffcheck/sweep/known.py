"""Which sweep rows a known divergence of their candidate explains.

The candidate's adapter declares its known upstream divergences
(:class:`~diffcheck.adapters.KnownDivergence`); the plan read them when it resolved the
candidate, so the sweep parent imports nothing new. A matching row gets the divergence:

* a failed check counts as ``known`` (and does not fail the sweep unless
  ``--strict-known``) only when the divergence explains it: a measured NMSE over the
  tolerance (or the precision floor) and at most the divergence's ceiling (``max_nmse``),
  with nothing else wrong (:func:`~diffcheck.adapters.failure_of`), and the divergence's
  twin models the candidate within the floor (the row's ``floor.models``, from the
  report's ``result.floor``); a divergence without a twin excuses nothing. A crash, a timeout, a non-finite, short or
  wrongly shaped output, a precision mismatch, or an NMSE over the ceiling (a sentinel left
  in a buffer) is never excused;
* a passed check is a known divergence not seen, reported and never a failure;
* a not_run check never matches.

Reports are never touched: the report of a known failure still says ``failed``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..adapters import KnownDivergence, failure_of, matching_divergence, resolve
from ..report.models import ReportDocument
from .plan import SweepPlan
from .summary import KnownDivergenceNote, SummaryRow

__all__ = ["DivergencesFor", "classify", "known_failure", "planned_divergences"]

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
        ``row`` itself, or a copy with ``known_divergence`` (naming the divergence's bound)
        set when a passed check matches an active divergence, or a failure is one it
        explains within its ceiling.
    """
    if row.status not in ("passed", "failed"):
        return row
    failure = None
    if row.status == "failed":
        failed_segments = [s.nmse for s in row.segments if s.status == "failed"]
        models = row.floor.models if row.floor is not None else ()
        failure = failure_of(row.reason, row.nmse, row.tolerance, failed_segments, models)
    device = row.candidate.partition(":")[2] or None
    found = matching_divergence(divergences, device, row.op, row.precision, failure=failure)
    if found is None:
        return row
    note = KnownDivergenceNote(reason=found.reason, upstream=found.upstream, bound=found.bound)
    return row.model_copy(update={"known_divergence": note})


def known_failure(document: ReportDocument) -> bool:
    """Whether a failed report is a failure its candidate's adapter declares known, by the
    rule a sweep row is classified with (:func:`classify`); False for any other status, or
    a candidate that cannot be resolved here (nothing declares it)."""
    result = document.result
    if result is None or result.status != "failed":
        return False
    config: Any = document.config  # every op's config model names these three
    backend: str = config.require_backend
    try:
        declared = resolve(backend).known_divergences()
    except Exception:  # a backend unknown here declares nothing: the failure stands
        return False
    failed_segments = [
        None if s.metrics is None else s.metrics.nmse
        for s in document.segments or []
        if s.status == "failed"
    ]
    nmse = None if result.metrics is None else result.metrics.nmse
    floor = getattr(result, "floor", None)
    models = floor.models if floor is not None else ()
    failure = failure_of(result.reason, nmse, float(config.max_nmse), failed_segments, models)
    device = backend.partition(":")[2] or None
    found = matching_divergence(declared, device, config.op, config.precision, failure=failure)
    return found is not None
