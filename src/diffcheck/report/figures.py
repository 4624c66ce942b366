"""Comparing a report's stored figures with the ones replay re-derived from its bits.

Counts, indices and flags must be equal; a non-finite stored float only where the derived
one is the same. ``max_abs`` (one subtraction per element, no sum) within 8 float64 epsilons
relative, the contract's rule. ``nmse`` and ``reference_mse`` are sums, and the differ sums
in an order that depends on where it runs: its numba kernel adds in vector lanes whose
count is the CPU's, its NumPy path (taken before the kernel is loaded, or without numba)
adds per block with ``einsum``, and a report is replayed on another machine or engine than
the one that wrote it. Both add per block of :data:`~diffcheck.differ._measure.BLOCK`
elements and combine the blocks with :func:`math.fsum`, so each sum of ``m = min(count,
BLOCK)``-term blocks of non-negative terms is within ``m`` units in the last place of the
exact one (products rounded or fused included) and the two ratios within ``4 m + 8``
float64 epsilons of each other, relative: that is their allowance. (Seen: 9 epsilons
between the two engines on one 512-element output.) Nothing else rests on these figures:
the verdict itself is re-derived from the stored bits.
"""

from __future__ import annotations

import math
import re
import sys

from ..differ import Verdict
from ..differ._measure import BLOCK
from .models import MetricsRecord, ReportDocument, SegmentRecord

__all__ = [
    "compare_metrics",
    "compare_segments",
    "compare_submission_metrics",
    "same_reason",
    "sum_allowance",
]

_RELATIVE = 8 * sys.float_info.epsilon


def sum_allowance(count: int) -> float:
    """The relative allowance for a figure that sums ``count`` terms (the docstring's bound)."""
    return (4 * min(max(count, 1), BLOCK) + 8) * sys.float_info.epsilon


def _close(stored: float, derived: float, relative: float = _RELATIVE) -> bool:
    if not (math.isfinite(stored) and math.isfinite(derived)):
        return stored == derived or (math.isnan(stored) and math.isnan(derived))
    return stored == derived or abs(stored - derived) <= relative * max(abs(stored), abs(derived))


# A decimal or exponent number as a reason prints one (the contract's long decimals too).
_FLOOR_CLAUSE = "precision floor: "
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def same_reason(stored: str | None, derived: str | None, count: int) -> bool:
    """Whether two verdict reasons say the same: equal words, and each number within the
    allowance of a sum of ``count`` terms (a reason prints the NMSE to its last digit, and
    the two engines' sums may differ there; see the module docstring)."""
    if stored == derived or stored is None or derived is None:
        return stored == derived
    mine, _, my_floor = stored.partition(_FLOOR_CLAUSE)
    theirs, _, their_floor = derived.partition(_FLOOR_CLAUSE)
    # The floor's figures rest on BLAS and are checked by compare_floor, within its factors;
    # its clause's words (the twin named) must still agree.
    if _NUMBER.split(my_floor) != _NUMBER.split(their_floor):
        return False
    numbers = (_NUMBER.findall(mine), _NUMBER.findall(theirs))
    if _NUMBER.split(mine) != _NUMBER.split(theirs) or len(numbers[0]) != len(numbers[1]):
        return False
    allowance = sum_allowance(count)
    return all(_close(float(a), float(b), allowance) for a, b in zip(*numbers, strict=True))


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
    summed = sum_allowance(derived.element_count)
    for name, relative in (("nmse", summed), ("max_abs", _RELATIVE), ("reference_mse", summed)):
        if not _close(getattr(stored, name), getattr(derived, name), relative):
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
        count = judged.segment.stop - judged.segment.start
        if record.status != judged.status or not same_reason(record.reason, judged.reason, count):
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
