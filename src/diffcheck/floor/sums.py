"""Sums of squares over spans, the floor's figures: one array's, or two arrays' difference.

At 10^6 elements a floor sums four to six such pairs; the NumPy form widens each array to
float64, subtracts into a new array and sums it, which made those sums a third of
``compare``'s time with the floor. Where the differ has loaded its numba kernel (every input
of :data:`~diffcheck.differ._measure.KERNEL_MIN` elements or more, and any process that has
spent the kernel's load cost) the floor's own kernel (:mod:`._kernel`) sums in one pass with
no copy; elsewhere, and for arrays it does not take, NumPy does. The two add in different
orders, so their figures may differ in the last bits; replay's checks of the floor allow
far more (``report/floor_check.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["span_sums"]

_DIFFER_KERNEL: Final = "diffcheck.differ._kernel"
_TAKEN: Final = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_failure: str | None = None


def _numpy(
    a: npt.NDArray[Any], b: npt.NDArray[Any] | None, spans: Sequence[tuple[int, int]]
) -> list[float]:
    sums = []
    with np.errstate(over="ignore", invalid="ignore"):
        for lo, hi in spans:
            part = (
                np.asarray(a[lo:hi], dtype=np.float64)
                if b is None
                else np.subtract(a[lo:hi], b[lo:hi], dtype=np.float64)
            )
            sums.append(float(np.einsum("i,i->", part, part)))
    return sums


def span_sums(
    a: npt.NDArray[Any], b: npt.NDArray[Any] | None, spans: Sequence[tuple[int, int]]
) -> list[float]:
    """``sum((a - b)^2)`` in float64 over each ``(start, stop)`` of ``spans`` of the flat
    arrays ``a`` and ``b`` (``sum(a^2)`` when ``b`` is None); infinite where it overflows,
    NaN where a difference is."""
    global _failure
    arrays = (a,) if b is None else (a, b)
    if (
        _failure is None
        and _DIFFER_KERNEL in sys.modules
        and all(x.dtype in _TAKEN and x.flags.c_contiguous for x in arrays)
    ):
        try:
            from . import _kernel

            return _kernel.span_sums(a, b, spans)
        except Exception as error:  # numba broken here: NumPy gives the same sums
            _failure = f"{type(error).__name__}: {error}"
    return _numpy(a, b, spans)
