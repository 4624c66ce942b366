"""Running one required check: the reference tool's pipeline, generalized to any backend pair.

Order (each step can end the check; statuses are only ever downgraded after the comparator):

1. tolerance: not finite or not > 0 is ``failed`` and nothing is probed;
2. probe the required candidate only (never a fallback): unavailable is ``not_run`` with the
   probe's reason and the reference is not run; a probe error is ``failed``;
3. probe the reference the same way, then check the candidate supports the op and precision;
4. reference: an exception, an empty or a non-finite output is ``failed`` and the candidate
   is not dispatched;
5. candidate: an exception is ``failed`` with its message (the reference is kept);
6. compare, then bind the output shape, then judge each segment on its own.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from . import __version__
from ._numbers import f64_bits
from .adapters import Adapter, Capabilities, Execution, resolve
from .config import Check
from .differ import (
    Verdict,
    bind_segments,
    bind_shape,
    compare_outputs,
)
from .precision import f32_bits
from .report.models import (
    CheckResult,
    Environment,
    MetricsRecord,
    OutputBits,
    PrecisionRecord,
    ReportDocument,
    SegmentRecord,
    Status,
)
from .report.writer import ReportWriter

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


def _first_non_finite(values: npt.NDArray[np.float32]) -> int | None:
    finite = np.isfinite(values)
    return None if finite.all() else int(np.argmin(finite))


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

    inputs = check.op.inputs(check.params, check.seed)
    try:
        reference_run = reference.execute(check.op, check.params, inputs, "f32", role="reference")
    except Exception as error:
        return Outcome(
            "failed", f"reference execution failed: {_error_text(error)}", details=details
        )
    expected = reference_run.output
    outcome = Outcome(
        "not_run", None, reference=expected, reference_execution=reference_run, details=details
    )
    if expected.size == 0:
        outcome.status, outcome.reason = "failed", "reference output is empty"
        return outcome
    if (index := _first_non_finite(expected)) is not None:
        outcome.status, outcome.reason = (
            "failed",
            f"reference contains a non-finite value at {index}",
        )
        return outcome

    try:
        candidate_run = candidate.execute(check.op, check.params, inputs, check.precision)
    except Exception as error:
        outcome.status = "failed"
        outcome.reason = f"required backend execution failed: {_error_text(error)}"
        return outcome
    outcome.actual, outcome.candidate_execution = candidate_run.output, candidate_run
    verdict = compare_outputs(expected, candidate_run.output, tolerance)
    outcome.status, outcome.reason, outcome.verdict = verdict.status, verdict.reason, verdict
    return outcome


def bind(outcome: Outcome, check: Check) -> Verdict | None:
    """Shape binding then segment binding (both may only downgrade); returns the final verdict."""
    base = outcome.verdict or Verdict(
        "passed" if outcome.status == "passed" else "failed", outcome.reason, None, check.max_nmse
    )
    reference_count = None if outcome.reference is None else outcome.reference.size
    actual_count = None if outcome.actual is None else outcome.actual.size
    bound = bind_shape(base, reference_count, actual_count, check.expected_elements)
    segments = check.op.segments(check.params)
    if segments and outcome.reference is not None and outcome.actual is not None:
        bound = bind_segments(bound, outcome.reference, outcome.actual, segments)
    if bound is not base:
        outcome.status, outcome.reason = bound.status, bound.reason
    if outcome.verdict is not None or bound is not base:
        outcome.verdict = bound
    return outcome.verdict


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _labels(check: Check, candidate: Adapter | None) -> tuple[str, str]:
    """(kernel entrypoint, execution path) of the candidate; plain text if it will not load."""
    try:
        adapter = candidate or resolve(check.require_backend)
        return (
            adapter.kernel_entrypoint(check.op, check.params, check.precision),
            adapter.execution_path(check.op),
        )
    except Exception:  # only labels: a plugin that cannot load must not stop the record
        return (
            f"{check.require_backend}: {check.op.report_name} (adapter not loaded)",
            f"{check.op.execution_path} via {check.require_backend} (adapter not loaded)",
        )


def initial_document(check: Check, candidate: Adapter | None = None) -> ReportDocument:
    """The incomplete record (``completed: false``) a check starts with."""
    entrypoint, path = _labels(check, candidate)
    segments = check.op.segment_names
    return ReportDocument.model_validate(
        {
            "config": check.record().model_dump(),
            "reference_backend": check.reference,
            "output_shape": check.output_shape,
            "expected_output_elements": check.expected_elements,
            "configured_precision": PrecisionRecord(
                reference_storage="f32",
                backend_input_storage=check.precision,
                backend_output_storage=check.precision,
                kernel_entrypoint=entrypoint,
            ),
            "executed_precision": None,
            "execution_path": path,
            "coverage": check.op.coverage,
            "submission_phases": list(segments) if segments else None,
            "environment": Environment(
                diffcheck_version=__version__,
                python=sys.version.split()[0],
                platform=platform.platform(),
            ),
            "started_at": _now(),
            "completed": False,
            "finished_at": None,
            "execution_elapsed_ms": None,
            "result": None,
        }
    )


def result_record(
    check: Check,
    status: Status,
    reason: str | None,
    *,
    reference: npt.NDArray[np.float32] | None = None,
    actual: npt.NDArray[np.float32] | None = None,
    verdict: Verdict | None = None,
) -> CheckResult:
    """The report's ``result`` object for ``check``."""
    tolerance = check.max_nmse
    return CheckResult(
        op=check.op.report_name,
        backend=check.require_backend,
        seed=check.seed,
        tolerance=tolerance if math.isfinite(tolerance) else None,
        tolerance_f64_bits=f64_bits(tolerance),
        status=status,
        reason=reason,
        reference=_bits(reference),
        actual=_bits(actual),
        metrics=MetricsRecord.of(verdict.metrics if verdict else None),
    )


def completed_document(
    document: ReportDocument, result: CheckResult, elapsed_ms: float | None, **updates: object
) -> ReportDocument:
    """``document`` as a final record holding ``result``."""
    return document.model_copy(
        update={
            "result": result,
            "completed": True,
            "finished_at": _now(),
            "execution_elapsed_ms": elapsed_ms,
            **updates,
        }
    )


def _bits(values: npt.NDArray[np.float32] | None) -> OutputBits | None:
    return None if values is None else OutputBits(f32_bits=f32_bits(values))


def _final_document(
    initial: ReportDocument,
    check: Check,
    outcome: Outcome,
    verdict: Verdict | None,
    elapsed_ms: float,
) -> ReportDocument:
    result = result_record(
        check,
        outcome.status,
        outcome.reason,
        reference=outcome.reference,
        actual=outcome.actual,
        verdict=verdict,
    )
    updates: dict[str, object] = {
        "environment": initial.environment.model_copy(
            update={
                "reference_detail": outcome.details.get("reference", ""),
                "candidate_detail": outcome.details.get("candidate", ""),
            }
        ),
    }
    run = outcome.candidate_execution
    if outcome.actual is not None and run is not None:
        reference_run = outcome.reference_execution
        updates["executed_precision"] = PrecisionRecord(
            reference_storage=reference_run.output_storage if reference_run else "f32",
            backend_input_storage=run.input_storage,
            backend_output_storage=run.output_storage,
            kernel_entrypoint=run.kernel_entrypoint,
        )
        updates["execution_path"] = run.execution_path
    if verdict is not None and verdict.segments:
        updates["segments"] = [
            SegmentRecord(
                name=s.segment.name,
                start=s.segment.start,
                stop=s.segment.stop,
                status=s.status,
                reason=s.reason,
                metrics=MetricsRecord.of(s.metrics),
            )
            for s in verdict.segments
        ]
        if all(s.status == "passed" for s in verdict.segments):
            updates["submission_metrics"] = [MetricsRecord.of(s.metrics) for s in verdict.segments]
    return completed_document(initial, result, elapsed_ms, **updates)


def run_check(
    check: Check,
    report: Path | None = None,
    *,
    reference: Adapter | None = None,
    candidate: Adapter | None = None,
) -> ReportDocument:
    """Run one check end to end and return its final report document.

    With ``report`` set, the file is created new (never overwriting), the incomplete record
    is written before execution and the final record after it.

    Raises
    ------
    ReportError
        When the report file cannot be created or written.
    UnknownBackendError
        When a backend name cannot be resolved to an adapter.
    """
    candidate_adapter = candidate or resolve(check.require_backend)
    writer = ReportWriter(report) if report is not None else None
    initial = initial_document(check, candidate_adapter)
    if writer is not None:
        writer.write(initial)
    started = time.perf_counter()
    outcome = execute_check(check, reference=reference, candidate=candidate_adapter)
    verdict = bind(outcome, check)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    document = _final_document(initial, check, outcome, verdict, elapsed_ms)
    if writer is not None:
        writer.write(document)
    return document
