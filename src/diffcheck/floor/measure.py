"""The floor of a check and the verdict it implies: a candidate against what its precision can do.

Three arrays meet here, all flat: the float64 truth (the computation in float64 from the
inputs as the check's precision stores them), the honest twin's output, and the candidate's.
The floor is the largest of the honest twins' NMSEs against the truth (NumPy's pairwise sums,
and every sum in order: both are honest summation orders) and the NMSE correct rounding
makes on average (``u^2 / 3`` relative, :func:`~.rounding.rounding_error`). A candidate passes the
floor when its own NMSE against the truth is below :data:`FLOOR_MULTIPLE` times the floor,
the whole output and every segment alike. A failing candidate is compared with the
downgraded twins, and the one its error matches is named.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from .._numbers import short_float
from ..differ import Verdict
from ..precision import PrecisionName, TwinName
from .rounding import energy, ratio, rounding_error
from .twins import HONEST_TWIN, twin_named

__all__ = [
    "FLOOR_MULTIPLE",
    "Floor",
    "SegmentFloor",
    "TwinError",
    "bind_floor",
    "judge_floor",
    "match_twin",
]

#: How far above its floor an honest candidate may land, by precision: the derived tolerance
#: is this times the floor. Measured (docs/precision-floor.md, tools/floor_table.py): with the
#: floor taken over pairwise and in-order sums, honest float32 candidates (mlx:cpu, torch:cpu,
#: array_api_strict, wgpu on llvmpipe) land at most 3.3x their floor over every op and shape
#: of the default matrix, while TF32, float16 and bfloat16 matmuls land 6.4e5x or more above
#: it and a fast exp (relative error ~1e-4) 1e3x. Half-precision storage rounds every
#: output, so honest float16 and bfloat16 candidates sit at 1.0x their floor.
FLOOR_MULTIPLE: Final[dict[PrecisionName, float]] = {"f32": 100.0, "f16": 16.0, "bf16": 16.0}

# Failing a twin the candidate matches within its floor, one whose error is within this
# factor of the candidate's.
_SIZE_FACTOR: Final = 4.0

MatchKind = Literal["matches it within the floor", "same size"]


@dataclass(frozen=True)
class TwinError:
    """A twin's NMSE against the truth, and the candidate's NMSE against the twin."""

    name: TwinName
    nmse: float
    distance: float


@dataclass(frozen=True)
class SegmentFloor:
    """One segment's floor and the candidate's NMSE against the truth there."""

    name: str
    floor_nmse: float
    candidate_nmse: float
    derived_tolerance: float

    @property
    def passed(self) -> bool:
        return self.candidate_nmse < self.derived_tolerance


@dataclass(frozen=True)
class Floor:
    """A check's precision floor, the candidate's error against the truth, and the twins."""

    precision: PrecisionName
    floor_nmse: float
    multiple: float
    candidate_nmse: float
    twins: tuple[TwinError, ...] = ()
    segments: tuple[SegmentFloor, ...] = ()
    #: The candidate's NMSE against the honest twin's output.
    honest_distance: float = math.inf

    @property
    def honest(self) -> TwinName:
        return HONEST_TWIN[self.precision]

    @property
    def derived_tolerance(self) -> float:
        return self.multiple * self.floor_nmse

    @property
    def ratio(self) -> float:
        """The candidate's NMSE against the truth in units of the floor."""
        if self.floor_nmse > 0.0:
            return self.candidate_nmse / self.floor_nmse
        return 0.0 if self.candidate_nmse == 0.0 else math.inf

    @property
    def passed(self) -> bool:
        """Whether the whole output and every segment are below the derived tolerance."""
        whole = self.candidate_nmse < self.derived_tolerance
        return whole and all(segment.passed for segment in self.segments)

    @property
    def match(self) -> tuple[TwinError, MatchKind] | None:
        """The downgraded twin the candidate's error matches, and how; None if none does."""
        return match_twin(self.candidate_nmse, self.twins, self.derived_tolerance)

    @property
    def models(self) -> tuple[TwinName, ...]:
        """The twins that model the candidate, the honest one first: their outputs are within
        the derived tolerance of each other (the candidate computes what the twin computes,
        up to an honest implementation's own spread at this precision)."""
        honest = (self.honest,) if self.honest_distance < self.derived_tolerance else ()
        return honest + tuple(t.name for t in self.twins if t.distance < self.derived_tolerance)

    def summary(self) -> str:
        """``NMSE 7.1e-08 against the float64 truth = 5.2e+05x the float32 floor 1.4e-13``."""
        return (
            f"NMSE {short_float(self.candidate_nmse)} against the float64 truth = "
            f"{short_float(self.ratio)}x the {self.honest} floor {short_float(self.floor_nmse)}"
            f" (derived tolerance {short_float(self.derived_tolerance)}, "
            f"{short_float(self.multiple)}x)"
        )

    def diagnosis(self) -> str:
        """``consistent with TF32 matmul operands ...: twin NMSE 6.8e-08``, or that none is."""
        found = self.match
        if found is None:
            return (
                "matches no twin ("
                + ", ".join(f"{t.name} {short_float(t.nmse)}" for t in self.twins)
                + ")"
                if self.twins
                else "no downgraded twin was run"
            )
        twin, kind = found
        others = [
            t.name for t in self.twins if t is not twin and t.distance < self.derived_tolerance
        ]
        also = f", as do {', '.join(others)}" if others else ""
        return (
            f"consistent with {twin_named(twin.name).describe()} ({kind}{also}): twin NMSE "
            f"{short_float(twin.nmse)}"
        )

    def reason(self) -> str | None:
        """Why the candidate fails its floor (whole output or first segment); None if it passes."""
        if self.passed:
            return None
        if self.candidate_nmse >= self.derived_tolerance:
            where = self.summary()
        else:
            segment = next(s for s in self.segments if not s.passed)
            where = (
                f"{segment.name}: NMSE {short_float(segment.candidate_nmse)} against the "
                f"float64 truth is not below its derived tolerance "
                f"{short_float(segment.derived_tolerance)}"
            )
        # One clause with no "; " inside: reasons join their clauses with "; ".
        return f"precision floor: {where}, {self.diagnosis()}"


def match_twin(
    candidate_nmse: float, twins: Sequence[TwinError], tolerance: float
) -> tuple[TwinError, MatchKind] | None:
    """The first twin (in :data:`~diffcheck.floor.twins.TWINS` order, the most specific
    first) whose output the candidate's is within ``tolerance`` of; else the twin whose
    error is of the candidate's size, within a factor of four."""
    matching = [t for t in twins if t.distance < tolerance]
    if matching:
        return matching[0], "matches it within the floor"
    sized = [
        t
        for t in twins
        if t.nmse > 0.0 and 1.0 / _SIZE_FACTOR <= candidate_nmse / t.nmse <= _SIZE_FACTOR
    ]
    if sized:
        return min(sized, key=lambda t: abs(math.log(candidate_nmse / t.nmse))), "same size"
    return None


Spans = Sequence[tuple[str, int, int]]


def judge_floor(
    truth: npt.NDArray[np.float64],
    honest: npt.NDArray[Any] | Sequence[npt.NDArray[Any]],
    candidate: npt.NDArray[Any],
    precision: PrecisionName,
    *,
    segments: Spans = (),
    downgraded: Callable[[], Mapping[TwinName, npt.NDArray[Any]]] | None = None,
    diagnose: bool = False,
    multiple: float | None = None,
) -> Floor:
    """Measure the floor and the candidate against it.

    Parameters
    ----------
    truth, honest, candidate
        Flat outputs of one size: the float64 truth, the honest twin's (or several honest
        twins': NumPy's pairwise sums and sums in order), the candidate's. The floor is the
        largest honest error; the candidate's distance to the honest twins, the smallest.
    precision
        The check's storage precision (its rounding floor and its multiple).
    segments
        ``(name, start, stop)`` ranges judged on their own.
    downgraded
        Computes the downgraded twins' outputs by name; called only when the candidate
        fails its floor or ``diagnose`` asks for it (the check failed on another count).
    multiple
        The derived tolerance's multiple; :data:`FLOOR_MULTIPLE` of ``precision`` by default.
    """
    k = FLOOR_MULTIPLE[precision] if multiple is None else multiple
    honests = [honest] if isinstance(honest, np.ndarray) else list(honest)
    flat = np.asarray(candidate, dtype=np.float64).reshape(-1)
    # Every figure is a sum over a span, divided by the truth's energy there: each array
    # pair is subtracted once and summed per span (the whole output, then each segment).
    spans = [(0, truth.size), *((lo, hi) for _, lo, hi in segments)]
    energies = [energy(truth[lo:hi]) for lo, hi in spans]

    def against(other: npt.NDArray[Any], base: npt.NDArray[np.float64] = truth) -> list[float]:
        with np.errstate(over="ignore", invalid="ignore"):
            diff = np.asarray(other, dtype=np.float64).reshape(-1) - base
        return [
            ratio(energy(diff[lo:hi]), e, hi - lo)
            for (lo, hi), e in zip(spans, energies, strict=True)
        ]

    floors = [
        ratio(rounding_error(e, hi - lo, precision), e, hi - lo)
        for (lo, hi), e in zip(spans, energies, strict=True)
    ]
    for output in honests:
        floors = [max(a, b) for a, b in zip(floors, against(output), strict=True)]
    candidate_errors = against(flat)
    whole = Floor(
        precision,
        floors[0],
        k,
        candidate_errors[0],
        segments=tuple(
            SegmentFloor(name, f, c, k * f)
            for (name, _, _), f, c in zip(segments, floors[1:], candidate_errors[1:], strict=True)
        ),
        honest_distance=min(against(flat, np.asarray(h, dtype=np.float64))[0] for h in honests),
    )
    if downgraded is None or (whole.passed and not diagnose):
        return whole
    twins = tuple(
        TwinError(name, against(output)[0], against(flat, output.astype(np.float64))[0])
        for name, output in downgraded().items()
        if not any(np.array_equal(output, h) for h in honests)
    )
    return replace(whole, twins=twins)


def bind_floor(verdict: Verdict, floor: Floor | None) -> Verdict:
    """``verdict`` with ``floor`` attached; failed, with the floor's reason, when it fails."""
    if floor is None:
        return verdict
    reason = floor.reason()
    if reason is None:
        return replace(verdict, floor=floor)
    combined = f"{verdict.reason}; {reason}" if verdict.reason else reason
    return replace(verdict, status="failed", reason=combined, floor=floor)
