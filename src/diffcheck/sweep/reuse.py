"""Whether ``sweep --resume`` may reuse a stored report in place of running a planned check.

A stored report is evidence about the planned check only when it *is* that check: the
file's name says nothing, and neither does its ``config`` alone (it leaves out the
reference backend and the self-test marker). A report is reused only when all of these hold:

1. it is complete and its status is not ``not_run``: a not_run says that nothing ran, so
   it is never evidence and always runs again (the backend may be there now);
2. it matches the planned check in every field derived from or bound to the plan: the
   ``config`` (candidate, op, params, precision, seed, tolerance), the reference backend,
   the coverage text (which carries the self-test marker), the output shape and element
   count, the configured storages, and the result's op, backend, seed and tolerance bits;
3. it replays fully (:func:`~diffcheck.report.replay.replay`): its verdict follows from
   what replay recomputes (with ``--rerun``, a pass also from its candidate run again);
4. a pass records which library computed each side (``computed_by``, schema v3), and the
   two are not one library: a pass from a v1 or v2 report (or a v3 upgraded from v2)
   cannot say whether its pair was independent, and a pass with both sides' arrays from
   one library is never a pass; either runs again, and the fresh report says what
   computed it now. A failure is reused with or without it (reusing it cannot pass
   anything).

:func:`reuse_problem` returns the first rule a report breaks, as one line, or None.
"""

from __future__ import annotations

from typing import Any

from .._numbers import f64_bits
from ..config import Check, coverage_of
from ..errors import ReportError
from ..ops import ContextLifecycle
from ..report.identity import computed_by_of
from ..report.models import ReportDocument

__all__ = ["independence_problem", "plan_mismatch", "replay_problem", "reuse_problem"]


def _coverages(check: Check) -> tuple[str, ...]:
    """The coverage texts a report of ``check`` may carry (a lifecycle: phases or chains)."""
    if isinstance(check.op, ContextLifecycle):
        return (coverage_of(check, False), coverage_of(check, True))
    return (coverage_of(check, False),)


def plan_mismatch(check: Check, document: ReportDocument) -> str | None:
    """The first field in which ``document`` is not a report of the planned ``check``, or None."""
    if document.config.model_dump() != check.record().model_dump():
        return "its config is not the planned check's"
    configured = document.configured_precision
    fields: list[tuple[str, Any, Any]] = [
        ("reference_backend", document.reference_backend, check.reference),
        ("output_shape", tuple(document.output_shape), check.output_shape),
        ("expected_output_elements", document.expected_output_elements, check.expected_elements),
        (
            "configured_precision",
            (
                configured.reference_storage,
                configured.backend_input_storage,
                configured.backend_output_storage,
            ),
            ("f32", check.precision, check.precision),
        ),
    ]
    result = document.result
    if result is not None:
        fields += [
            ("result.op", result.op, check.op.report_name),
            ("result.backend", result.backend, check.require_backend),
            ("result.seed", result.seed, check.seed),
            ("result.tolerance_f64_bits", result.tolerance_f64_bits, f64_bits(check.max_nmse)),
        ]
    for name, stored, planned in fields:
        if stored != planned:
            return f"{name} is {stored!r}, the plan's is {planned!r}"
    if document.coverage not in _coverages(check):
        stored_self = "SELF-TEST:" in document.coverage
        if stored_self != check.allow_self_test:
            return (
                "it is a self-test report, the planned check is not"
                if stored_self
                else "the planned check is a self-test, the report does not say so"
            )
        return "its coverage is not the planned check's"
    return None


def _replayed(document: ReportDocument, rerun: bool) -> tuple[str | None, bool]:
    """(the first disagreement as one line or None, whether replay finds one library)."""
    from ..report.replay import replay

    try:
        outcome = replay(document, rerun=True) if rerun else replay(document)
    except (ReportError, ValueError, ArithmeticError, LookupError, TypeError) as error:
        text = str(error).splitlines()[0] if str(error) else ""
        return f"replay failed: {type(error).__name__}: {text}", False
    if outcome.agrees:
        return None, bool(getattr(outcome, "one_library", False))
    more = len(outcome.disagreements) - 1
    return outcome.disagreements[0] + (f" (and {more} more)" if more else ""), False


def replay_problem(document: ReportDocument, *, rerun: bool = False) -> str | None:
    """None when replaying ``document`` agrees with every stored field, else the first
    disagreement as one line (a forged field replay cannot interpret is one too). With
    ``rerun`` the candidate runs again and must reproduce its stored output (``--rerun``)."""
    return _replayed(document, rerun)[0]


def independence_problem(document: ReportDocument) -> str | None:
    """Why a passed ``document`` cannot stand as a pass for want of an independent pair:
    ``computed_by`` not recorded, or both sides one library; None otherwise (and for any
    status but passed)."""
    result = document.result
    if result is None or result.status != "passed":
        return None
    computed_by = computed_by_of(document)
    if computed_by is None:
        return (
            f"a pass of schema v{document.schema_version} that does not record which library "
            "computed each side (computed_by) is never reused"
        )
    if computed_by.one_library:
        return "both sides are one library (NOT INDEPENDENT): it is never reused as a pass"
    return None


def reuse_problem(check: Check, document: ReportDocument, *, rerun: bool = False) -> str | None:
    """Why a complete stored ``document`` may not stand for the planned ``check``; None if
    it may (the rules are in the module docstring, checked in that order). With ``rerun``
    a stored pass is replayed with its candidate re-run (``sweep --resume --rerun``): a pass
    whose candidate does not reproduce it runs again."""
    result = document.result
    if not document.completed or result is None:
        return "it is incomplete"
    if result.status == "not_run":
        return "a not_run report is never reused (nothing ran)"
    mismatch = plan_mismatch(check, document)
    if mismatch is not None:
        return f"it is not a report of the planned check: {mismatch}"
    problem, one_library = _replayed(document, rerun and result.status == "passed")
    if problem is not None:
        return f"it does not replay ({problem})"
    if (recorded := independence_problem(document)) is not None:
        return recorded
    if one_library and result.status == "passed":
        # Judged by replay from what computes here (bound namespaces, pattern probes), not
        # only from the report's claimed probe: a claimed field never makes a pass.
        return "replay finds both sides one library (NOT INDEPENDENT): it is never reused as a pass"
    return None
