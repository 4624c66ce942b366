"""The Array API standard's special cases for elementwise functions, as data.

Transcribed from the "Special cases" sections of the 2023.12 standard
(``array_api_stubs/_2023_12/elementwise_functions.py``), real-valued operands only. A rule
is a tuple of input conditions and a result; the first rule whose conditions all hold gives
the result the standard requires, independently of either backend.

Conditions (one per argument): ``nan``, ``+inf``, ``-inf``, ``inf`` (either sign), ``+0``,
``-0``, ``0`` (either sign), ``finite``, ``nzfinite`` (nonzero finite), ``>0`` / ``<0``
(including infinities), ``>1`` / ``<1`` / ``<-1``, ``1`` / ``-1`` (that value), ``notnan``,
``not1``, ``nz`` (not zero), ``abs>1`` / ``abs<1`` / ``abs=1``, ``odd`` / ``notodd`` (odd
integer value or not), ``nonint`` (finite, not an integer value), ``any``, and ``-x1`` (the
negation of the first argument).

Results: ``nan``, ``+inf``, ``-inf``, ``+0``, ``-0``, a decimal number, ``x1`` / ``x2`` /
``abs(x1)`` / ``abs(x2)`` (that argument), and ``sign-inf`` / ``sign-0`` (an infinity or a
zero whose sign is the product of the arguments' signs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

__all__ = ["RULES", "SpecialCase", "special_case"]

Rule = tuple[tuple[str, ...], str]

_UNARY: dict[str, list[tuple[str, str]]] = {
    "abs": [("nan", "nan"), ("-0", "+0"), ("-inf", "+inf")],
    "acos": [("nan", "nan"), (">1", "nan"), ("<-1", "nan"), ("1", "+0")],
    "acosh": [("nan", "nan"), ("<1", "nan"), ("1", "+0"), ("+inf", "+inf")],
    "asin": [("nan", "nan"), (">1", "nan"), ("<-1", "nan"), ("+0", "+0"), ("-0", "-0")],
    "asinh": [("nan", "nan"), ("+0", "+0"), ("-0", "-0"), ("+inf", "+inf"), ("-inf", "-inf")],
    "atan": [("nan", "nan"), ("+0", "+0"), ("-0", "-0")],
    "atanh": [
        ("nan", "nan"),
        ("<-1", "nan"),
        (">1", "nan"),
        ("-1", "-inf"),
        ("1", "+inf"),
        ("+0", "+0"),
        ("-0", "-0"),
    ],
    "ceil": [("nan", "nan"), ("+inf", "+inf"), ("-inf", "-inf"), ("+0", "+0"), ("-0", "-0")],
    "cos": [("nan", "nan"), ("0", "1"), ("inf", "nan")],
    "cosh": [("nan", "nan"), ("0", "1"), ("inf", "+inf")],
    "exp": [("nan", "nan"), ("0", "1"), ("+inf", "+inf"), ("-inf", "+0")],
    "expm1": [("nan", "nan"), ("+0", "+0"), ("-0", "-0"), ("+inf", "+inf"), ("-inf", "-1")],
    "floor": [("nan", "nan"), ("+inf", "+inf"), ("-inf", "-inf"), ("+0", "+0"), ("-0", "-0")],
    "log": [("nan", "nan"), ("<0", "nan"), ("0", "-inf"), ("1", "+0"), ("+inf", "+inf")],
    "log1p": [
        ("nan", "nan"),
        ("<-1", "nan"),
        ("-1", "-inf"),
        ("-0", "-0"),
        ("+0", "+0"),
        ("+inf", "+inf"),
    ],
    "log2": [("nan", "nan"), ("<0", "nan"), ("0", "-inf"), ("1", "+0"), ("+inf", "+inf")],
    "log10": [("nan", "nan"), ("<0", "nan"), ("0", "-inf"), ("1", "+0"), ("+inf", "+inf")],
    "round": [("nan", "nan"), ("+inf", "+inf"), ("-inf", "-inf"), ("+0", "+0"), ("-0", "-0")],
    "sin": [("nan", "nan"), ("+0", "+0"), ("-0", "-0"), ("inf", "nan")],
    "sinh": [("nan", "nan"), ("+0", "+0"), ("-0", "-0"), ("+inf", "+inf"), ("-inf", "-inf")],
    "sign": [("nan", "nan"), ("<0", "-1"), (">0", "1")],  # the sign of a zero result is open
    "sqrt": [("nan", "nan"), ("<0", "nan"), ("+0", "+0"), ("-0", "-0"), ("+inf", "+inf")],
    "square": [("nan", "nan"), ("0", "+0"), ("inf", "+inf")],
    "tan": [("nan", "nan"), ("+0", "+0"), ("-0", "-0"), ("inf", "nan")],
    "tanh": [("nan", "nan"), ("+0", "+0"), ("-0", "-0"), ("+inf", "1"), ("-inf", "-1")],
    "trunc": [("nan", "nan"), ("+inf", "+inf"), ("-inf", "-inf"), ("+0", "+0"), ("-0", "-0")],
}

_ADD: list[Rule] = [
    (("nan", "any"), "nan"),
    (("any", "nan"), "nan"),
    (("+inf", "-inf"), "nan"),
    (("-inf", "+inf"), "nan"),
    (("+inf", "+inf"), "+inf"),
    (("-inf", "-inf"), "-inf"),
    (("+inf", "finite"), "+inf"),
    (("-inf", "finite"), "-inf"),
    (("finite", "+inf"), "+inf"),
    (("finite", "-inf"), "-inf"),
    (("-0", "-0"), "-0"),
    (("-0", "+0"), "+0"),
    (("+0", "-0"), "+0"),
    (("+0", "+0"), "+0"),
    (("0", "nzfinite"), "x2"),
    (("nzfinite", "0"), "x1"),
    (("nzfinite", "-x1"), "+0"),
]
_MULTIPLY: list[Rule] = [
    (("nan", "any"), "nan"),
    (("any", "nan"), "nan"),
    (("inf", "0"), "nan"),
    (("0", "inf"), "nan"),
    (("inf", "nz"), "sign-inf"),
    (("nz", "inf"), "sign-inf"),
    (("0", "finite"), "sign-0"),
    (("finite", "0"), "sign-0"),
]
_DIVIDE: list[Rule] = [
    (("nan", "any"), "nan"),
    (("any", "nan"), "nan"),
    (("inf", "inf"), "nan"),
    (("0", "0"), "nan"),
    (("0", "nz"), "sign-0"),
    (("nz", "0"), "sign-inf"),
    (("inf", "finite"), "sign-inf"),
    (("finite", "inf"), "sign-0"),
]
_POW: list[Rule] = [
    (("not1", "nan"), "nan"),
    (("any", "0"), "1"),
    (("nan", "nz"), "nan"),
    (("abs>1", "+inf"), "+inf"),
    (("abs>1", "-inf"), "+0"),
    (("abs=1", "inf"), "1"),
    (("1", "notnan"), "1"),
    (("abs<1", "+inf"), "+0"),
    (("abs<1", "-inf"), "+inf"),
    (("+inf", ">0"), "+inf"),
    (("+inf", "<0"), "+0"),
    (("-inf", ">0", "odd"), "-inf"),
    (("-inf", ">0", "notodd"), "+inf"),
    (("-inf", "<0", "odd"), "-0"),
    (("-inf", "<0", "notodd"), "+0"),
    (("+0", ">0"), "+0"),
    (("+0", "<0"), "+inf"),
    (("-0", ">0", "odd"), "-0"),
    (("-0", ">0", "notodd"), "+0"),
    (("-0", "<0", "odd"), "-inf"),
    (("-0", "<0", "notodd"), "+inf"),
    (("<0", "nonint"), "nan"),
]
_HYPOT: list[Rule] = [
    (("inf", "any"), "+inf"),
    (("any", "inf"), "+inf"),
    (("nan", "any"), "nan"),
    (("any", "nan"), "nan"),
    (("0", "any"), "abs(x2)"),
    (("any", "0"), "abs(x1)"),
]
_NAN_PROPAGATING: list[Rule] = [(("nan", "any"), "nan"), (("any", "nan"), "nan")]
# "~" marks "an implementation-dependent approximation to": judged within the bound.
_ATAN2: list[Rule] = [
    *_NAN_PROPAGATING,
    ((">0", "0"), "~pi/2"),
    (("+0", ">0"), "+0"),
    (("+0", "+0"), "+0"),
    (("+0", "-0"), "~pi"),
    (("+0", "<0"), "~pi"),
    (("-0", ">0"), "-0"),
    (("-0", "+0"), "-0"),
    (("-0", "-0"), "~-pi"),
    (("-0", "<0"), "~-pi"),
    (("<0", "0"), "~-pi/2"),
    (("pfinite", "+inf"), "+0"),
    (("pfinite", "-inf"), "~pi"),
    (("nfinite", "+inf"), "-0"),
    (("nfinite", "-inf"), "~-pi"),
    (("+inf", "finite"), "~pi/2"),
    (("-inf", "finite"), "~-pi/2"),
    (("+inf", "+inf"), "~pi/4"),
    (("+inf", "-inf"), "~3pi/4"),
    (("-inf", "+inf"), "~-pi/4"),
    (("-inf", "-inf"), "~-3pi/4"),
]
_DIVISION_EDGES: list[Rule] = [
    *_NAN_PROPAGATING,
    (("inf", "inf"), "nan"),
    (("0", "0"), "nan"),
]
# floor_divide's infinite cases let libraries "return NaN to match Python": only the rules
# without such a note are transcribed.
_FLOOR_DIVIDE: list[Rule] = [
    *_DIVISION_EDGES,
    (("0", "nz"), "sign-0"),
    (("nz", "0"), "sign-inf"),
    (("pfinite", "+inf"), "+0"),
    (("nfinite", "-inf"), "+0"),
]
_REMAINDER: list[Rule] = [
    *_DIVISION_EDGES,
    (("0", ">0"), "+0"),
    (("0", "<0"), "-0"),
    (("nz", "0"), "nan"),
    (("inf", "finite"), "nan"),
    (("pfinite", "+inf"), "x1"),
    (("pfinite", "-inf"), "x2"),
    (("nfinite", "+inf"), "x2"),
    (("nfinite", "-inf"), "x1"),
]
_LOGADDEXP: list[Rule] = [*_NAN_PROPAGATING, (("+inf", "any"), "+inf"), (("any", "+inf"), "+inf")]
_COPYSIGN: list[Rule] = [(("notnan", "any"), "copysign")]

#: Every function's rules; a unary rule has one condition, a binary rule two (three for
#: ``pow``'s parity conditions on the exponent, which the third entry states).
RULES: dict[str, list[Rule]] = {
    **{name: [((cond,), result) for cond, result in rules] for name, rules in _UNARY.items()},
    "add": _ADD,
    "multiply": _MULTIPLY,
    "divide": _DIVIDE,
    "pow": _POW,
    "hypot": _HYPOT,
    "maximum": _NAN_PROPAGATING,
    "minimum": _NAN_PROPAGATING,
    "atan2": _ATAN2,
    "floor_divide": _FLOOR_DIVIDE,
    "remainder": _REMAINDER,
    "logaddexp": _LOGADDEXP,
    "copysign": _COPYSIGN,
}


def _holds(condition: str, x: float, first: float) -> bool:
    finite = math.isfinite(x)
    checks: dict[str, Callable[[], bool]] = {
        "any": lambda: True,
        "nan": lambda: math.isnan(x),
        "notnan": lambda: not math.isnan(x),
        "+inf": lambda: x == math.inf,
        "-inf": lambda: x == -math.inf,
        "inf": lambda: math.isinf(x),
        "+0": lambda: x == 0 and math.copysign(1.0, x) > 0,
        "-0": lambda: x == 0 and math.copysign(1.0, x) < 0,
        "0": lambda: x == 0,
        "nz": lambda: x != 0 and not math.isnan(x),
        "finite": lambda: finite,
        "nzfinite": lambda: finite and x != 0,
        "pfinite": lambda: finite and x > 0,
        "nfinite": lambda: finite and x < 0,
        ">0": lambda: x > 0,
        "<0": lambda: x < 0,
        ">1": lambda: x > 1,
        "<1": lambda: x < 1,
        "<-1": lambda: x < -1,
        "1": lambda: x == 1,
        "-1": lambda: x == -1,
        "not1": lambda: x != 1,
        "abs>1": lambda: abs(x) > 1,
        "abs<1": lambda: abs(x) < 1,
        "abs=1": lambda: abs(x) == 1,
        "odd": lambda: finite and x == math.floor(x) and math.fmod(x, 2.0) != 0,
        "notodd": lambda: not (finite and x == math.floor(x) and math.fmod(x, 2.0) != 0),
        "nonint": lambda: finite and x != math.floor(x),
        "-x1": lambda: x == -first and finite and x != 0,
    }
    return bool(checks[condition]())


def _result(token: str, args: Sequence[float]) -> float:
    if token == "nan":
        return math.nan
    if token in ("x1", "x2"):
        return args[int(token[1]) - 1]
    if token in ("abs(x1)", "abs(x2)"):
        return abs(args[int(token[5]) - 1])
    if token in ("sign-inf", "sign-0"):
        negative = (math.copysign(1.0, args[0]) < 0) != (math.copysign(1.0, args[1]) < 0)
        magnitude = math.inf if token == "sign-inf" else 0.0
        return -magnitude if negative else magnitude
    if token == "copysign":
        return math.copysign(abs(args[0]), args[1])  # the sign bit, also of a NaN x2
    if token.startswith("~"):
        return _APPROXIMATIONS[token[1:]]
    return float(token.replace("inf", "Infinity"))


_APPROXIMATIONS = {
    "pi": math.pi,
    "-pi": -math.pi,
    "pi/2": math.pi / 2,
    "-pi/2": -math.pi / 2,
    "pi/4": math.pi / 4,
    "-pi/4": -math.pi / 4,
    "3pi/4": 3 * math.pi / 4,
    "-3pi/4": -3 * math.pi / 4,
}


class SpecialCase(NamedTuple):
    """The standard's required result, the rule in words, and whether it is exact."""

    value: float
    rule: str
    exact: bool = True


def special_case(function: str, args: Sequence[float]) -> SpecialCase | None:
    """The result the standard requires for these real arguments, and the rule that says so.

    Parameters
    ----------
    function
        The standard's name; ``subtract`` is ``add`` with the second argument negated, as
        the standard defines it.
    args
        One float per argument (each element's value, widened to Python floats exactly).

    Returns
    -------
    SpecialCase or None
        The required value (NaN for NaN), the rule in words, and ``exact`` False when the
        standard asks only for an approximation (``atan2``'s multiples of π); None when no
        special case applies.
    """
    name = label = function.removeprefix("xp.")
    values = list(args)
    if name == "subtract" and len(values) == 2:
        name, values = "add", [values[0], -values[1]]
    rules = RULES.get(name)
    if rules is None:
        return None
    for conditions, result in rules:
        operands = conditions[:2] if len(conditions) > 1 and len(values) == 2 else conditions
        if len(operands) != len(values):
            continue
        if not all(_holds(c, x, values[0]) for c, x in zip(operands, values, strict=True)):
            continue
        if len(conditions) == 3 and not _holds(conditions[2], values[1], values[0]):
            continue
        what = " and ".join(
            f"x{i + 1} is {c}" if len(values) > 1 else f"x is {c}" for i, c in enumerate(operands)
        )
        if len(conditions) == 3:
            what += f" ({conditions[2]} exponent)"
        if label == "subtract":
            what = f"as add(x1, -x2): {what}"
        return SpecialCase(
            _result(result, values), f"{label}: {what} -> {result}", not result.startswith("~")
        )
    return None
