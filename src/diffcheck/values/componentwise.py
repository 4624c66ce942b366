"""Complex operations the standard defines one component at a time.

``add`` and ``subtract`` of complex operands are defined by a table: for real components
``a``, ``c`` and imaginary components ``b``, ``d``, ``(a + bj) + (c + dj)`` is ``(a + c) +
(b + d)j``, and a real operand ``a`` contributes no imaginary component (``a + (c + dj)`` is
``(a + c) + dj``). Each component is then a real IEEE 754 addition or subtraction, whose
NaN, infinities, zero signs and rounding the real special cases fix. ``negative`` negates
both components ("both the real and imaginary components ... must be negated"), ``positive``
keeps them, ``conj`` negates the imaginary one.

So a complex result of these functions is fixed component by component. Where a real
operand meets a complex one after type promotion, its imaginary part may read as ``+0``
(promotion) or as absent (the table); where the two readings give different zeros, either
conforms.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["COMPONENTWISE", "componentwise_result", "meets"]

_Op = Callable[[float, float], float]
_BINARY: dict[str, _Op] = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y}
_UNARY: dict[str, tuple[Callable[[float], float], Callable[[float], float]]] = {
    "negative": (lambda a: -a, lambda b: -b),
    "positive": (lambda a: a, lambda b: b),
    "conj": (lambda a: a, lambda b: -b),
}
#: Functions whose complex results this module fixes.
COMPONENTWISE = frozenset([*_BINARY, *_UNARY])


def _rounded(value: float, part: str) -> float:
    """A float64 result rounded to the component dtype (float32: once, from an exact or
    correctly rounded double, which for one addition is the correctly rounded float32)."""
    if part == "float64":
        return value
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def _same(value: float, want: float) -> bool:
    """Bit-level agreement: NaN with NaN, zeros by sign, other values by equality."""
    if math.isnan(want):
        return math.isnan(value)
    if want == 0:
        return value == 0 and math.copysign(1.0, value) == math.copysign(1.0, want)
    return value == want


def componentwise_result(
    function: str, operands: Sequence[Any], dtype: str
) -> tuple[list[tuple[float, ...]], str] | None:
    """Each component's allowed values (real, imaginary) and the rule, or None.

    Parameters
    ----------
    function
        The standard's name.
    operands
        The element's inputs as Python numbers (a real operand is a float, not a complex).
    dtype
        The result's complex dtype (``complex64`` or ``complex128``).

    Returns
    -------
    tuple or None
        ``([real values], [imaginary values])`` as two tuples of the values that conform
        (two where the reading of a real operand's imaginary part matters), and the rule in
        words; None when this module does not fix the result.
    """
    name = function.removeprefix("xp.")
    if name not in COMPONENTWISE or dtype not in ("complex64", "complex128"):
        return None
    if not all(isinstance(v, int | float | complex) for v in operands):
        return None
    part = "float32" if dtype == "complex64" else "float64"
    if name in _UNARY and len(operands) == 1:
        z = complex(operands[0])
        real_of, imag_of = _UNARY[name]
        return (
            [(real_of(z.real),), (imag_of(z.imag),)],
            f"the standard: {name} of a complex number acts on each component",
        )
    if name not in _BINARY or len(operands) != 2:
        return None
    op = _BINARY[name]
    x, y = operands
    real = _rounded(op(complex(x).real, complex(y).real), part)
    imaginary = [_rounded(op(complex(x).imag, complex(y).imag), part)]
    # A real operand has no imaginary component in the standard's table: b (or d, -d) alone.
    if not isinstance(x, complex):
        d = complex(y).imag
        imaginary.append(d if name == "add" else -d)
    if not isinstance(y, complex):
        imaginary.append(complex(x).imag)
    imaginary = [v for i, v in enumerate(imaginary) if not any(_same(v, w) for w in imaginary[:i])]
    reading = (
        " (a real operand's imaginary part read as +0 or as absent: either zero conforms)"
        if len(imaginary) > 1
        else ""
    )
    return (
        [(real,), tuple(imaginary)],
        f"the standard: complex {name} is a real IEEE 754 {name} per component{reading}",
    )


def meets(value: complex, allowed: list[tuple[float, ...]]) -> bool:
    """Whether a complex value has, in each component, one of the allowed values."""
    return all(
        any(_same(got, want) for want in wants)
        for got, wants in zip((value.real, value.imag), allowed, strict=True)
    )
