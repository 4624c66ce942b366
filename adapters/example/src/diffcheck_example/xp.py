"""A deliberately minimal array namespace: only what diffcheck's ops call.

Arrays are NumPy arrays (so ``*``, ``/``, ``+``, unary ``-`` and slicing are NumPy's), but
the namespace functions are this module's own, and GEMM is a hand-written loop: one rank-1
update per step of k, accumulated in the operands' dtype, with no BLAS. That is the kind of
kernel a new backend starts with, and what diffcheck exists to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "arange",
    "asarray",
    "astype",
    "concat",
    "cos",
    "exp",
    "float16",
    "float32",
    "float64",
    "full_like",
    "int64",
    "less_equal",
    "matmul",
    "matrix_transpose",
    "max",
    "permute_dims",
    "reshape",
    "sin",
    "sqrt",
    "stack",
    "sum",
    "where",
    "zeros_like",
]

Array = npt.NDArray[Any]

float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int64 = np.dtype(np.int64)


def asarray(obj: Any, /, *, dtype: Any = None, device: str | None = None) -> Array:
    """A new array holding ``obj`` (float32 unless ``dtype`` says otherwise)."""
    if device not in (None, "cpu"):
        raise ValueError(f"device {device!r} is not supported; this namespace has only 'cpu'")
    return np.array(obj, dtype=float32 if dtype is None else dtype, copy=True)


def astype(x: Array, dtype: Any, /) -> Array:
    """``x`` converted to ``dtype`` (round to nearest even, as IEEE-754 requires)."""
    return x.astype(dtype, copy=True)


def reshape(x: Array, shape: tuple[int, ...], /) -> Array:
    """``x`` with a new shape and the same row-major element order."""
    return np.reshape(x, shape)


def matrix_transpose(x: Array, /) -> Array:
    """The last two axes swapped."""
    return np.swapaxes(x, -1, -2)


def matmul(a: Array, b: Array, /) -> Array:
    """``a[..., m, k] @ b[..., k, n]`` as a naive loop over k, accumulated in the operands' dtype.

    Leading (batch) axes must match; each batch is its own loop (attention multiplies per head).
    """
    if a.ndim < 2 or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul needs [..., m, k] @ [..., k, n], got {a.shape} @ {b.shape}")
    dtype = np.result_type(a, b)
    out = np.zeros((*a.shape[:-1], b.shape[-1]), dtype=dtype)
    for p in range(a.shape[-1]):
        out += a[..., p : p + 1].astype(dtype) * b[..., p : p + 1, :].astype(dtype)
    return out


def sum(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """The sum over ``axis``, accumulated in ``x``'s own dtype."""
    return np.asarray(np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype))


def sqrt(x: Array, /) -> Array:
    """Elementwise square root."""
    return np.sqrt(x)


def exp(x: Array, /) -> Array:
    """Elementwise e**x."""
    return np.exp(x)


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Arrays of one shape joined along a new axis."""
    return np.stack(list(arrays), axis=axis)


def concat(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Arrays joined along an existing axis."""
    return np.concatenate(list(arrays), axis=axis)


def permute_dims(x: Array, axes: tuple[int, ...], /) -> Array:
    """``x`` with its axes reordered."""
    return np.transpose(x, axes)


def max(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """The largest element over ``axis``."""
    return np.asarray(np.max(x, axis=axis, keepdims=keepdims))


def where(condition: Array, x1: Array, x2: Array, /) -> Array:
    """``x1`` where ``condition`` holds, else ``x2`` (broadcast)."""
    return np.where(condition, x1, x2)


def less_equal(x1: Array, x2: Array, /) -> Array:
    """Elementwise ``x1 <= x2``."""
    return np.less_equal(x1, x2)


def cos(x: Array, /) -> Array:
    """Elementwise cosine."""
    return np.cos(x)


def sin(x: Array, /) -> Array:
    """Elementwise sine."""
    return np.sin(x)


def arange(stop: int, /, *, dtype: Any = None, device: str | None = None) -> Array:
    """0, 1, ..., stop - 1 (int64 unless ``dtype`` says otherwise)."""
    return np.arange(stop, dtype=int64 if dtype is None else dtype)


def full_like(x: Array, /, fill_value: float) -> Array:
    """An array shaped and typed like ``x``, every element ``fill_value``."""
    return np.full_like(x, fill_value)


def zeros_like(x: Array, /) -> Array:
    """An array shaped and typed like ``x``, all zeros."""
    return np.zeros_like(x)
