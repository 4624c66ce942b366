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
    "UNIT_ROUNDOFF",
    "Format",
    "energy",
    "ratio",
    "round_to",
    "round_to_tf32",
    "rounding_error",
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


#: Unit roundoff (half the spacing at 1) of each storage format.
UNIT_ROUNDOFF: Final[dict[str, float]] = {"f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
#: The smallest positive (subnormal) value of each storage format: the spacing at zero.
_TINIEST: Final[dict[str, float]] = {"f32": 2.0**-149, "f16": 2.0**-24, "bf16": 2.0**-133}


def rounding_error(reference_energy: float, count: int, precision: PrecisionName) -> float:
    """The squared error correct rounding to ``precision`` makes on ``count`` values of this
    energy, on average: ``u^2 / 3`` relative per value (a relative error uniform within one
    unit roundoff ``u``), plus half the spacing at zero per value, so zeros count too."""
    u = UNIT_ROUNDOFF[precision]
    return u * u / 3.0 * reference_energy + count * (_TINIEST[precision] / 2.0) ** 2


def energy(values: npt.NDArray[np.float64]) -> float:
    """The sum of squares of ``values`` (einsum's vector loop; infinite when it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.einsum("i,i->", values, values))


def ratio(error: float, reference_energy: float, count: int) -> float:
    """``error / reference_energy``, or ``error / count`` (the mean squared error) when the
    reference's mean square is under 1e-30: the differ's NMSE from its two sums."""
    if count == 0:
        return 0.0
    if not (np.isfinite(error) and np.isfinite(reference_energy)):
        return float("inf")
    if reference_energy / count < _ABSOLUTE_FLOOR:
        return error / count
    return error / reference_energy
