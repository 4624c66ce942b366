"""The divergence check a reproduction script carries: NumPy only, no diffcheck import.

:mod:`._repro` copies this module's source into every script it writes and decides with the
very same functions which reduced program still diverges, so the script and the reduction
cannot disagree on what diverging means.
"""

from typing import Any

import numpy as np

_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def ulp_gap(expected: Any, got: Any) -> Any:
    """Elementwise distance in units in the last place of the float dtype both share."""
    if expected.dtype.kind == "c":  # the larger of the real and the imaginary parts'
        return np.maximum(ulp_gap(expected.real, got.real), ulp_gap(expected.imag, got.imag))
    width = expected.dtype.itemsize
    ints = _INTS[width]
    order = []
    for array in (expected, got):
        bits = np.ascontiguousarray(array).view(ints).astype(np.int64)
        # Negative floats count down from the sign bit: one integer line for all floats.
        order.append(np.where(bits < 0, np.int64(-(2 ** (8 * width - 1))) - bits, bits))
    a, b = order
    opposite = (a ^ b) < 0
    # Of one sign the integers cannot overflow; of opposite signs the magnitudes add (in
    # float64: two float64 magnitudes may pass int64's range).
    same = np.abs(np.where(opposite, 0, a - b)).astype(np.float64)
    return np.where(opposite, np.abs(a).astype(np.float64) + np.abs(b).astype(np.float64), same)


def beyond(
    expected: Any, got: Any, kind: str, ulps: float, nmse: float, atol: float | None
) -> tuple[bool, str]:
    """``(True, why)`` when ``got`` breaks the bound against ``expected``, else ``(False, why)``.

    ``kind`` is ``exact``, ``ulp``, ``reduction`` (within ``ulps`` or within ``atol``) or
    ``nmse`` (strictly below ``nmse``). NaN must stand where the reference has NaN.
    """
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.shape != got.shape:
        return True, f"shape {got.shape}, the reference's {expected.shape}"
    if expected.dtype != got.dtype:
        return True, f"dtype {got.dtype}, the reference's {expected.dtype}"
    if expected.size == 0:
        return False, "no elements"
    if kind == "exact" or expected.dtype.kind not in "fc":
        differ = int(np.count_nonzero(~((expected == got) | (expected != expected) & (got != got))))
        return differ > 0, f"{differ} of {expected.size} elements differ (exact)"
    nan_e, nan_g = np.isnan(expected), np.isnan(got)
    if (nan_e != nan_g).any():
        return True, f"NaN at {int((nan_e != nan_g).sum())} places where the other side has none"
    if kind == "nmse":
        wide_e, wide_g = expected.astype(np.complex128), got.astype(np.complex128)
        finite = ~nan_e
        energy = float(np.mean(np.abs(wide_e[finite]) ** 2))
        error = float(np.mean(np.abs(wide_e[finite] - wide_g[finite]) ** 2))
        measured = error / energy if energy > 1e-30 else error
        return measured >= nmse, f"NMSE {measured:.3g} (bound: below {nmse:.3g})"
    gaps = ulp_gap(
        np.where(nan_e, 0, expected).astype(expected.dtype),
        np.where(nan_g, 0, got).astype(got.dtype),
    )
    over = gaps > ulps
    if kind == "reduction" and atol is not None:
        over &= np.abs(expected.astype(np.float64) - got.astype(np.float64)) > atol
    worst = int(gaps.max())
    where = np.unravel_index(int(np.argmax(gaps)), gaps.shape) if gaps.ndim else ()
    return bool(over.any()), (
        f"{int(over.sum())} of {expected.size} elements beyond {ulps:g} ULP; worst {worst} ULP "
        f"at {tuple(int(i) for i in where)}: reference {expected[where]!r}, candidate {got[where]!r}"
    )
