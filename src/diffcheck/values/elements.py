"""Where a located output element comes from: the input elements and reduced terms.

Blame judges one element at a time (the first and the worst failing ones), so it needs the
arguments that produced that element: for elementwise functions the broadcast inputs at its
index, for reductions the terms along the reduced axes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["element_args", "reduced_terms", "reduction_magnitude", "scalar"]


def scalar(value: Any) -> Any:
    """One element as a Python bool, int, float or complex (exactly)."""
    return np.asarray(value).item()


def _arrays(args: Sequence[Any]) -> list[Any]:
    return [np.asarray(a[0]) if isinstance(a, tuple) else np.asarray(a) for a in args]


def element_args(
    args: Sequence[Any], index: tuple[int, ...], shape: tuple[int, ...]
) -> list[Any] | None:
    """Each argument's element at output ``index`` after broadcasting to ``shape``."""
    arrays = _arrays(args)
    try:
        broadcast = [np.broadcast_to(a, shape) for a in arrays]
    except ValueError:
        return None
    return [scalar(a[index]) for a in broadcast]


def reduced_terms(
    function: str, args: Sequence[Any], kwargs: Mapping[str, Any], index: tuple[int, ...]
) -> list[Any] | None:
    """The terms reduced into output element ``index`` (products of pairs for ``vecdot``).

    Covers ``sum``, ``prod``, ``mean``, ``max``, ``min`` (``axis`` None, an int or a tuple, with or without
    ``keepdims``), ``cumulative_sum``/``cumulative_prod`` (one ``axis``, the terms up to
    the index) and ``vecdot``/``linalg.vecdot`` (``axis``, default -1). None otherwise.
    """
    try:
        return _terms(function.removeprefix("xp."), _arrays(args), kwargs, index)
    except (
        IndexError,
        ValueError,
        TypeError,
        ArithmeticError,
    ):  # an index or axis that does not fit
        return None


def _terms(
    name: str, arrays: list[Any], kwargs: Mapping[str, Any], index: tuple[int, ...]
) -> list[Any] | None:
    if not arrays or arrays[0].dtype.kind not in "biufc":
        return None
    x = arrays[0]
    if name in ("sum", "prod", "mean", "max", "min", "var", "std"):
        axis = kwargs.get("axis")
        axes = (
            tuple(range(x.ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        )
        axes = tuple(int(a) % max(x.ndim, 1) for a in axes)
        kept = [i for i in range(x.ndim) if i not in axes]
        position = list(index)
        if kwargs.get("keepdims"):
            position = [position[i] for i in kept]
        if len(position) != len(kept):
            return None
        selector: list[Any] = [slice(None)] * x.ndim
        for axis_index, at in zip(kept, position, strict=True):
            selector[axis_index] = at
        return list(np.asarray(x[tuple(selector)]).reshape(-1).tolist())
    if name in ("cumulative_sum", "cumulative_prod"):
        axis = kwargs.get("axis", 0 if x.ndim == 1 else None)
        if axis is None or kwargs.get("include_initial"):
            return None
        axis = int(axis) % x.ndim
        selector = list(index)
        selector[axis] = slice(0, index[axis] + 1)
        return list(np.asarray(x[tuple(selector)]).reshape(-1).tolist())
    if name in ("vecdot", "linalg.vecdot") and len(arrays) == 2:
        axis = int(kwargs.get("axis", -1))
        a, b = np.broadcast_arrays(arrays[0], arrays[1])
        a = np.moveaxis(a, axis, -1)
        b = np.moveaxis(b, axis, -1)
        if a.ndim - 1 != len(index) or np.iscomplexobj(a):
            return None
        return _products(a[index], b[index])
    if name in ("matmul", "linalg.matmul") and len(arrays) == 2:
        a, b = arrays
        if a.ndim != 2 or b.ndim != 2 or len(index) != 2 or np.iscomplexobj(a):
            return None
        return _products(a[index[0], :], b[:, index[1]])
    return None


def _products(a: Any, b: Any) -> list[Any]:
    """The exact products of the pairs of ``a`` and ``b`` (to be summed exactly later).

    float32 (and narrower) pairs multiply exactly in float64. Long float64 ones become two
    floats per pair, the rounded product and its exact error (Dekker's two-product), so a
    million pairs stay fast; the rest become exact ``mpmath`` products (a product of two
    floats needs at most 106 bits).
    """
    floats = a.dtype.kind == "f" and b.dtype.kind == "f"
    if floats and max(a.itemsize, b.itemsize) <= 4:
        exact: list[Any] = (a.astype(np.float64) * b.astype(np.float64)).tolist()
        return exact
    if floats and a.size > _MPMATH_PAIRS:
        product, error = _two_product(a.astype(np.float64), b.astype(np.float64))
        split: list[Any] = [*product.tolist(), *error.tolist()]
        return split
    import mpmath

    pairs = zip(a.tolist(), b.tolist(), strict=True)
    with mpmath.workprec(256):
        return [mpmath.mpf(p) * mpmath.mpf(q) for p, q in pairs]


#: Above this many float64 pairs, products are split in floats instead of mpmath's.
_MPMATH_PAIRS = 4096


def _two_product(a: Any, b: Any) -> tuple[Any, Any]:
    """``a * b`` rounded and its rounding error, exactly (Veltkamp's split; no overflow)."""
    with np.errstate(all="ignore"):
        product = a * b
        split = 134217729.0  # 2**27 + 1
        ta, tb = split * a, split * b
        ah, bh = ta - (ta - a), tb - (tb - b)
        al, bl = a - ah, b - bh
        error = ((ah * bh - product) + ah * bl + al * bh) + al * bl
    return product, np.where(np.isfinite(error), error, 0.0)


def reduction_magnitude(
    function: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> float | None:
    """The largest ``sum |x_i|`` over the output elements of a sum-like reduction.

    It scales the absolute allowance of a reduction's bound (rounding error of a sum is
    proportional to the sum of magnitudes, not to the result, which cancellation can make
    arbitrarily small). None for other functions or when it cannot be computed.
    """
    name = function.removeprefix("xp.")
    arrays = _arrays(args)
    if not arrays or arrays[0].dtype.kind not in "fc":
        return None
    x = np.abs(arrays[0].astype(np.complex128 if arrays[0].dtype.kind == "c" else np.float64))
    try:
        if name in ("sum", "mean", "cumulative_sum"):
            axis = kwargs.get("axis")
            total = np.sum(x, axis=axis)
            if name == "mean":
                count = x.size if axis is None else x.size // max(np.asarray(total).size, 1)
                total = total / max(count, 1)
        elif name in ("vecdot", "linalg.vecdot") and len(arrays) == 2:
            y = np.abs(arrays[1].astype(np.float64 if arrays[1].dtype.kind != "c" else complex))
            total = np.sum(x * y, axis=int(kwargs.get("axis", -1)))
        elif name in ("matmul", "linalg.matmul") and len(arrays) == 2:
            total = np.abs(x) @ np.abs(arrays[1].astype(np.float64))
        else:
            return None
    except (ValueError, TypeError):
        return None
    finite = np.asarray(total)[np.isfinite(np.asarray(total))]
    return float(finite.max()) if finite.size else None
