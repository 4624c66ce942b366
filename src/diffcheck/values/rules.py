"""The standard's exact rules for integer, boolean and shape questions.

Each function returns what the Array API standard requires at one element (or of a whole
result's shape), or None where the standard leaves the answer open, so blame can tell a
defined behaviour from an implementation's choice:

* integer arithmetic is exact while the true result fits the dtype; beyond it, overflow is
  not specified by the standard ("Integers outside of bounds may result in overflow or an
  error"), so no side can be blamed by rule;
* ``bitwise_left_shift`` appends ``x2`` zeros on the right: bits shifted past the width are
  gone (the result wraps), and a shift by the width or more gives 0;
* ``bitwise_right_shift`` is an arithmetic shift, "equivalent to floor division by a power
  of two": a shift by the width or more gives 0 or -1;
* negative shift counts and integer division by zero are not specified.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .dtypes import SIGNED, UNSIGNED

__all__ = ["exact_element", "expected_shape", "integer_range"]


def integer_range(dtype: str) -> tuple[int, int] | None:
    """The smallest and largest value of an integer dtype (None for other dtypes)."""
    bits = int("".join(c for c in dtype if c.isdigit()) or 0)
    if dtype in SIGNED:
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if dtype in UNSIGNED:
        return 0, 2**bits - 1
    return None


def _wrap(value: int, dtype: str) -> int:
    low, high = integer_range(dtype) or (0, 0)
    span = high - low + 1
    return (value - low) % span + low


def _shift_left(x: int, count: int, dtype: str) -> int | None:
    bits = int("".join(c for c in dtype if c.isdigit()))
    if count < 0:
        return None
    if count >= bits:
        return 0
    return _wrap(x << count, dtype)


def _shift_right(x: int, count: int, dtype: str) -> int | None:
    bits = int("".join(c for c in dtype if c.isdigit()))
    if count < 0:
        return None
    return x >> min(count, bits)  # Python's >> is the floor division the standard asks for


def _fits(value: int, dtype: str) -> int | None:
    bounds = integer_range(dtype)
    if bounds is None:
        return None
    return value if bounds[0] <= value <= bounds[1] else None


def _floor_divide(a: int, b: int, dtype: str) -> int | None:
    return None if b == 0 else _fits(a // b, dtype)


def _remainder(a: int, b: int, dtype: str) -> int | None:
    return None if b == 0 else _fits(a % b, dtype)  # the sign of the divisor, as specified


_INTEGER_BINARY: dict[str, Callable[[int, int, str], int | None]] = {
    "add": lambda a, b, d: _fits(a + b, d),
    "subtract": lambda a, b, d: _fits(a - b, d),
    "multiply": lambda a, b, d: _fits(a * b, d),
    "floor_divide": _floor_divide,
    "remainder": _remainder,
    "maximum": lambda a, b, d: max(a, b),
    "minimum": lambda a, b, d: min(a, b),
    "bitwise_and": lambda a, b, d: _wrap(a & b, d),
    "bitwise_or": lambda a, b, d: _wrap(a | b, d),
    "bitwise_xor": lambda a, b, d: _wrap(a ^ b, d),
    "bitwise_left_shift": lambda a, b, d: _shift_left(a, b, d),
    "bitwise_right_shift": lambda a, b, d: _shift_right(a, b, d),
}
_INTEGER_UNARY: dict[str, Callable[[int, str], int | None]] = {
    "negative": lambda a, d: _fits(-a, d),
    "abs": lambda a, d: _fits(abs(a), d),
    "square": lambda a, d: _fits(a * a, d),
    "bitwise_invert": lambda a, d: _wrap(~a, d),
    "positive": lambda a, d: a,
    "sign": lambda a, d: (a > 0) - (a < 0),
}
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "equal": lambda a, b: a == b,
    "not_equal": lambda a, b: a != b,
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
    "logical_and": lambda a, b: bool(a) and bool(b),
    "logical_or": lambda a, b: bool(a) or bool(b),
    "logical_xor": lambda a, b: bool(a) != bool(b),
}
_PREDICATES: dict[str, Callable[[Any], bool]] = {
    "logical_not": lambda a: not a,
    "isnan": lambda a: isinstance(a, float) and math.isnan(a),
    "isinf": lambda a: isinstance(a, float) and math.isinf(a),
    "isfinite": lambda a: not isinstance(a, float) or math.isfinite(a),
    "signbit": lambda a: math.copysign(1.0, float(a)) < 0,
}


def exact_element(function: str, args: Sequence[Any], dtype: str) -> int | bool | None:
    """The exact integer or bool result the standard requires at one element, or None.

    ``args`` are Python ints, floats or bools (one element of each argument); ``dtype`` is
    the result's dtype. None means the standard does not define this result (overflow,
    negative shift, division by zero) or the function is not covered here.
    """
    name = function.removeprefix("xp.")
    if name in _COMPARISONS and len(args) == 2:
        return bool(_COMPARISONS[name](args[0], args[1]))
    if name in _PREDICATES and len(args) == 1:
        return bool(_PREDICATES[name](args[0]))
    if integer_range(dtype) is None or not all(isinstance(a, int) for a in args):
        return None
    ints = [int(a) for a in args]
    if name in _INTEGER_BINARY and len(ints) == 2:
        result: int | None = _INTEGER_BINARY[name](ints[0], ints[1], dtype)
        return result
    if name in _INTEGER_UNARY and len(ints) == 1:
        unary: int | None = _INTEGER_UNARY[name](ints[0], dtype)
        return unary
    return None


_REDUCING = frozenset(
    [
        "sum",
        "prod",
        "mean",
        "max",
        "min",
        "std",
        "var",
        "argmax",
        "argmin",
        "all",
        "any",
        "count_nonzero",
    ]
)


def expected_shape(
    function: str, shapes: Sequence[tuple[int, ...]], kwargs: Mapping[str, Any]
) -> tuple[int, ...] | None:
    """The result shape the standard requires, for elementwise functions and reductions."""
    from .bounds import is_elementwise

    name = function.removeprefix("xp.")
    if is_elementwise(name) or name in _COMPARISONS or name in _INTEGER_BINARY:
        try:
            return tuple(int(n) for n in _broadcast(shapes))
        except ValueError:
            return None
    if name in _REDUCING and shapes:
        shape = shapes[0]
        axis = kwargs.get("axis")
        axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        norm = {int(a) % len(shape) for a in axes} if shape else set()
        if kwargs.get("keepdims"):
            return tuple(1 if i in norm else n for i, n in enumerate(shape))
        return tuple(n for i, n in enumerate(shape) if i not in norm)
    return None


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    import numpy as np

    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
