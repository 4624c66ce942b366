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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from .._numbers import short_float
from ..differ import Verdict
from ..precision import PrecisionName, TwinName
from .rounding import ratio, rounding_error
from .sums import span_sums
from .twins import HONEST_TWIN, Twin, at_matmul, twin_named

__all__ = [
    "FLOOR_MULTIPLE",
    "Floor",
    "HonestOrder",
    "NoFloor",
    "SegmentFloor",
    "TwinError",
    "bind_floor",
    "judge_floor",
    "match_twin",
    "twin_tolerance",
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

# A twin models a candidate within this share of the twin's own error (NMSE against the
# truth), whatever the floor: see twin_tolerance.
_MODEL_SHARE: Final = 1e-2

MatchKind = Literal["matches it within the floor", "same size"]
HonestOrder = Literal["pairwise", "in order"]


@dataclass(frozen=True)
class TwinError:
    """A twin's NMSE against the truth, and the candidate's NMSE against the twin."""

    name: TwinName
    nmse: float
    distance: float
    #: The twin's own spread: the largest NMSE (against the truth's energy) between its
    #: outputs under honest accumulation orders (float32, float64, in order).
    spread: float = 0.0
    #: For a twin of one matmul call: which (1-based) of how many the computation makes.
    matmul: int | None = None
    matmuls: int | None = None

    @property
    def label(self) -> str:
        """``tf32 operands``, or ``tf32 operands at matmul 2 of 2 only``."""
        return self.name + at_matmul(self.matmul, self.matmuls)

    def describe(self) -> str:
        """A phrase for a verdict: ``consistent with <this>``."""
        return replace(twin_named(self.name), matmul=self.matmul, matmuls=self.matmuls).describe()

    def tolerance(self, derived_tolerance: float, multiple: float) -> float:
        """How near the candidate must be to model it: see :func:`twin_tolerance`."""
        return twin_tolerance(derived_tolerance, multiple, self.spread, self.nmse)


def twin_tolerance(derived_tolerance: float, multiple: float, spread: float, nmse: float) -> float:
    """How near a candidate's output must be to a twin's for the twin to model it.

    The check's derived tolerance, or the floor's multiple of the twin's own spread where
    that is larger: two honest TF32 implementations differ by more than two float32 ones,
    since a sum-order difference that flips one TF32 rounding of an operand is a whole
    TF32 step in the product that reads it. The spread widens it at most to a quarter of the
    twin's own error: a twin whose honest orders disagree as much as it errs (bfloat16
    arithmetic on small rows) is told apart from the truth only by the size of its error.

    And always to :data:`_MODEL_SHARE` of the twin's error: a candidate that far from the
    twin reproduces its rounding pattern (an unrelated error of the same size lies about
    twice the twin's error away), though its own accumulation differs from any honest
    order of the twin. Measured on an H100: cuBLAS's TF32 gemm at k = 4096 accumulates in
    its tensor cores 1.4e-3 of the TF32 twin's error away from it, ten times the float32
    floor's tolerance.
    """
    return max(derived_tolerance, min(multiple * spread, nmse / _SIZE_FACTOR), nmse * _MODEL_SHARE)


@dataclass(frozen=True)
class NoFloor:
    """Why a check's floor could not be measured; its verdict rests on the tolerance alone."""

    reason: str


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
    #: The honest summation orders the floor was taken over: pairwise (NumPy's), and in
    #: order where the check reduces and the pairwise floor alone failed it.
    honest_orders: tuple[HonestOrder, ...] = ("pairwise",)

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
        return match_twin(self.candidate_nmse, self.twins, self.derived_tolerance, self.multiple)

    @property
    def models(self) -> tuple[TwinName, ...]:
        """The twins that model the candidate, the honest one first: their outputs are within
        the derived tolerance of each other (the candidate computes what the twin computes,
        up to an honest implementation's own spread at this precision, or the twin's)."""
        honest = (self.honest,) if self.honest_distance < self.derived_tolerance else ()
        return honest + tuple(
            t.name
            for t in self.twins
            if t.distance < t.tolerance(self.derived_tolerance, self.multiple)
        )

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
                + ", ".join(f"{t.label} {short_float(t.nmse)}" for t in self.twins)
                + ")"
                if self.twins
                else "no downgraded twin was run"
            )
        twin, kind = found
        others = [
            t.label
            for t in self.twins
            if t is not twin and t.distance < t.tolerance(self.derived_tolerance, self.multiple)
        ]
        also = f", as do {', '.join(others)}" if others else ""
        return (
            f"consistent with {twin.describe()} ({kind}{also}): twin NMSE {short_float(twin.nmse)}"
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
    candidate_nmse: float, twins: Sequence[TwinError], tolerance: float, multiple: float
) -> tuple[TwinError, MatchKind] | None:
    """The first twin (in :data:`~diffcheck.floor.twins.TWINS` order, the most specific
    first) whose output the candidate's is within ``tolerance`` of (or ``multiple`` times the
    twin's own spread); else the twin whose error is of the candidate's size, within a
    factor of four."""
    matching = [t for t in twins if t.distance < t.tolerance(tolerance, multiple)]
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
    honest: npt.NDArray[Any],
    candidate: npt.NDArray[Any],
    precision: PrecisionName,
    *,
    segments: Spans = (),
    in_order: Callable[[], npt.NDArray[Any]] | None = None,
    run_in_order: bool | None = None,
    downgraded: Callable[[], Sequence[tuple[Twin, Sequence[npt.NDArray[np.float64]]]]]
    | None = None,
    diagnose: bool = False,
    multiple: float | None = None,
) -> Floor:
    """Measure the floor and the candidate against it.

    Parameters
    ----------
    truth, honest, candidate
        Flat outputs of one size: the float64 truth, the honest twin's with NumPy's
        pairwise sums, the candidate's.
    precision
        The check's storage precision (its rounding floor and its multiple).
    segments
        ``(name, start, stop)`` ranges judged on their own.
    in_order
        Computes the honest twin with every sum in order (None for a check that does not
        reduce). The floor is the largest honest error, and the candidate's distance to the
        honest twins the smallest; a larger floor can only pass more, so this twin runs
        only when the pairwise floor fails the candidate, unless ``run_in_order`` says
        whether it runs (replay follows the report, whose floor says which ran).
    downgraded
        Computes the downgraded twins' outputs, each as one or more honest
        implementations of the twin (the first is the twin's error; the candidate's distance
        is to the nearest; their spread widens what models it); called only when the
        candidate fails its floor or ``diagnose`` asks for it (the check failed on another
        count).
    multiple
        The derived tolerance's multiple; :data:`FLOOR_MULTIPLE` of ``precision`` by default.
    """
    k = FLOOR_MULTIPLE[precision] if multiple is None else multiple
    flat = np.ascontiguousarray(candidate).reshape(-1)
    # Every figure is a sum over a span, divided by the truth's energy there: each array
    # pair is summed once per span (the whole output, then each segment), in its own dtype.
    spans = [(0, truth.size), *((lo, hi) for _, lo, hi in segments)]
    energies = span_sums(truth, None, spans)

    def against(
        other: npt.NDArray[Any], base: npt.NDArray[Any] = truth, *, whole: bool = False
    ) -> list[float]:
        chosen = spans[:1] if whole else spans
        return [
            ratio(error, e, hi - lo)
            for (lo, hi), e, error in zip(
                chosen, energies[: len(chosen)], span_sums(other, base, chosen), strict=True
            )
        ]

    floors = [
        ratio(rounding_error(e, hi - lo, precision), e, hi - lo)
        for (lo, hi), e in zip(spans, energies, strict=True)
    ]
    candidate_errors = against(flat)

    def measured(honests: list[npt.NDArray[Any]], orders: tuple[HonestOrder, ...]) -> Floor:
        worst = floors
        for output in honests:
            worst = [max(a, b) for a, b in zip(worst, against(output), strict=True)]
        return Floor(
            precision,
            worst[0],
            k,
            candidate_errors[0],
            segments=tuple(
                SegmentFloor(name, f, c, k * f)
                for (name, _, _), f, c in zip(
                    segments, worst[1:], candidate_errors[1:], strict=True
                )
            ),
            honest_distance=min(against(flat, h, whole=True)[0] for h in honests),
            honest_orders=orders,
        )

    honests = [np.ascontiguousarray(honest).reshape(-1)]
    whole = measured(honests, ("pairwise",))
    if in_order is not None and (not whole.passed if run_in_order is None else run_in_order):
        honests.append(np.ascontiguousarray(in_order()).reshape(-1))
        whole = measured(honests, ("pairwise", "in order"))
    if downgraded is None or (whole.passed and not diagnose):
        return whole
    twins = tuple(
        TwinError(
            twin.name,
            against(outputs[0], whole=True)[0],
            min(against(flat, output, whole=True)[0] for output in outputs),
            max(
                (against(output, outputs[0], whole=True)[0] for output in outputs[1:]),
                default=0.0,
            ),
            twin.matmul,
            twin.matmuls,
        )
        for twin, outputs in downgraded()
        if not any(np.array_equal(outputs[0], h) for h in honests)
    )
    return replace(whole, twins=twins)


def bind_floor(verdict: Verdict, floor: Floor | NoFloor | None) -> Verdict:
    """``verdict`` with ``floor`` attached; failed, with the floor's reason, when it fails;
    with the note of why, where it could not be measured."""
    if floor is None:
        return verdict
    if isinstance(floor, NoFloor):
        return replace(verdict, floor_note=floor.reason)
    reason = floor.reason()
    if reason is None:
        return replace(verdict, floor=floor)
    combined = f"{verdict.reason}; {reason}" if verdict.reason else reason
    return replace(verdict, status="failed", reason=combined, floor=floor)
