"""Rounding host values to the formats an honest or a downgraded implementation stores in.

Every format is reached from float32 or float64 host values by round-to-nearest-even: float16
through NumPy's own cast, bfloat16 through ml_dtypes' (the dtype JAX and TensorFlow use), and
TF32 (float32's 8-bit exponent with float16's 10-bit significand, what NVIDIA tensor cores
read float32 operands as) by clearing the low 13 significand bits of a float32 with rounding.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ..precision import PrecisionName

__all__ = [
    "FORMAT_DTYPES",
    "Format",
    "half_ulp_nmse",
    "nmse",
    "round_to",
    "round_to_tf32",
]

#: A storage or operand format: the check's precisions, TF32 rounded to nearest, and TF32
#: truncated (the low 13 bits dropped, as a tensor core reads a float32 not converted first).
Format = Literal["f32", "f16", "bf16", "tf32", "tf32t"]

#: The NumPy dtype each storage format is held in (TF32 lives in float32 containers).
FORMAT_DTYPES: Final[dict[str, Any]] = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "tf32": np.dtype(np.float32),
    "tf32t": np.dtype(np.float32),
}

# TF32 keeps 10 of float32's 23 significand bits: the low 13 go.
_TF32_DROPPED: Final = 13
#: Below this reference energy the NMSE denominator is meaningless (the differ's rule).
_ABSOLUTE_FLOOR: Final = 1e-30


def round_to_tf32(values: npt.ArrayLike, *, truncate: bool = False) -> npt.NDArray[np.float32]:
    """The nearest TF32 values (ties to even), or the ones toward zero with ``truncate``,
    held as float32; NaN and infinities kept."""
    wide = np.ascontiguousarray(values, dtype=np.float32)
    bits = wide.view(np.uint32).astype(np.uint64)
    half = 0 if truncate else (1 << (_TF32_DROPPED - 1)) - 1
    odd = 0 if truncate else (bits >> _TF32_DROPPED) & 1
    mask = np.uint64(~((1 << _TF32_DROPPED) - 1) & 0xFFFFFFFF)
    rounded = ((bits + half + odd) & mask).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(wide), rounded, wide).astype(np.float32, copy=False)


def round_to(values: Any, fmt: Format) -> npt.NDArray[Any]:
    """``values`` rounded to ``fmt``, in that format's NumPy dtype (TF32 in float32)."""
    if fmt in ("tf32", "tf32t"):
        return round_to_tf32(values, truncate=fmt == "tf32t")
    with np.errstate(over="ignore"):  # a value past the format's range becomes inf, as stored
        return np.asarray(values).astype(FORMAT_DTYPES[fmt])


def nmse(actual: npt.NDArray[Any], truth: npt.NDArray[np.float64]) -> float:
    """The differ's NMSE of ``actual`` against ``truth``, summed in float64.

    ``sum((actual - truth)^2) / sum(truth^2)``, or the mean squared error when the truth's
    mean square is under 1e-30 (the seed's absolute-MSE fallback). Infinite when either side
    holds a non-finite value or the sums overflow.
    """
    if truth.size == 0:
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.asarray(actual, dtype=np.float64).reshape(-1) - truth.reshape(-1)
        error = float(np.dot(diff, diff))
        energy = float(np.dot(truth.reshape(-1), truth.reshape(-1)))
    if not (np.isfinite(error) and np.isfinite(energy)):
        return float("inf")
    if energy / truth.size < _ABSOLUTE_FLOOR:
        return error / truth.size
    return error / energy


def half_ulp_nmse(truth: npt.NDArray[np.float64], precision: PrecisionName) -> float:
    """The NMSE of an error of half a unit in the last place of ``precision`` everywhere.

    What a correctly rounded result may err by at most: the smallest floor any
    implementation storing in ``precision`` can promise, whatever its arithmetic. Values
    past the format's range count no allowance (they fail as non-finite anyway).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        spacing = np.spacing(np.abs(round_to(truth, precision))).astype(np.float64)
    half = np.where(np.isfinite(spacing), spacing / 2.0, 0.0)
    return nmse(truth + half, truth)
