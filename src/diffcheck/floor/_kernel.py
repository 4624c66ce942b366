# mypy: ignore-errors
# (numba types these functions when it compiles them; mypy cannot follow @njit.)
"""The numba form of :func:`~diffcheck.floor.sums.span_sums` (imported lazily, once the
differ has loaded numba; compiled on first use and cached on disk).

One pass over both arrays per span, with no float64 copy of either: the NumPy form widens,
subtracts into a new array and sums it (three passes and 8 bytes an element written).
Reassociation lets the sum vectorise; no flag assumes finite values, so a NaN or an infinity
in a difference keeps the sum non-finite, as the NumPy form's does.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


@numba.njit(fastmath={"reassoc", "contract"}, cache=True)
def _squared_difference(a: Any, b: Any) -> float:
    total = 0.0
    for i in range(a.size):
        d = np.float64(a[i]) - np.float64(b[i])
        total += d * d
    return total


@numba.njit(fastmath={"reassoc", "contract"}, cache=True)
def _squares(a: Any) -> float:
    total = 0.0
    for i in range(a.size):
        x = np.float64(a[i])
        total += x * x
    return total


def span_sums(a: Any, b: Any, spans: Any) -> list[float]:
    """sum((a - b)^2) over each ``(start, stop)`` of ``spans`` (``b`` None: sum(a^2))."""
    if b is None:
        return [float(_squares(a[lo:hi])) for lo, hi in spans]
    return [float(_squared_difference(a[lo:hi], b[lo:hi])) for lo, hi in spans]
