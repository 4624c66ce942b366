"""The precision floor in a report (schema v4): what the check's precision can do, measured."""

from __future__ import annotations

from pydantic import Field

from ..floor import Floor, HonestOrder, twin_tolerance
from ..floor.twins import at_matmul
from ..precision import TwinName
from ._fields import DERIVED, JsonFloat, Strict

__all__ = ["FloorRecord", "FloorSegmentRecord", "TwinRecord"]

_RECOMPUTED = (
    DERIVED + "Replay regenerates the inputs, recomputes the float64 truth and the twins with "
    "NumPy, and must get the same within a summation order's spread. "
)


class TwinRecord(Strict):
    """One twin: the op computed at a known precision (docs/precision-floor.md)."""

    name: TwinName = Field(description=DERIVED + "Which twin (diffcheck.precision.TwinName).")
    nmse: JsonFloat = Field(description=_RECOMPUTED + "The twin's NMSE against the truth.")
    distance: JsonFloat = Field(
        description=_RECOMPUTED + "The candidate's NMSE against the twin's output (the "
        "nearest of its honest accumulation orders)."
    )
    spread: JsonFloat = Field(
        description=_RECOMPUTED + "The twin's own spread: the largest NMSE between its "
        "outputs under honest accumulation orders (float32, float64, in order). The twin "
        "models the candidate when distance < max(derived_tolerance, min(multiple x spread, "
        "nmse / 4), nmse / 100)."
    )
    matmul: int | None = Field(
        default=None,
        description=DERIVED + "For the twin run at one matmul call alone: which call "
        "(1-based, in the order the computation makes them); null for a twin of every call.",
    )
    matmuls: int | None = Field(
        default=None,
        description=DERIVED + "With matmul: how many matmul calls the computation makes.",
    )

    @property
    def label(self) -> str:
        """``tf32 operands``, or ``tf32 operands at matmul 2 of 2 only``."""
        return self.name + at_matmul(self.matmul, self.matmuls)


class FloorSegmentRecord(Strict):
    """One segment's floor and the candidate's NMSE against the truth there."""

    name: str = Field(description=DERIVED + "Segment wire name, from the op.")
    floor_nmse: JsonFloat = Field(description=_RECOMPUTED + "The segment's floor.")
    candidate_nmse: JsonFloat = Field(
        description=_RECOMPUTED + "The candidate's NMSE against the truth in the segment."
    )
    derived_tolerance: JsonFloat = Field(
        description=DERIVED + "multiple x floor_nmse: the segment passes below it."
    )


class FloorRecord(Strict):
    """The check's precision floor, the candidate's error against the truth, and the twins.

    The verdict passes only when ``candidate_nmse`` is below ``derived_tolerance`` (the
    whole output and every segment), besides the explicit tolerance.
    """

    honest_twin: TwinName = Field(
        description=DERIVED + "The honest twin of config.precision, whose error is the floor."
    )
    floor_nmse: JsonFloat = Field(
        description=_RECOMPUTED + "max(the honest twin's NMSE against the truth with NumPy's "
        "pairwise sums, the same with every sum in order where honest_orders has it, the "
        "NMSE correct rounding to config.precision makes on average: u^2/3)."
    )
    honest_orders: list[HonestOrder] = Field(
        description=DERIVED + "The honest summation orders the floor was taken over: "
        "'pairwise' always; 'in order' too for an op that reduces whose candidate the "
        "pairwise floor alone fails (a larger floor only passes more). Replay runs the "
        "orders listed and derives the same list."
    )
    multiple: JsonFloat = Field(
        description=DERIVED + "The measured multiple of the floor an honest candidate stays "
        "under (diffcheck.floor.FLOOR_MULTIPLE of config.precision)."
    )
    derived_tolerance: JsonFloat = Field(description=DERIVED + "multiple x floor_nmse.")
    candidate_nmse: JsonFloat = Field(
        description=_RECOMPUTED + "The candidate's NMSE against the float64 truth."
    )
    honest_distance: JsonFloat = Field(
        description=_RECOMPUTED + "The candidate's NMSE against the nearer honest twin's "
        "output (pairwise or in-order sums)."
    )
    status: str = Field(
        description=DERIVED + "passed when candidate_nmse is below derived_tolerance here and "
        "in every segment; failed otherwise (which fails the check)."
    )
    twins: list[TwinRecord] = Field(
        description=_RECOMPUTED + "The downgraded twins, run when the check failed (empty on "
        "a pass): TF32/float16/bfloat16 matmul operands, half-precision storage or arithmetic."
    )
    match: TwinName | None = Field(
        description=DERIVED + "The twin the candidate's error matches; null when none does."
    )
    segments: list[FloorSegmentRecord] = Field(
        description=DERIVED + "Each segment's floor, as the op's segments are judged."
    )

    @property
    def models(self) -> tuple[str, ...]:
        """The twins whose output the candidate's is within the derived tolerance of, the
        honest one first."""
        honest = (self.honest_twin,) if self.honest_distance < self.derived_tolerance else ()
        return honest + tuple(
            t.name
            for t in self.twins
            if t.distance < twin_tolerance(self.derived_tolerance, self.multiple, t.spread, t.nmse)
        )

    @classmethod
    def of(cls, floor: Floor | None) -> FloorRecord | None:
        """The record of a measured floor (None stays None)."""
        if floor is None:
            return None
        found = floor.match
        return cls(
            honest_twin=floor.honest,
            floor_nmse=floor.floor_nmse,
            multiple=floor.multiple,
            derived_tolerance=floor.derived_tolerance,
            candidate_nmse=floor.candidate_nmse,
            honest_distance=floor.honest_distance,
            honest_orders=list(floor.honest_orders),
            status="passed" if floor.passed else "failed",
            twins=[
                TwinRecord(
                    name=t.name,
                    nmse=t.nmse,
                    distance=t.distance,
                    spread=t.spread,
                    matmul=t.matmul,
                    matmuls=t.matmuls,
                )
                for t in floor.twins
            ],
            match=None if found is None else found[0].name,
            segments=[
                FloorSegmentRecord(
                    name=s.name,
                    floor_nmse=s.floor_nmse,
                    candidate_nmse=s.candidate_nmse,
                    derived_tolerance=s.derived_tolerance,
                )
                for s in floor.segments
            ],
        )
