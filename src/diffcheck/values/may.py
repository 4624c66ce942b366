"""Results the standard lets a library choose between ("libraries may return ...").

``floor_divide``'s special cases name a result and, beside it, the one Python gives
(2023.12 on): ``+infinity // 2.0`` is ``+infinity`` (**note**: libraries may return
``NaN``), ``1.0 // -infinity`` is ``-0`` (may be ``-1.0``). For finite operands "this
specification prefers floor division to match ``floor(divide(x1, x2))`` [...]; however,
array libraries may choose to more strictly follow Python behavior": the floor of the
rounded quotient or the floor of the exact one (``-1.0 // -7.7369926e-08`` in float32 is
``12924919`` by the first, ``12924918`` by Python). A quotient too small to represent
underflows to ``-0`` by the first while Python's floor is ``-1``, so ``tiny // -huge`` is
``-0`` or ``-1``. Where the two sides differ only by such choices, there is nothing to
report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["either_allowed", "floor_divide_results", "without_choices"]


def _floor_divide_choices(a: float, b: float, dtype: Any) -> list[float] | None:
    """The results the standard allows for ``a // b`` when it allows more than one."""
    if math.isnan(a) or math.isnan(b):
        return None
    if math.isinf(a) and math.isfinite(b) and b != 0:
        return [math.copysign(math.inf, a) * math.copysign(1.0, b), math.nan]
    if math.isfinite(a) and a != 0 and math.isinf(b):
        if (a > 0) == (b > 0):
            return None  # +0, no alternative
        return [-0.0, -1.0]
    if not (math.isfinite(a) and math.isfinite(b) and a != 0 and b != 0):
        return None
    with np.errstate(all="ignore"):  # the division in the result's own dtype
        preferred = float(np.floor(np.divide(dtype.type(a), dtype.type(b))))
    python = _python_floor(a, b, dtype)
    if _same(preferred, python):
        return None
    return [preferred, python]


def _python_floor(a: float, b: float, dtype: Any) -> float:
    """Python's ``a // b`` in ``dtype``: the floor of the exact quotient, the greatest value
    of ``dtype`` not above it (an infinity past the largest; ``+0`` for a floor of zero)."""
    floor = math.floor(Fraction(a) / Fraction(b))
    top = int(np.finfo(dtype).max)
    if abs(floor) > top:
        return math.copysign(math.inf, floor)
    value = dtype.type(floor)
    if int(value) > floor:  # rounded up past the floor: the next value below
        value = np.nextafter(value, dtype.type(-np.inf))
    return float(value)


def floor_divide_results(a: float, b: float, dtype: Any) -> list[float] | None:
    """Every result the standard allows for ``a // b`` of finite nonzero floats in
    ``dtype`` (one or two values); None for other operands (the special cases' business)."""
    if not (math.isfinite(a) and math.isfinite(b) and a != 0 and b != 0):
        return None
    return _floor_divide_choices(a, b, dtype) or [_python_floor(a, b, dtype)]


def _same(value: float, allowed: float) -> bool:
    if math.isnan(allowed):
        return math.isnan(value)
    return value == allowed and math.copysign(1.0, value) == math.copysign(1.0, allowed)


def either_allowed(
    function: str, args: Sequence[Any], reference: Any, candidate: Any
) -> str | None:
    """Why every difference of the two results is a choice the standard allows, or None."""
    if function.removeprefix("xp.") == "searchsorted" and len(args) == 2:
        return _searchsorted_nan(args, reference, candidate)
    if function.removeprefix("xp.") != "floor_divide" or len(args) != 2:
        return None
    try:
        a, b = (np.asarray(x) for x in args)
        ref, cand = np.asarray(reference), np.asarray(candidate)
        if ref.dtype.kind != "f" or cand.dtype.kind != "f" or ref.shape != cand.shape:
            return None
        x1, x2 = np.broadcast_to(a, ref.shape), np.broadcast_to(b, ref.shape)
    except (ValueError, TypeError):
        return None
    differs = ~((ref == cand) & (np.signbit(ref) == np.signbit(cand))) & ~(
        np.isnan(ref) & np.isnan(cand)
    )
    for index in _indices(differs):
        choices = _floor_divide_choices(float(x1[index]), float(x2[index]), ref.dtype)
        r, c = float(ref[index]), float(cand[index])
        if choices is None or not any(_same(r, v) for v in choices):
            return None
        if not any(_same(c, v) for v in choices):
            return None
    return (
        "floor_divide: the standard lets libraries return either result here "
        "(infinity or NaN for an infinite dividend, -0 or -1 for an infinite divisor, the "
        "floor of the rounded or of the exact quotient for finite operands)"
    )


def without_choices(
    function: str, args: Sequence[Any], reference: Any, candidate: Any
) -> npt.NDArray[Any] | None:
    """The candidate with the elements where both sides made a choice the standard allows
    set to the reference's, so what is left is judged alone; None if there are none.

    A ``floor_divide`` row mixing allowed choices (NaN against infinity) with a difference
    that is none would otherwise be reported and blamed at its first allowed element.
    """
    if function.removeprefix("xp.") != "floor_divide" or len(args) != 2:
        return None
    try:
        a, b = (np.asarray(x) for x in args)
        ref, cand = np.asarray(reference), np.asarray(candidate)
        if ref.dtype.kind != "f" or cand.dtype != ref.dtype or ref.shape != cand.shape:
            return None
        x1, x2 = np.broadcast_to(a, ref.shape), np.broadcast_to(b, ref.shape)
    except (ValueError, TypeError):
        return None
    patched, chosen = cand.copy(), 0
    for index in _indices(~_identical(ref, cand)):
        choices = _floor_divide_choices(float(x1[index]), float(x2[index]), ref.dtype)
        r, c = float(ref[index]), float(cand[index])
        if choices and any(_same(r, v) for v in choices) and any(_same(c, v) for v in choices):
            patched[index] = ref[index]
            chosen += 1
    return patched if chosen else None


def _indices(mask: npt.NDArray[Any]) -> list[tuple[int, ...]]:
    """The indices where ``mask`` holds, a 0-d array's ``()`` included (``np.nonzero``
    refuses 0-d arrays)."""
    shape = mask.shape
    return [
        tuple(int(i) for i in np.unravel_index(int(flat), shape)) for flat in np.flatnonzero(mask)
    ]


def _identical(ref: npt.NDArray[Any], cand: npt.NDArray[Any]) -> npt.NDArray[Any]:
    same = (ref == cand) & (np.signbit(ref) == np.signbit(cand))
    return np.asarray(same | (np.isnan(ref) & np.isnan(cand)))


def _searchsorted_nan(args: Sequence[Any], reference: Any, candidate: Any) -> str | None:
    """``searchsorted`` where a NaN decides the answer: "the sort order of NaNs and signed
    zeros is unspecified and thus implementation-dependent", so a sorted ``x1`` holding a
    NaN, or a NaN to insert, has no required index."""
    try:
        x1, x2 = (np.asarray(x) for x in args)
        ref, cand = np.asarray(reference), np.asarray(candidate)
        if x1.dtype.kind not in "fc" or ref.shape != cand.shape:
            return None
        x2 = np.broadcast_to(x2, ref.shape)
    except (ValueError, TypeError):
        return None
    why = (
        "searchsorted: the standard leaves the sort order of NaNs to the library, so the "
        "index of a NaN, or of any value among a NaN-holding x1, is implementation-dependent"
    )
    if bool(np.any(np.isnan(x1))):
        return why
    differs = ref != cand
    return why if bool(np.all(np.isnan(x2[differs]))) else None
