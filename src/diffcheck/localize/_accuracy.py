"""Published accuracy of elementwise math functions, and the bounds of reductions and scans.

**Elementwise functions.** Two libraries that each keep their published maximum error may
differ by the sum of the two. The allowance for a function whose result is float32 or
float64 is the CUDA Math API's maximum error plus glibc's measured maximum, and never less
than the values model's 2 ULP (two results each within 1 ULP of the true value):

- CUDA C Programming Guide, appendix "Mathematical Functions", tables "Single-Precision" and
  "Double-Precision Mathematical Standard Library Functions with Maximum ULP Error" (the
  difference from the correctly rounded result, full range), as tabulated in intel/llvm
  ``sycl/doc/cuda/cuda-vs-opencl-math-builtin-precisions.md``;
- glibc ``sysdeps/x86_64/fpu/libm-test-ulps`` (round-to-nearest entries; a function with no
  entry for a type showed no error beyond correct rounding: 0).

Each verdict's bound text names both figures. float16 and bfloat16 results keep the model's
bound (libraries compute them in float32 and round).

**Reductions.** A sum's rounding error is proportional to the sum of its terms' magnitudes,
not to its result, which cancellation can make arbitrarily small: ``sum``, ``mean``,
``var`` and ``std`` take the values model's absolute allowance from the reference's inputs
(:func:`~diffcheck.values.elements.reduction_magnitude`, the two-pass variance bound).

**Scans.** Element ``i`` of ``cumulative_sum`` (``cumulative_prod``) is a sum (product) of
an ``L = i + 1``-term prefix: each side is within ``(L - 1) u P`` of it, where ``u`` is the
unit roundoff and ``P`` the prefix's sum of magnitudes (product of magnitudes), so the two
sides may differ by ``2 L u P`` and the rounding of each result (:func:`scan_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..values.bounds import bound_for
from ..values.call import _spread_atol
from ..values.elements import reduction_magnitude
from ..values.model import Bound
from ..values.ulp import EPSILON

__all__ = ["SCANS", "published_bound", "reduction_bounds", "scan_check"]

#: CUDA Math API maximum ULP error, (float, double).
CUDA_ULPS: dict[str, tuple[int, int]] = {
    "exp": (2, 1),
    "expm1": (1, 1),
    "log": (1, 1),
    "log1p": (1, 1),
    "log2": (1, 1),
    "log10": (2, 1),
    "sin": (2, 1),
    "cos": (2, 1),
    "tan": (4, 2),
    "asin": (4, 2),
    "acos": (3, 1),
    "atan": (2, 2),
    "atan2": (3, 2),
    "sinh": (3, 1),
    "cosh": (2, 1),
    "tanh": (2, 1),
    "asinh": (3, 2),
    "acosh": (4, 2),
    "atanh": (3, 2),
    "pow": (8, 2),
    "hypot": (3, 2),
}
#: glibc x86_64 libm-test-ulps, round to nearest, (float, double).
GLIBC_ULPS: dict[str, tuple[int, int]] = {
    "exp": (1, 1),
    "expm1": (0, 1),
    "log": (1, 1),
    "log1p": (0, 1),
    "log2": (1, 2),
    "log10": (2, 2),
    "sin": (1, 1),
    "cos": (1, 1),
    "tan": (0, 0),
    "asin": (1, 1),
    "acos": (1, 1),
    "atan": (1, 1),
    "atan2": (2, 0),
    "sinh": (2, 2),
    "cosh": (2, 2),
    "tanh": (2, 2),
    "asinh": (2, 2),
    "acosh": (2, 2),
    "atanh": (2, 2),
    "pow": (1, 1),
    "hypot": (1, 1),
}
_COLUMN = {"float32": 0, "float64": 1}
_SUFFIX = {"float32": "f", "float64": ""}
SCANS = frozenset(["cumulative_sum", "cumulative_prod"])
_MAGNITUDE = frozenset(["sum", "mean", "var", "std"])


def published_bound(name: str, dtype: str) -> Bound | None:
    """The elementwise bound from the published tables (see the module), or None."""
    column = _COLUMN.get(dtype)
    if column is None or name not in CUDA_ULPS:
        return None
    cuda, glibc = CUDA_ULPS[name][column], GLIBC_ULPS[name][column]
    ulps = float(max(cuda + glibc, 2))
    f = f"{name}{_SUFFIX[dtype]}"
    return Bound(
        "ulp",
        ulps,
        None,
        f"published accuracy: CUDA Math API {f} {cuda} ULP + glibc libm-test-ulps x86_64 "
        f"{f} {glibc} ULP, at least 2: within {ulps:g} ULP of {dtype}",
    )


def reduction_bounds(
    name: str, reduced: int, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> Callable[[str], Bound | None] | None:
    """A sum-like reduction's bound, by output dtype, with the allowance of its inputs.

    None for other functions. The bound (or None, where the model cannot read the inputs)
    is worked out once per dtype: a call's two outputs, carried and local, may differ in it.
    """
    if name not in _MAGNITUDE or reduced <= 1:
        return None
    options = dict(kwargs)
    found: dict[str, Bound | None] = {}

    def bound(dtype: str) -> Bound | None:
        if dtype not in found:
            found[dtype] = None
            if dtype in EPSILON:
                try:
                    magnitude = reduction_magnitude(name, args, options)
                    spread = _spread_atol(name, args, options, dtype)
                except Exception:  # inputs the model cannot read: its bound without it
                    return None
                if magnitude is not None or spread is not None:
                    found[dtype] = bound_for(
                        name, dtype, reduced=reduced, magnitude=magnitude, atol=spread
                    )
        return found[dtype]

    return bound


def _plain(host: Any) -> np.ndarray[Any, Any]:
    return np.asarray(host[0] if isinstance(host, tuple) else host)


def scan_check(
    name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any], expected: Any, candidate: Any
) -> tuple[bool, str] | None:
    """Whether a scan's output is within its prefix bound (see the module), and why not.

    None when it cannot judge (no array input, an axis it cannot read, shapes that differ):
    the values model's verdict stands then.
    """
    from ._arrays import host_dtype

    dtype = host_dtype(candidate)
    if dtype not in EPSILON or not args:
        return None
    x = _plain(args[0]).astype(np.float64)
    e, c = _plain(expected).astype(np.float64), _plain(candidate).astype(np.float64)
    axis = kwargs.get("axis")
    if axis is None:
        if x.ndim != 1:
            return None
        axis = 0
    try:
        axis = int(axis) % x.ndim
        magnitude = np.abs(x)
        with np.errstate(all="ignore"):
            prefix = (
                np.cumsum(magnitude, axis=axis)
                if name == "cumulative_sum"
                else np.cumprod(magnitude, axis=axis)
            )
        lengths = np.arange(1, x.shape[axis] + 1, dtype=np.float64)
        if kwargs.get("include_initial"):
            first = np.zeros_like(np.take(prefix, [0], axis=axis))
            prefix = np.concatenate(
                [first if name == "cumulative_sum" else first + 1, prefix], axis
            )
            lengths = np.concatenate([[0.0], lengths])
        shape = [1] * x.ndim
        shape[axis] = lengths.size
        lengths = lengths.reshape(shape)
    except (ValueError, IndexError, TypeError):
        return None
    if prefix.shape != e.shape or e.shape != c.shape:
        return None
    unit = EPSILON[dtype] / 2
    with np.errstate(all="ignore"):
        ulp = np.spacing(np.abs(e).astype(np.float32 if dtype != "float64" else np.float64))
        scale = EPSILON[dtype] / EPSILON["float32" if dtype != "float64" else "float64"]
        allowed = 2 * lengths * unit * prefix + 2 * np.abs(ulp) * scale
        same = (e == c) | (np.isnan(e) & np.isnan(c))
        beyond = ~same & ~(np.abs(e - c) <= allowed)
    count = int(np.count_nonzero(beyond))
    if count == 0:
        return True, ""
    worst = int(np.argmax(np.where(beyond, np.abs(e - c), -1.0).reshape(-1)))
    index = np.unravel_index(worst, e.shape)
    return False, (
        f"beyond the prefix bound (|difference| <= 2 L u sum|x| over an L-term prefix, plus 2 "
        f"ULP of {dtype}) in {count} of {e.size} elements; at {tuple(int(i) for i in index)}: "
        f"{abs(e[index] - c[index]):.3g} > {float(allowed[index]):.3g}"
    )
