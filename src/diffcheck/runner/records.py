"""The report records of one check: the incomplete one it starts with and the final one.

What a record claims follows what ran: a lifecycle whose candidate ran four independent
chains has no submission phases and says so in its execution path, coverage and segment
names; a declared self-test says so in its coverage.
"""

from __future__ import annotations

import math
import platform
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._distribution import __version__
from .._numbers import f64_bits
from ..adapters import Adapter, Execution, resolve
from ..config import Check, coverage_of
from ..differ import Verdict
from ..floor import Floor
from ..ops import ContextLifecycle
from ..provenance import PROBE_ELEMENTS, Fingerprint
from ..report.arrays import encode_outputs
from ..report.floor_record import FloorRecord
from ..report.models import (
    CheckResultV4,
    ComputedByV4,
    Environment,
    LibraryRecord,
    MetricsRecord,
    PrecisionRecord,
    ProbeRecordV4,
    ReportDocument,
    ReportDocumentV4,
    SegmentRecord,
    Status,
)

if TYPE_CHECKING:
    from .identity import Identity
    from .run import Outcome

__all__ = ["completed_document", "computed_by_record", "initial_document", "result_record"]


def _ran_as_chains(check: Check, run: Execution | None, adapter: Adapter | None = None) -> bool:
    """Whether the candidate ran (or, before it runs, will run) the lifecycle as four chains."""
    if not isinstance(check.op, ContextLifecycle):
        return False
    if run is not None:
        return run.independent_chains
    return adapter is not None and not adapter.has_command_contexts


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
    """The incomplete record (``completed: false``) a check starts with.

    A lifecycle whose candidate has no command contexts is announced as four independent
    chains (its execution path and coverage say so, and it has no ``submission_phases``).
    """
    entrypoint, path = _labels(check, candidate)
    chains = _ran_as_chains(check, None, candidate)
    segments = check.op.segment_names if not chains else ()
    return ReportDocumentV4.model_validate(
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
            "coverage": coverage_of(check, chains),
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
) -> CheckResultV4:
    """The report's ``result`` object for ``check`` (outputs as exact bytes, as in v2; the
    verdict's precision floor, as in v4)."""
    tolerance = check.max_nmse
    stored = encode_outputs(reference, actual)
    return CheckResultV4(
        op=check.op.report_name,
        backend=check.require_backend,
        seed=check.seed,
        tolerance=tolerance if math.isfinite(tolerance) else None,
        tolerance_f64_bits=f64_bits(tolerance),
        status=status,
        reason=reason,
        reference=stored[0],
        actual=stored[1],
        metrics=MetricsRecord.of(None if verdict is None else verdict.metrics),
        floor=_floor_record(verdict),
    )


def _floor_record(verdict: Verdict | None) -> FloorRecord | None:
    floor = None if verdict is None else verdict.floor
    return FloorRecord.of(floor) if isinstance(floor, Floor) else None


def completed_document(
    document: ReportDocument, result: CheckResultV4, elapsed_ms: float | None, **updates: object
) -> ReportDocument:
    """``document`` as a final record holding ``result`` (an older incomplete record becomes
    the current version)."""
    if not isinstance(document, ReportDocumentV4):
        document = ReportDocumentV4.model_validate(
            document.model_dump() | {"schema_version": 4, "result": None}
        )
    return document.model_copy(
        update={
            "result": result,
            "completed": True,
            "finished_at": _now(),
            "execution_elapsed_ms": elapsed_ms,
            **updates,
        }
    )


def _library(fingerprint: Fingerprint | None) -> LibraryRecord | None:
    if fingerprint is None:
        return None
    return LibraryRecord(
        module=fingerprint.module,
        version=fingerprint.version,
        array_type=fingerprint.array_type,
        blas=fingerprint.blas,
        namespace=fingerprint.namespace,
    )


def _hex(digest: bytes | None) -> str | None:
    return None if digest is None else digest.hex()


def computed_by_record(found: Identity | None) -> ComputedByV4 | None:
    """The report's ``computed_by`` from what the runner read off both sides' outputs."""
    if found is None:
        return None
    probe = None
    if found.probes is not None:
        ours, theirs = found.probes
        probe = ProbeRecordV4(
            elements=PROBE_ELEMENTS,
            reference_sum_bits=f"{int.from_bytes(ours.sum, 'little'):08x}",
            candidate_sum_bits=f"{int.from_bytes(theirs.sum, 'little'):08x}",
            reference_exp_sha256=_hex(ours.exp),
            candidate_exp_sha256=_hex(theirs.exp),
            reference_matmul_sha256=_hex(ours.matmul),
            candidate_matmul_sha256=_hex(theirs.matmul),
        )
    return ComputedByV4(
        reference=_library(found.reference), candidate=_library(found.candidate), probe=probe
    )


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
        updates["computed_by"] = computed_by_record(outcome.computed_by)
    chains = _ran_as_chains(check, run)
    if chains:
        # What ran: four independent chains, no submissions; say so wherever the record
        # would otherwise claim submission phases or their coverage.
        updates["submission_phases"] = None
        updates["coverage"] = coverage_of(check, chains)
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
        if not chains and all(s.status == "passed" for s in verdict.segments):
            updates["submission_metrics"] = [MetricsRecord.of(s.metrics) for s in verdict.segments]
    return completed_document(initial, result, elapsed_ms, **updates)
