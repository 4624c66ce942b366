"""The precision floor: what an honest implementation at a check's precision can do.

A tolerance is only strict if it knows the precision. For every check the floor computes a
float64 truth from the inputs as the check's precision stores them, runs the honest twin of
that precision (float32; float16 or bfloat16 storage with float32 arithmetic) and measures
its NMSE against the truth. The candidate passes only when its own NMSE against the truth is
below a measured multiple of that floor (:data:`FLOOR_MULTIPLE`), besides the explicit
``max_nmse`` of the seed's rule. A failure is compared with downgraded twins (TF32,
float16 or bfloat16 matmul operands; float16 or bfloat16 arithmetic) and names the one its
error matches; a known divergence is verified against the twin it declares.

``rounding``
    Rounding host values to a format; the sums an NMSE is made of, and correct rounding's
    error.
``twins``
    The twins, and an op's truth and twin outputs.
``measure``
    The floor, the candidate against it, and the diagnosis.
``ops``
    All of it for a registered op's check.
``function``
    All of it for ``compare(fn, ...)``: a function of arrays run through NumPy.
"""

from __future__ import annotations

from .function import FunctionTruth, function_floor, function_truth
from .measure import (
    FLOOR_MULTIPLE,
    Floor,
    HonestOrder,
    NoFloor,
    SegmentFloor,
    TwinError,
    bind_floor,
    judge_floor,
    match_twin,
    twin_tolerance,
)
from .ops import op_floor
from .rounding import energy, ratio, round_to, round_to_tf32, rounding_error
from .twins import HONEST_TWIN, TWINS, Twin, downgrades, op_truth, run_op_twin, twin_named

__all__ = [
    "FLOOR_MULTIPLE",
    "HONEST_TWIN",
    "TWINS",
    "Floor",
    "FunctionTruth",
    "HonestOrder",
    "NoFloor",
    "SegmentFloor",
    "Twin",
    "TwinError",
    "bind_floor",
    "downgrades",
    "energy",
    "function_floor",
    "function_truth",
    "judge_floor",
    "match_twin",
    "op_floor",
    "op_truth",
    "ratio",
    "round_to",
    "round_to_tf32",
    "rounding_error",
    "run_op_twin",
    "twin_named",
    "twin_tolerance",
]
