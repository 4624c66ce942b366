"""The precision floor of one check, as the runner measures it and replay re-derives it.

Both sides call :func:`check_floor` on the same things (the config's inputs, the candidate's
stored bits, the segments that were judged), so a report's floor is derived, not claimed.
Stored figures that rest on a twin computed through BLAS (the floor, the twins' errors)
may move with the machine's summation order: they must agree within a factor of two, and
the verdict is re-derived from replay's own figures. The candidate's NMSE against the
float64 truth and the exact relations (the multiple, the derived tolerance, the status, the
matched twin) are held tightly.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..floor import Floor, op_floor
from .floor_record import FloorRecord

if TYPE_CHECKING:
    from ..config import Check
    from ..ops import HostInputs

__all__ = ["check_floor", "compare_floor"]

# Relative spread allowed between a stored and a re-derived figure: NMSEs against the
# float64 truth move only with the truth's last bits; a twin's error moves with BLAS's order.
_TRUTH_RELATIVE = 1e-6
_TWIN_FACTOR = 2.0


def check_floor(
    check: Check,
    chains: bool,
    actual: npt.NDArray[Any],
    *,
    inputs: HostInputs | None = None,
    diagnose: bool = False,
    in_order: bool | None = None,
) -> Floor | None:
    """The floor of ``check`` for the candidate output ``actual``; None when it is not measured.

    Not measured when the output does not have the configured element count (the shape
    binding fails it) or holds a non-finite value (the comparator fails it first).
    ``in_order`` forces whether the in-order honest twin runs (replay: as the report's
    floor says it did); by default it runs where the pairwise floor fails the candidate.
    """
    from ..config import segments_of

    if actual.size != check.expected_elements or not np.isfinite(actual).all():
        return None
    if inputs is None:
        inputs = check.op.inputs(check.params, check.seed)
    spans = [(s.name, s.start, s.stop) for s in segments_of(check, chains)]
    return op_floor(
        check.op,
        check.params,
        inputs,
        check.precision,
        actual,
        segments=spans,
        diagnose=diagnose,
        in_order=in_order,
    )


def _near(
    stored: float, derived: float, *, factor: float | None = None, negligible: float = 0.0
) -> bool:
    """Within ``factor`` of each other (or ``_TRUTH_RELATIVE``); two figures both below
    ``negligible`` (a thousandth of the derived tolerance) are the same nothing."""
    if not (math.isfinite(stored) and math.isfinite(derived)):
        return stored == derived or (math.isnan(stored) and math.isnan(derived))
    if max(abs(stored), abs(derived)) < negligible:
        return True
    if factor is not None:
        low, high = sorted((abs(stored), abs(derived)))
        return stored == derived or (low > 0.0 and high <= factor * low)
    return abs(stored - derived) <= _TRUTH_RELATIVE * max(abs(stored), abs(derived))


def compare_floor(stored: FloorRecord | None, derived: Floor | None) -> list[str]:
    """Every way the stored floor record disagrees with the re-derived floor."""
    if stored is None or derived is None:
        if stored is None and derived is None:
            return []
        present = "stored but not derivable" if derived is None else "derivable but not stored"
        return [f"result.floor: {present}"]
    again = FloorRecord.of(derived)
    assert again is not None
    problems = []
    tiny = again.derived_tolerance * 1e-3
    for name in ("honest_twin", "honest_orders", "multiple", "status", "match"):
        if getattr(stored, name) != getattr(again, name):
            problems.append(
                f"result.floor.{name}: stored {getattr(stored, name)!r}, "
                f"derived {getattr(again, name)!r}"
            )
    if not _near(stored.candidate_nmse, again.candidate_nmse, negligible=tiny):
        problems.append(
            f"result.floor.candidate_nmse: stored {stored.candidate_nmse!r}, "
            f"derived {again.candidate_nmse!r}"
        )
    if not _near(
        stored.honest_distance, again.honest_distance, factor=_TWIN_FACTOR, negligible=tiny
    ):
        problems.append(
            f"result.floor.honest_distance: stored {stored.honest_distance!r}, "
            f"derived {again.honest_distance!r}"
        )
    if not _near(stored.floor_nmse, again.floor_nmse, factor=_TWIN_FACTOR):
        problems.append(
            f"result.floor.floor_nmse: stored {stored.floor_nmse!r}, derived {again.floor_nmse!r}"
        )
    if stored.derived_tolerance != stored.multiple * stored.floor_nmse:
        problems.append("result.floor.derived_tolerance: not multiple x floor_nmse")
    if [t.label for t in stored.twins] != [t.label for t in again.twins]:
        problems.append(
            f"result.floor.twins: stored {[t.label for t in stored.twins]}, "
            f"derived {[t.label for t in again.twins]}"
        )
    else:
        for mine, theirs in zip(stored.twins, again.twins, strict=True):
            for name in ("nmse", "distance", "spread"):
                if not _near(
                    getattr(mine, name), getattr(theirs, name), factor=_TWIN_FACTOR, negligible=tiny
                ):
                    problems.append(
                        f"result.floor.twins[{mine.label}].{name}: stored "
                        f"{getattr(mine, name)!r}, derived {getattr(theirs, name)!r}"
                    )
    if [s.name for s in stored.segments] != [s.name for s in again.segments]:
        problems.append("result.floor.segments: not the segments judged")
    else:
        for part, again_part in zip(stored.segments, again.segments, strict=True):
            if not _near(
                part.candidate_nmse, again_part.candidate_nmse, negligible=tiny
            ) or not _near(part.floor_nmse, again_part.floor_nmse, factor=_TWIN_FACTOR):
                problems.append(f"result.floor.segments[{part.name}]: figures differ")
            if part.derived_tolerance != stored.multiple * part.floor_nmse:
                problems.append(
                    f"result.floor.segments[{part.name}].derived_tolerance: "
                    "not multiple x floor_nmse"
                )
    return problems
