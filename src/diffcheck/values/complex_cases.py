"""The standard's special cases for complex operands of ``exp``, ``log``, ``log1p``, ``sqrt``, ``abs``.

Transcribed from the 2023.12 standard, with ``a = real(x)`` and ``b = imag(x)``. The standard
states the cases for the upper half plane and requires ``f(conj(x)) == conj(f(x))``, so an
argument with a negative imaginary sign is conjugated, judged, and its result conjugated
back. Result components: a number, ``nan``, ``+inf``/``-inf``, ``+0``/``-0``, ``0?``
and ``inf?`` (a zero or infinity whose sign is unspecified), ``pi`` fractions (an
approximation, judged within the bound), ``cis0``/``cisinf`` (``+0 * cis(b)`` and
``+inf * cis(b)``: the signs follow ``cos(b)`` and ``sin(b)``), and ``abs(a)``/``abs(b)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .special_cases import _holds

__all__ = ["ComplexCase", "complex_special_case"]

_Rule = tuple[str, str, str, str]  # condition on a, condition on b, real result, imag result

_EXP: list[_Rule] = [
    ("0", "+0", "1", "+0"),
    ("finite", "+inf", "nan", "nan"),
    ("finite", "nan", "nan", "nan"),
    ("+inf", "+0", "+inf", "+0"),
    ("-inf", "finite", "cis0", "cis0"),
    ("+inf", "nzfinite", "cisinf", "cisinf"),
    ("-inf", "+inf", "0?", "0?"),
    ("+inf", "+inf", "inf?", "nan"),
    ("-inf", "nan", "0?", "0?"),
    ("+inf", "nan", "inf?", "nan"),
    ("nan", "+0", "nan", "+0"),
    ("nan", "nz", "nan", "nan"),
    ("nan", "nan", "nan", "nan"),
]
_LOG: list[_Rule] = [
    ("-0", "+0", "-inf", "pi"),
    ("+0", "+0", "-inf", "+0"),
    ("finite", "+inf", "+inf", "pi/2"),
    ("finite", "nan", "nan", "nan"),
    ("-inf", "pfinite", "+inf", "pi"),
    ("+inf", "pfinite", "+inf", "+0"),
    ("-inf", "+inf", "+inf", "3pi/4"),
    ("+inf", "+inf", "+inf", "pi/4"),
    ("inf", "nan", "+inf", "nan"),
    ("nan", "finite", "nan", "nan"),
    ("nan", "+inf", "+inf", "nan"),
    ("nan", "nan", "nan", "nan"),
]
#: log1p: log's cases but at a = -1 (not at zero), the rest as log's (2023.12 stub).
_LOG1P: list[_Rule] = [("-1", "+0", "-inf", "+0"), *_LOG[2:]]
_SQRT: list[_Rule] = [
    ("0", "+0", "+0", "+0"),
    ("any", "+inf", "+inf", "+inf"),
    ("finite", "nan", "nan", "nan"),
    ("-inf", "pfinite", "+0", "+inf"),
    ("+inf", "pfinite", "+inf", "+0"),
    ("-inf", "nan", "nan", "inf?"),
    ("+inf", "nan", "+inf", "nan"),
    ("nan", "any", "nan", "nan"),
]
_ABS: list[_Rule] = [
    ("inf", "any", "+inf", "+0"),
    ("any", "inf", "+inf", "+0"),
    ("0", "any", "abs(b)", "+0"),
    ("any", "0", "abs(a)", "+0"),
    ("nan", "any", "nan", "+0"),
    ("any", "nan", "nan", "+0"),
]
_RULES = {"exp": _EXP, "log": _LOG, "log1p": _LOG1P, "sqrt": _SQRT, "abs": _ABS}
_PI = {"pi": math.pi, "pi/2": math.pi / 2, "pi/4": math.pi / 4, "3pi/4": 3 * math.pi / 4}


class ComplexCase(NamedTuple):
    """The required result's components, the rule, and which components are loose."""

    real: float
    imag: float
    rule: str
    loose: frozenset[str]  # components compared without sign ("0?", "inf?") or as pi


def _component(token: str, a: float, b: float) -> tuple[float, str | None]:
    if token in _PI:
        return _PI[token], "approx"
    if token == "0?":
        return 0.0, "unsigned"
    if token == "inf?":
        return math.inf, "unsigned"
    if token == "abs(a)":
        return abs(a), None
    if token == "abs(b)":
        return abs(b), None
    if token in ("cis0", "cisinf"):
        raise AssertionError("cis tokens are resolved by the caller")
    return float(token.replace("inf", "Infinity")), None


def complex_special_case(function: str, z: complex) -> ComplexCase | None:
    """The complex result the standard requires of ``function`` at ``z``, or None."""
    name = function.removeprefix("xp.")
    rules = _RULES.get(name)
    if rules is None:
        return None
    a, b = z.real, z.imag
    flip = name != "abs" and math.copysign(1.0, b) < 0  # the standard's conj symmetry
    if flip:
        b = -b
    for cond_a, cond_b, real_token, imag_token in rules:
        if not (_holds(cond_a, a, a) and _holds(cond_b, b, a)):
            continue
        loose: set[str] = set()
        if real_token.startswith("cis"):
            scale = 0.0 if real_token == "cis0" else math.inf
            real = math.copysign(scale, math.cos(b))
            imag = math.copysign(scale, math.sin(b))
        else:
            real, how_r = _component(real_token, a, b)
            imag, how_i = _component(imag_token, a, b)
            if how_r:
                loose.add("real-" + how_r)
            if how_i:
                loose.add("imag-" + how_i)
        if flip:
            imag = -imag
        rule = f"{name}: a is {cond_a} and b is {cond_b} -> {real_token} + {imag_token}j"
        if flip:
            rule += " (by conj symmetry)"
        return ComplexCase(real, imag, rule, frozenset(loose))
    return None
