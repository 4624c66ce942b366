"""ULP distances and exact value text in a float's own storage dtype.

A float is mapped to an integer whose order is the float's order and whose steps are one
representable value apart (+0.0 and -0.0 both map to 0), so the distance between two values
is the difference of their integers. bfloat16 arrives widened to float32 (exactly: NumPy has
no bfloat16 and none is installed), and its integers are the upper 16 bits of float32's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["EPSILON", "ordered", "round_to_bfloat16", "ulp_distance", "value_text"]

#: Machine epsilon (spacing at 1.0) of each real floating dtype.
EPSILON = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
_VIEW = {"float16": np.int16, "float32": np.int32, "float64": np.int64}


def ordered(values: npt.NDArray[Any], dtype: str) -> npt.NDArray[np.signedinteger[Any]]:
    """Integers whose differences count ULPs of ``dtype`` (NaN maps somewhere meaningless).

    They stay in the float's own width (int16/int32/int64): sign and magnitude become a
    two's complement value, and both zeros become 0.
    """
    if dtype == "bfloat16":
        bits = np.ascontiguousarray(values, dtype=np.float32).view(np.int32) >> 16
        mask = 0x7FFF
    else:
        storage = np.dtype(dtype)
        bits = np.ascontiguousarray(values, dtype=storage).view(_VIEW[dtype])
        mask = (1 << (8 * storage.itemsize - 1)) - 1
    magnitude = bits & bits.dtype.type(mask)
    return np.where(bits < 0, -magnitude, magnitude)


def ulp_distance(
    reference: npt.NDArray[Any], candidate: npt.NDArray[Any], dtype: str
) -> npt.NDArray[np.float64]:
    """Elementwise ULP distance in ``dtype``, exact up to 2**53 (larger ones are huge anyway).

    Narrow floats subtract in int64, which cannot overflow. float64 differences wrap only
    where the signs differ; those add magnitudes in float64 instead.
    """
    if dtype != "float64":
        return _narrow_distance(reference, candidate, dtype)
    a = ordered(reference, dtype)
    b = ordered(candidate, dtype)
    distance = np.abs(a - b).astype(np.float64)
    opposite = (a ^ b) < 0
    if opposite.any():
        distance[opposite] = np.abs(a[opposite].astype(np.float64)) + np.abs(
            b[opposite].astype(np.float64)
        )
    return distance


def _narrow_distance(
    reference: npt.NDArray[Any], candidate: npt.NDArray[Any], dtype: str
) -> npt.NDArray[np.float64]:
    """:func:`ulp_distance` for float16, bfloat16 and float32, in about half the passes.

    Two floats of one sign are as many steps apart as their bit patterns (as signed
    integers: the sign bit cancels); of opposite signs, their magnitudes add. That is the
    difference of :func:`ordered`'s integers, without making them.
    """
    a, b = _bits(reference, dtype), _bits(candidate, dtype)
    distance: npt.NDArray[np.int64] = np.subtract(a, b, dtype=np.int64)
    np.abs(distance, out=distance)
    opposite = (a ^ b) < 0
    if opposite.any():
        mask = a.dtype.type(0x7FFF if dtype in ("float16", "bfloat16") else 0x7FFFFFFF)
        distance[opposite] = (a[opposite] & mask).astype(np.int64) + (b[opposite] & mask)
    return distance.astype(np.float64)


def _bits(values: npt.NDArray[Any], dtype: str) -> npt.NDArray[np.signedinteger[Any]]:
    """The bit patterns as signed integers (bfloat16's upper 16 bits, sign extended)."""
    if dtype == "bfloat16":
        return np.ascontiguousarray(values, dtype=np.float32).view(np.int32) >> 16
    return np.ascontiguousarray(values, dtype=np.dtype(dtype)).view(_VIEW[dtype])


def exact_ulp(reference: float, candidate: float, dtype: str) -> int | None:
    """The exact ULP distance of two scalars in ``dtype`` (None when either is NaN)."""
    if math.isnan(reference) or math.isnan(candidate):
        return None
    pair = np.array([reference, candidate], dtype=np.float64)
    a, b = (int(v) for v in ordered(pair.astype(_host(dtype)), dtype))
    return abs(a - b)


def _host(dtype: str) -> Any:
    return np.float32 if dtype == "bfloat16" else np.dtype(dtype)


def value_text(value: Any, dtype: str) -> str:
    """Exact text of one element: repr for bool/int, hex and decimal for floats."""
    if isinstance(value, np.bool_ | bool):
        return repr(bool(value))
    if isinstance(value, np.integer | int):
        return repr(int(value))
    if isinstance(value, np.complexfloating | complex):
        part = dtype.replace("complex128", "float64").replace("complex64", "float32")
        return f"({value_text(value.real, part)}, {value_text(value.imag, part)})"
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return repr(number)
    host = np.dtype(_host(dtype)).type
    return f"{number.hex()} ({host(number)})"


def round_to_bfloat16(values: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """The nearest bfloat16 values (ties to even), held exactly as float32; NaN stays NaN."""
    shape = np.shape(values)  # ascontiguousarray makes a 0-d array 1-d: keep its own shape
    wide = np.ascontiguousarray(values, dtype=np.float32)
    bits = wide.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(wide), wide, out).astype(np.float32).reshape(shape)
