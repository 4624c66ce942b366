"""Results the standard lets a library choose between ("libraries may return ...").

``floor_divide``'s special cases name a result and, beside it, the one Python gives
(2023.12 on): ``+infinity // 2.0`` is ``+infinity`` (**note**: libraries may return
``NaN``), ``1.0 // -infinity`` is ``-0`` (may be ``-1.0``). A quotient too small to
represent underflows "to a zero of appropriate mathematical sign" while the floor of the
exact quotient is ``-1``, so ``tiny // -huge`` is ``-0`` or ``-1``. Where the two sides
differ only by such choices, there is nothing to report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["either_allowed"]


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
    finite = math.isfinite(a) and math.isfinite(b) and a != 0 and b != 0
    if finite and (a < 0) != (b < 0) and abs(a) < abs(b):
        with np.errstate(all="ignore"):  # the division in the result's own dtype
            rounded = float(np.divide(dtype.type(a), dtype.type(b)))
        if rounded == 0:  # the division underflows: -0 by rounding, -1 by the floor
            return [-0.0, -1.0]
    return None


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
    for index in zip(*np.nonzero(differs), strict=True):
        choices = _floor_divide_choices(float(x1[index]), float(x2[index]), ref.dtype)
        r, c = float(ref[index]), float(cand[index])
        if choices is None or not any(_same(r, v) for v in choices):
            return None
        if not any(_same(c, v) for v in choices):
            return None
    return (
        "floor_divide: the standard lets libraries return either result here "
        "(infinity or NaN for an infinite dividend, -0 or -1 for an infinite divisor or an "
        "underflowing quotient)"
    )


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
