"""Running one required check: the reference tool's pipeline, generalized to any backend pair.

Order (each step can end the check; statuses are only ever downgraded after the comparator):

1. tolerance: not finite or not > 0 is ``failed`` and nothing is probed;
2. probe the required candidate only (never a fallback): unavailable is ``not_run`` with the
   probe's reason and the reference is not run; a probe error is ``failed``;
3. probe the reference the same way, then check the candidate supports the op and precision;
4. inputs: an exception while generating them is ``failed`` with its message;
5. reference: an exception, an empty or a non-finite output is ``failed`` and the candidate
   is not dispatched;
6. candidate: an exception is ``failed`` with its message (the reference is kept);
7. compare, then fail a candidate whose executed storage is not the configured precision,
   then bind the output shape, then judge each segment on its own.

Before any of it, :func:`run_check` refuses a check whose estimated memory exceeds the
budget (:mod:`diffcheck.runner.budget`), before the report exists; once the report exists,
anything raised while preparing or finishing the check becomes a completed ``failed``
record.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..adapters import Adapter, Capabilities, Execution, resolve
from ..config import Check, segments_of
from ..differ import (
    Verdict,
    bind_precision,
    bind_segments,
    bind_shape,
    compare_outputs,
    reference_problem,
)
from ..floor import bind_floor
from ..ops import HostInputs
from ..report.floor_check import check_floor
from ..report.line import remember_path
from ..report.models import ReportDocument, Status
from ..report.writer import ReportWriter
from .budget import check_budget
from .identity import Identity, identify
from .records import (
    _final_document,
    _ran_as_chains,
    completed_document,
    initial_document,
    result_record,
)

__all__ = [
    "Outcome",
    "completed_document",
    "execute_check",
    "initial_document",
    "result_record",
    "run_check",
]


@dataclass
class Outcome:
    """What the pipeline produced, before it becomes a report."""

    status: Status
    reason: str | None
    reference: npt.NDArray[np.float32] | None = None
    actual: npt.NDArray[np.float32] | None = None
    verdict: Verdict | None = None
    reference_execution: Execution | None = None
    candidate_execution: Execution | None = None
    details: dict[str, str] = field(default_factory=dict)
    #: Which library computed each side (set once both ran to an output).
    computed_by: Identity | None = None
    #: The inputs both sides ran from (the precision floor's twins run from them too).
    inputs: HostInputs | None = None


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _probe_gate(adapter: Adapter, role: str, details: dict[str, str]) -> Outcome | None:
    """None when ``adapter`` can run; otherwise the not_run/failed outcome saying why."""
    probe = adapter.probe()
    details[role] = probe.detail
    if probe.status == "available":
        return None
    prefix = "" if role == "candidate" else f"reference backend {adapter.spec}: "
    if probe.status == "unavailable":
        return Outcome("not_run", f"{prefix}{probe.reason}", details=details)
    return Outcome(
        "failed", f"{prefix}backend availability query failed: {probe.reason}", details=details
    )


def _capability_gate(check: Check, adapter: Adapter, precision: str, role: str) -> Outcome | None:
    capabilities = adapter.capabilities()
    if precision not in capabilities.precisions:
        executes = ", ".join(capabilities.precisions)
        return Outcome(
            "not_run",
            f"{role} backend {adapter.spec} does not execute precision {precision} (it executes: {executes})"
            + _refusal(capabilities, precision),
        )
    if capabilities.ops is not None and check.op.name not in capabilities.ops:
        return Outcome(
            "not_run",
            f"{role} backend {adapter.spec} does not implement op {check.op.name}"
            + _refusal(capabilities, check.op.name),
        )
    return None


def _refusal(capabilities: Capabilities, name: str) -> str:
    """``": <why>"`` when the adapter says why it does not run ``name``, else nothing."""
    why = capabilities.refusals.get(name)
    return f": {why}" if why else ""


def execute_check(
    check: Check,
    *,
    tolerance: float | None = None,
    reference: Adapter | None = None,
    candidate: Adapter | None = None,
) -> Outcome:
    """Run the pipeline for ``check``; every exception becomes a ``failed`` outcome.

    ``tolerance`` overrides ``check.max_nmse`` (tests feed invalid ones); ``reference`` and
    ``candidate`` override the adapters resolved from the check's names (test doubles).
    """
    tolerance = check.max_nmse if tolerance is None else tolerance
    if not math.isfinite(tolerance) or tolerance <= 0.0:
        return Outcome("failed", "tolerance must be finite and strictly positive")
    try:
        candidate = candidate or resolve(check.require_backend)
        reference = reference or resolve(check.reference)
    except Exception as error:
        return Outcome("failed", f"backend resolution failed: {_error_text(error)}")

    details: dict[str, str] = {}
    gate = _probe_gate(candidate, "candidate", details) or _probe_gate(
        reference, "reference", details
    )
    if gate is not None:
        return gate
    try:
        gate = _capability_gate(check, candidate, check.precision, "candidate") or _capability_gate(
            check, reference, "f32", "reference"
        )
    except Exception as error:
        return Outcome("failed", f"capability query failed: {_error_text(error)}", details=details)
    if gate is not None:
        gate.details = details
        return gate

    try:
        inputs = check.op.inputs(check.params, check.seed)
    except Exception as error:
        return Outcome("failed", f"preparing inputs failed: {_error_text(error)}", details=details)
    try:
        reference_run = reference.execute(check.op, check.params, inputs, "f32", role="reference")
    except Exception as error:
        return Outcome(
            "failed", f"reference execution failed: {_error_text(error)}", details=details
        )
    expected = reference_run.output
    outcome = Outcome(
        "not_run",
        None,
        reference=expected,
        reference_execution=reference_run,
        details=details,
        inputs=inputs,
    )
    if (problem := reference_problem(expected)) is not None:
        outcome.status, outcome.reason = "failed", problem
        return outcome

    try:
        candidate_run = candidate.execute(check.op, check.params, inputs, check.precision)
    except Exception as error:
        outcome.status = "failed"
        outcome.reason = f"required backend execution failed: {_error_text(error)}"
        return outcome
    outcome.actual, outcome.candidate_execution = candidate_run.output, candidate_run
    outcome.computed_by = identify(reference, candidate, reference_run, candidate_run)
    verdict = bind_precision(
        compare_outputs(expected, candidate_run.output, tolerance, ulp_dtype=check.precision),
        check.precision,
        candidate_run.input_storage,
        candidate_run.output_storage,
    )
    outcome.status, outcome.reason, outcome.verdict = verdict.status, verdict.reason, verdict
    return outcome


def bind(outcome: Outcome, check: Check) -> Verdict | None:
    """Shape binding, segment binding, then the precision floor (each may only downgrade);
    returns the final verdict."""
    base = (
        outcome.verdict
        if outcome.verdict is not None
        else Verdict(
            "passed" if outcome.status == "passed" else "failed",
            outcome.reason,
            None,
            check.max_nmse,
        )
    )
    reference_count = None if outcome.reference is None else outcome.reference.size
    actual_count = None if outcome.actual is None else outcome.actual.size
    bound = bind_shape(base, reference_count, actual_count, check.expected_elements)
    chains = _ran_as_chains(check, outcome.candidate_execution)
    segments = segments_of(check, chains)
    if segments and outcome.reference is not None and outcome.actual is not None:
        bound = bind_segments(
            bound, outcome.reference, outcome.actual, segments, ulp_dtype=check.precision
        )
    if outcome.verdict is not None and outcome.actual is not None:
        floor = check_floor(
            check,
            chains,
            outcome.actual,
            inputs=outcome.inputs,
            diagnose=bound.status == "failed",
        )
        bound = bind_floor(bound, floor)
    if bound is not base:
        outcome.status, outcome.reason = bound.status, bound.reason
    if outcome.verdict is not None or bound is not base:
        outcome.verdict = bound
    return outcome.verdict


def run_check(
    check: Check,
    report: Path | None = None,
    *,
    reference: Adapter | None = None,
    candidate: Adapter | None = None,
    max_memory: int | None = None,
) -> ReportDocument:
    """Run one check end to end and return its final report document.

    With ``report`` set, the file is created new (never overwriting), the incomplete record
    is written before execution and the final record after it. Anything raised after the
    report exists (generating inputs, a label, the final record) makes it a completed
    ``failed`` record with the error's message.

    Parameters
    ----------
    check
        The validated check.
    report
        The new report file, or None to keep the document in memory.
    reference, candidate
        Adapters to use instead of resolving the check's names (test doubles).
    max_memory
        The most bytes the check may need (:func:`~diffcheck.runner.budget.estimate_memory`);
        None means the default budget, half the memory available now.

    Raises
    ------
    ConfigError
        When the check's estimated memory exceeds the budget (before the report exists).
    ReportError
        When the report file cannot be created or written.
    UnknownBackendError
        When a backend name cannot be resolved to an adapter.
    """
    check_budget(check, max_memory)
    candidate_adapter = candidate or resolve(check.require_backend)
    initial = initial_document(check, candidate_adapter)
    writer = ReportWriter(report) if report is not None else None
    if writer is not None:
        writer.write(initial)
    started = time.perf_counter()
    try:
        outcome = execute_check(check, reference=reference, candidate=candidate_adapter)
        verdict = bind(outcome, check)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        document = _final_document(initial, check, outcome, verdict, elapsed_ms)
    except Exception as error:  # a record that exists must end complete, saying why
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        reason = f"preparing the check failed: {_error_text(error)}"
        result = result_record(check, "failed", reason)
        document = completed_document(initial, result, elapsed_ms)
    if writer is not None:
        writer.write(document)
        remember_path(document, writer.path)
    return document
