"""Comparing a report's stored figures with the ones replay re-derived from its bits.

Counts, indices and flags must be equal; floats within 8 float64 epsilons relative (the
same computation in another summation order), and a non-finite stored float only where the
derived one is the same.
"""

from __future__ import annotations

import math
import sys

from ..differ import Verdict
from .models import MetricsRecord, ReportDocument, SegmentRecord

__all__ = ["compare_metrics", "compare_segments", "compare_submission_metrics"]

_RELATIVE = 8 * sys.float_info.epsilon


def _close(stored: float, derived: float) -> bool:
    if not (math.isfinite(stored) and math.isfinite(derived)):
        return stored == derived or (math.isnan(stored) and math.isnan(derived))
    return stored == derived or abs(stored - derived) <= _RELATIVE * max(abs(stored), abs(derived))


def compare_metrics(
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


def compare_segments(stored: list[SegmentRecord] | None, verdict: Verdict) -> list[str]:
    derived = verdict.segments
    if not derived:
        return [] if stored is None else ["segments: stored but the op has none"]
    if stored is None:
        return ["segments: derivable but not stored"]
    if len(stored) != len(derived):
        return [f"segments: {len(stored)} stored, {len(derived)} derived"]
    problems = []
    for index, (record, judged) in enumerate(zip(stored, derived, strict=True)):
        label = f"segments[{index}]"
        expected = (judged.segment.name, judged.segment.start, judged.segment.stop)
        if (record.name, record.start, record.stop) != expected:
            problems.append(
                f"{label}: stored {record.name} [{record.start}, {record.stop}), "
                f"derived {expected[0]} [{expected[1]}, {expected[2]})"
            )
            continue
        if (record.status, record.reason) != (judged.status, judged.reason):
            problems.append(
                f"{label} ({record.name}): stored {record.status} ({record.reason}), "
                f"derived {judged.status} ({judged.reason})"
            )
        problems += compare_metrics(
            f"{label}.metrics", record.metrics, MetricsRecord.of(judged.metrics)
        )
    return problems


def compare_submission_metrics(
    document: ReportDocument, verdict: Verdict, chains: bool
) -> list[str]:
    stored = document.submission_metrics
    expected = (
        bool(verdict.segments)
        and not chains
        and all(s.status == "passed" for s in verdict.segments)
    )
    if not expected:
        return [] if stored is None else ["submission_metrics: stored but not derivable"]
    if stored is None or len(stored) != len(verdict.segments):
        return ["submission_metrics presence does not match the per-phase verdicts"]
    problems = []
    for index, judged in enumerate(verdict.segments):
        problems += compare_metrics(
            f"submission_metrics[{index}]", stored[index], MetricsRecord.of(judged.metrics)
        )
    return problems
