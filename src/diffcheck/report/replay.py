"""Re-deriving a report's verdict from its stored bits, trusting nothing else it says.

The tolerance is taken from ``tolerance_f64_bits``, the outputs from ``f32_bits``; the
comparator, shape binding and segment judging run again, and every stored metric must agree
with the recomputed one: counts and flags exactly, floats within 8 float64 epsilons relative.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from .._numbers import f64_from_bits
from ..differ import Segment, Verdict, bind_segments, bind_shape, compare_outputs
from ..errors import ReportError
from ..ops import ContextLifecycle, get_op
from ..precision import f32_from_bits
from .models import MetricsRecord, ReportDocument

__all__ = ["Replay", "load_report", "replay"]

_RELATIVE = 8 * sys.float_info.epsilon


@dataclass
class Replay:
    """The outcome of re-checking one report."""

    document: ReportDocument
    verdict: Verdict | None
    disagreements: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not self.disagreements

    @property
    def status(self) -> str:
        return self.document.result.status if self.document.result else "incomplete"


def load_report(path: Path) -> ReportDocument:
    """Read and validate a report file (any schema problem is a one-line ReportError)."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise ReportError(f"read report {path}: {error.strerror}") from None
    try:
        return ReportDocument.model_validate(json.loads(text))
    except json.JSONDecodeError as error:
        raise ReportError(f"report {path} is not JSON: {error}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReportError(
            f"report {path} does not match schema v1 at {where}: {first['msg']}"
        ) from None


def _close(stored: float, derived: float) -> bool:
    return stored == derived or abs(stored - derived) <= _RELATIVE * max(abs(stored), abs(derived))


def _compare_metrics(
    label: str, stored: MetricsRecord | None, derived: MetricsRecord | None
) -> list[str]:
    if stored is None or derived is None:
        if stored is derived:
            return []
        present = "stored but not derivable" if derived is None else "derivable but not stored"
        return [f"{label}: {present}"]
    problems = []
    for name in ("element_count", "uses_absolute_mse", "max_abs_index", "max_ulp"):
        if getattr(stored, name) != getattr(derived, name):
            problems.append(
                f"{label}.{name}: stored {getattr(stored, name)}, derived {getattr(derived, name)}"
            )
    for name in ("nmse", "max_abs", "reference_mse"):
        if not _close(getattr(stored, name), getattr(derived, name)):
            problems.append(
                f"{label}.{name}: stored {getattr(stored, name)!r}, derived {getattr(derived, name)!r}"
            )
    return problems


def replay(document: ReportDocument) -> Replay:
    """Recompute the verdict of ``document`` and list every way the stored one disagrees."""
    result = document.result
    if not document.completed or result is None:
        return Replay(
            document, None, ["report is incomplete (completed: false); it is not evidence"]
        )
    tolerance = f64_from_bits(result.tolerance_f64_bits)
    problems: list[str] = []
    if result.tolerance is not None and result.tolerance != tolerance:
        problems.append(f"tolerance {result.tolerance!r} does not match its bits ({tolerance!r})")
    if result.status == "passed" and result.reason is not None:
        problems.append("a passed result carries a reason")
    if result.status != "passed" and not result.reason:
        problems.append(f"a {result.status} result has no reason")
    reference = None if result.reference is None else f32_from_bits(result.reference.f32_bits)
    actual = None if result.actual is None else f32_from_bits(result.actual.f32_bits)

    verdict: Verdict | None = None
    storage = document.configured_precision.backend_output_storage  # ULPs count in it
    if reference is not None and actual is not None:
        verdict = compare_outputs(reference, actual, tolerance, ulp_dtype=storage)
    base = verdict or Verdict(
        "passed" if result.status == "passed" else "failed", None, None, tolerance
    )
    bound = bind_shape(
        base,
        None if reference is None else reference.size,
        None if actual is None else actual.size,
        document.expected_output_elements,
    )
    # A lifecycle without submission phases ran as four independent chains: its segments
    # are the chains, and it records no per-phase metrics.
    op = get_op(getattr(document.config, "op"))  # noqa: B009 (per-op model)
    chains = isinstance(op, ContextLifecycle) and not document.submission_phases
    if reference is not None and actual is not None:
        # Every op with segments (lifecycle phases or chains, attention heads, add-rms-norm's
        # two outputs) is judged per segment, as the runner judged it.
        params = op.params(**{name: getattr(document.config, name) for name in op.options})
        segments: list[Segment] = (
            op.segments(params, independent_chains=chains)
            if isinstance(op, ContextLifecycle)
            else op.segments(params)
        )
        if segments:
            bound = bind_segments(bound, reference, actual, segments, ulp_dtype=storage)
    if verdict is not None or bound is not base:
        verdict = bound
        derived_status = verdict.status
        if derived_status != result.status:
            problems.append(f"status: stored {result.status}, derived {derived_status}")
    elif result.status == "passed":
        problems.append("a passed result must store both outputs")
    derived_metrics = MetricsRecord.of(verdict.metrics) if verdict is not None else None
    problems += _compare_metrics("metrics", result.metrics, derived_metrics)
    if verdict is not None and verdict.segments and not chains:
        all_passed = all(s.status == "passed" for s in verdict.segments)
        stored_phases = document.submission_metrics
        if all_passed != (stored_phases is not None):
            problems.append("submission_metrics presence does not match the per-phase verdicts")
        elif stored_phases is not None:
            for index, judged in enumerate(verdict.segments):
                problems += _compare_metrics(
                    f"submission_metrics[{index}]",
                    stored_phases[index],
                    MetricsRecord.of(judged.metrics),
                )
    if result.status == "passed" and verdict is not None and not math.isfinite(tolerance):
        problems.append("a passed result has a non-finite tolerance")
    return Replay(document, verdict, problems)
