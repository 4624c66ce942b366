"""Judging one located element: special cases, the oracle, and the standard's exact rules.

Each judge returns a :class:`~diffcheck.values.model.Blame` when its evidence decides
which side is wrong, and None when it does not (both sides within their share, or no rule
or oracle covers the element), so :func:`~diffcheck.values.blame.blame` can go on to
weaker evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .accuracy import std_allowance, summation_depth, true_variance, variance_allowance
from .complex_cases import complex_special_case
from .componentwise import componentwise_result, meets
from .dtypes import COMPLEX
from .elements import reduced_terms
from .may import floor_divide_results
from .model import Blame, Bound, Location, Side
from .oracle import (
    complex_ulps_from_truth,
    correctly_rounded,
    true_complex,
    true_reduction,
    true_value,
    ulps_from_truth,
)
from .rules import exact_element, integer_range
from .special_cases import special_case
from .ulp import EPSILON

__all__ = ["judge_element", "judge_reduction", "judge_sides"]


def judge_sides(ref_ok: bool, cand_ok: bool) -> Side | None:
    if ref_ok and cand_ok:
        return None
    if ref_ok:
        return "candidate"
    if cand_ok:
        return "reference"
    return "both"


def _same_special(value: float, required: float) -> bool:
    """Bit-level agreement with a special case's result: NaN, infinities, signed zeros."""
    if math.isnan(required):
        return math.isnan(value)
    if required == 0:
        return value == 0 and math.copysign(1.0, value) == math.copysign(1.0, required)
    return value == required


def _allowance(bound: Bound) -> float:
    """Each side's share of an elementwise bound, in ULPs from the true value."""
    return max(0.5, float(bound.ulps or 0.0) / 2.0) + 1e-9


def _within(value: float, ulps: float, truth: Any, dtype: str, bound: Bound) -> bool:
    """Whether a side meets its share of an elementwise bound. A correctly rounded one (0
    ULP) admits the nearest value alone: 0.5 ULP measured at the truth lets the wrong
    neighbour through where the truth sits just below a power of two (``sqrt(1 - 2**-53)``
    rounds to ``1 - 2**-53``, and 1.0 is 0.5 ULP of the lower binade away)."""
    exact = bound.kind == "ulp" and bound.ulps == 0 and dtype in ("float16", "float32", "float64")
    if not exact or not math.isfinite(value):
        return ulps <= _allowance(bound)
    return value == correctly_rounded(truth, dtype)  # a zero's sign: _zero_sign_by_truth


def judge_element(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    ref_value: Any,
    cand_value: Any,
    dtype: str,
    loc: Location,
    bound: Bound,
) -> Blame | None:
    at = f"at {list(loc.index)}"
    if dtype in COMPLEX:
        return _judge_complex(function, args, ref_value, cand_value, dtype, at, bound)
    if dtype not in EPSILON:  # bool and integers: the standard's exact rules
        required = exact_element(function, args, dtype)
        if required is None:
            return None
        side = judge_sides(ref_value == required, cand_value == required)
        if side is None:
            return None
        return Blame(
            side,
            f"{function}({', '.join(map(repr, args))}) must be {required!r} "
            f"by the standard's rules; reference {ref_value!r}, candidate "
            f"{cand_value!r} {at}",
            "standard-rule",
        )
    r, c = float(ref_value), float(cand_value)
    floats = [float(a) for a in args] if all(isinstance(a, int | float) for a in args) else None
    if floats is not None:
        case = special_case(function, floats)
        if case is not None:
            value, rule, exact = case
            if exact:
                side = judge_sides(_same_special(r, value), _same_special(c, value))
            else:  # an approximation to a multiple of pi: each side within its share
                share = _allowance(bound)
                side = judge_sides(
                    ulps_from_truth(r, value, dtype) <= share,
                    ulps_from_truth(c, value, dtype) <= share,
                )
            if side is not None:
                return Blame(
                    side,
                    f"special case {rule} requires {value!r} {at}; "
                    f"reference {r!r}, candidate {c!r}",
                    "special-case",
                )
            return None
        divisor = _remainder_zero_sign(function, floats, r, c, at)
        if divisor is not None:
            return divisor
        floored = _floor_divide_element(function, floats, r, c, dtype, at)
        if floored is not None:
            return floored
        truth = true_value(function, floats)
        if truth is not None:
            share = _allowance(bound)
            ref_ulps, cand_ulps = (ulps_from_truth(v, truth, dtype) for v in (r, c))
            side = judge_sides(
                *(_within(v, u, truth, dtype, bound) for v, u in ((r, ref_ulps), (c, cand_ulps)))
            )
            whole = float(bound.ulps or 0.0) + 1e-9
            if side == "both" and math.isfinite(r) != math.isfinite(c):
                # One side infinite (or NaN) where the truth is finite: the finite side is
                # not blamed while it is within the whole bound (exp(88.72) in float32 is
                # 1.09 ULP off in NumPy and +inf in MLX: MLX alone is wrong).
                finite_ok = (ref_ulps if math.isfinite(r) else cand_ulps) <= whole
                if finite_ok:
                    side = "candidate" if math.isfinite(r) else "reference"
            if side is None:
                open_ = _open_real_zero_sign(function, floats, r, c, truth, at, bound)
                return open_ or _zero_sign_by_truth(function, floats, r, c, truth, at)
            allowed = f"each side may be {share:.3g}"
            if (
                bound.kind == "ulp"
                and bound.ulps == 0
                and dtype in ("float16", "float32", "float64")
            ):
                allowed = f"correctly rounded: {correctly_rounded(truth, dtype)!r} alone"
            return Blame(
                side,
                f"true {function}({', '.join(map(repr, floats))}) = "
                f"{float(truth)!r}; reference is {ref_ulps:.3g} ULP off, candidate "
                f"{cand_ulps:.3g} ULP ({allowed}) {at}",
                "oracle",
            )
    return None


def _complex_matches(value: complex, case: Any, part: str, share: float) -> bool:
    """Whether a complex value meets a complex special case, component by component."""
    for name, got, want in (("real", value.real, case.real), ("imag", value.imag, case.imag)):
        if f"{name}-unsigned" in case.loose:
            ok = abs(got) == abs(want)
        elif f"{name}-approx" in case.loose:
            ok = ulps_from_truth(got, want, part) <= share
        else:
            ok = _same_special(got, want)
        if not ok:
            return False
    return True


def _judge_complex(
    function: str,
    args: Sequence[Any],
    ref_value: Any,
    cand_value: Any,
    dtype: str,
    at: str,
    bound: Bound,
) -> Blame | None:
    """Complex special cases, then the complex oracle: each side within its own share."""
    if not all(isinstance(a, int | float | complex) for a in args):
        return None
    fixed = componentwise_result(function, args, dtype)
    if fixed is not None:
        allowed, rule = fixed
        r, c = complex(ref_value), complex(cand_value)
        side = judge_sides(meets(r, allowed), meets(c, allowed))
        if side is None:  # both conform: they differ where the standard allows either
            return Blame(
                "undecided",
                f"{rule}; reference {r!r} and candidate {c!r} both conform {at}",
                "standard-rule",
            )
        return Blame(
            side,
            f"{rule}, so {function}({', '.join(map(repr, args))}) is ({allowed[0][0]!r}, {' or '.join(map(repr, allowed[1]))}j); reference {r!r}, candidate {c!r} {at}",
            "standard-rule",
        )
    if len(args) == 1:
        case = complex_special_case(function, complex(args[0]))
        if case is not None:
            part = "float32" if dtype == "complex64" else "float64"
            share = _allowance(bound)
            side = judge_sides(
                _complex_matches(complex(ref_value), case, part, share),
                _complex_matches(complex(cand_value), case, part, share),
            )
            if side is None:
                return None
            return Blame(
                side,
                f"special case {case.rule} {at}; reference {complex(ref_value)!r}, "
                f"candidate {complex(cand_value)!r}",
                "special-case",
            )
    truth = true_complex(function, [complex(a) for a in args])
    if truth is None:
        return None
    share = _allowance(bound)
    ref_ulps = complex_ulps_from_truth(complex(ref_value), truth, dtype)
    cand_ulps = complex_ulps_from_truth(complex(cand_value), truth, dtype)
    side = judge_sides(ref_ulps <= share, cand_ulps <= share)
    if side is None:
        r, c = complex(ref_value), complex(cand_value)
        return _open_zero_sign(function, args, r, c, truth, at)
    return Blame(
        side,
        f"true {function}({', '.join(map(repr, args))}) = {complex(truth)!r}; reference is "
        f"{ref_ulps:.3g} ULP off, candidate {cand_ulps:.3g} ULP (each side may be "
        f"{share:.3g}) {at}",
        "oracle",
    )


def _open_zero_sign(
    function: str, args: Sequence[Any], r: complex, c: complex, truth: Any, at: str
) -> Blame | None:
    """Zero components of opposite signs, both sides within the bound: neither is blamed.

    The standard "does not specify accuracy requirements for arithmetic or functional
    operations involving complex-valued floating-point operands" (2024.12 on), so outside
    the special cases (judged before this) no text fixes the sign of a complex zero: not
    where the true component is exactly zero (``acos(-0.635 + 0j)``'s imaginary part), not
    where it is held within the bound by a zero (``divide``'s ``-3e-128`` beside ``|z|`` of
    ``4.8e-57``), and not where it is too small for the dtype (``log1p(-0 + 1.2e-38j)``'s
    real part ``6.9e-77``: a bound relative to ``|z|`` admits a nonzero value of either sign
    there, so it cannot require one sign of zero).
    """
    for part, ref_part, cand_part, true_part in (
        ("real", r.real, c.real, truth.real),
        ("imaginary", r.imag, c.imag, truth.imag),
    ):
        if ref_part != 0 or cand_part != 0:
            continue
        if math.copysign(1.0, ref_part) == math.copysign(1.0, cand_part):
            continue
        held = "is exactly zero" if true_part == 0 else f"is {float(true_part)!r}"
        return Blame(
            "undecided",
            f"the {part} part of true {function}({', '.join(map(repr, args))}) {held}, and "
            "both zeros are within the bound of it: the standard sets no accuracy for "
            "complex results and no special case fixes the sign of this zero, so it leaves "
            f"it open; reference {r!r}, candidate {c!r} {at}",
            "standard-rule",
        )
    return None


def _open_real_zero_sign(
    function: str,
    floats: Sequence[float],
    r: float,
    c: float,
    truth: Any,
    at: str,
    bound: Bound,
) -> Blame | None:
    """Two zeros of opposite signs from a function whose accuracy the standard leaves to
    the library: neither is blamed.

    The standard "does not precisely define the behavior" of ``exp``, ``log1p``,
    ``logaddexp``... "except to require specific results for certain argument values" (its
    special cases, judged before this): outside them a zero's sign is not fixed, for an
    exact zero (``logaddexp(-inf, -0.0)`` is ``log(1)``) or for a truth that rounds to
    zero, which a bound of an ULP or more lets a nonzero value of either sign stand for.
    Correctly rounded functions (IEEE 754's basic operations, ``sqrt``, ``reciprocal``,
    the rounding to a zero of the truth's sign) keep their signs: the bound is 0 ULP there.
    """
    if not (r == 0 and c == 0) or math.copysign(1.0, r) == math.copysign(1.0, c):
        return None
    if bound.kind != "ulp" or not bound.ulps:
        return None  # correctly rounded (or not an elementwise bound): the sign is decided
    held = "exactly 0" if truth == 0 else f"{float(truth)!r}"
    return Blame(
        "undecided",
        f"true {function}({', '.join(map(repr, floats))}) is {held}: the standard does not "
        f"precisely define {function} outside its special cases, and none fixes the sign "
        f"of this zero, so it leaves it open; reference {r!r}, candidate {c!r} {at}",
        "standard-rule",
    )


def _judge_integer_reduction(
    function: str, terms: Sequence[Any], r: Any, c: Any, dtype: str, loc: Location
) -> Blame | None:
    """Integer sums and products are exact while the true result fits the result dtype."""
    name = function.removeprefix("xp.")
    if dtype == "bool" or not all(float(t) == int(t) for t in terms):
        return None
    ints = [int(t) for t in terms]
    if name in ("sum", "cumulative_sum"):
        truth = sum(ints)
    elif name in ("prod", "cumulative_prod"):
        truth = math.prod(ints)
    else:
        return None
    bounds = integer_range(dtype)
    if bounds is None or not bounds[0] <= truth <= bounds[1]:
        return None  # overflow is not specified by the standard
    side = judge_sides(r == truth, c == truth)
    if side is None:
        return None
    return Blame(
        side,
        f"exact {name} of {len(ints)} integers = {truth}, which fits {dtype}; reference {r!r}, "
        f"candidate {c!r} at {list(loc.index)}",
        "standard-rule",
    )


def _ieee_reduction(name: str, terms: list[float]) -> tuple[float, str] | None:
    """The result a reduction over NaN or infinite terms must have, or None (all finite).

    ``max``/``min`` propagate NaN as the standard specifies and are otherwise exact; sums
    and products follow IEEE 754 (NaN in, NaN out; +inf + -inf and inf * 0 are NaN).
    """
    has_nan = any(math.isnan(t) for t in terms)
    if name in ("max", "min"):
        if has_nan:
            return math.nan, "the standard: NaN values propagate"
        return (max(terms) if name == "max" else min(terms)), "max/min select a term exactly"
    infinite = [t for t in terms if math.isinf(t)]
    if not has_nan and not infinite:
        return None
    if has_nan:
        return math.nan, "IEEE 754: a NaN term makes the result NaN"
    if name in ("sum", "mean", "cumulative_sum"):
        if len(set(infinite)) > 1:
            return math.nan, "IEEE 754: +inf + -inf is NaN"
        return infinite[0], "IEEE 754: an infinite term dominates the sum"
    if name in ("prod", "cumulative_prod"):
        if any(t == 0 for t in terms):
            return math.nan, "IEEE 754: inf * 0 is NaN"
        negative = sum(math.copysign(1.0, t) < 0 for t in terms) % 2 == 1
        return (-math.inf if negative else math.inf), "IEEE 754: an infinite factor"
    return None


def judge_reduction(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    r: float,
    c: float,
    dtype: str,
    loc: Location,
) -> Blame | None:
    terms = reduced_terms(function, args, kwargs, loc.index)
    if terms and dtype in COMPLEX:
        return _judge_complex_sum(function, terms, complex(r), complex(c), dtype, loc)
    if not terms or dtype == "bool":
        return None
    if dtype not in EPSILON:
        return _judge_integer_reduction(function, terms, r, c, dtype, loc)
    special = _ieee_reduction(function.removeprefix("xp."), [float(t) for t in terms])
    if special is not None:
        value, rule = special
        side = judge_sides(_same_special(float(r), value), _same_special(float(c), value))
        if side is None:
            return None
        return Blame(
            side,
            f"{rule}: {function} must be {value!r} at {list(loc.index)}; reference {r!r}, "
            f"candidate {c!r}",
            "standard-rule" if rule.startswith("max/min") else "special-case",
        )
    name = function.removeprefix("xp.")
    n = len(terms)
    eps = EPSILON[dtype]
    if name in ("var", "std"):
        return _judge_spread(name, [float(t) for t in terms], kwargs, r, c, dtype, loc)
    truth = true_reduction(function, terms)
    if truth is None:
        return None
    magnitude = math.fsum(abs(float(t)) for t in terms)
    if name == "mean":
        magnitude /= n
    # Each side within depth * eps * sum|x| of the truth, plus the final rounding: depth
    # log2(n) plus a block for a robust sum, n - 1 for scans and dot products (any order
    # of summation meets that); see diffcheck.values.accuracy.
    limit = summation_depth(name, n) * eps * magnitude
    if name in ("prod", "cumulative_prod"):
        limit = n * eps * abs(float(truth))
    ref_off, cand_off = (abs(float(v) - float(truth)) for v in (r, c))
    ref_ok = ulps_from_truth(r, truth, dtype) <= 0.5 + 1e-9 or ref_off <= limit
    cand_ok = ulps_from_truth(c, truth, dtype) <= 0.5 + 1e-9 or cand_off <= limit
    side = judge_sides(ref_ok, cand_ok)
    if side is None:
        return None
    return Blame(
        side,
        f"true {function} over {n} terms = {float(truth)!r} (allowed error "
        f"{limit:.3g}); reference is {ref_off:.3g} off, candidate {cand_off:.3g} "
        f"at {list(loc.index)}",
        "oracle",
    )


def _judge_complex_sum(
    function: str, terms: Sequence[Any], r: complex, c: complex, dtype: str, loc: Location
) -> Blame | None:
    """A complex ``sum``/``mean``/``cumulative_sum`` of finite terms, each component by fsum.

    Each side's components must be within the robust-sum bound of the exact ones, measured
    against ``sum |z|`` (the real case's bound, for both parts at once).
    """
    name = function.removeprefix("xp.")
    values = [complex(t) for t in terms]
    if name not in ("sum", "mean", "cumulative_sum") or not all(
        math.isfinite(v.real) and math.isfinite(v.imag) for v in values
    ):
        return None
    n = len(values)
    truth = complex(math.fsum(v.real for v in values), math.fsum(v.imag for v in values))
    magnitude = math.fsum(abs(v) for v in values)
    if name == "mean":
        truth, magnitude = truth / n, magnitude / n
    eps = EPSILON["float32" if dtype == "complex64" else "float64"]
    limit = summation_depth(name, n) * eps * magnitude + eps * abs(truth)
    ref_off, cand_off = (max(abs(v.real - truth.real), abs(v.imag - truth.imag)) for v in (r, c))
    side = judge_sides(ref_off <= limit, cand_off <= limit)
    if side is None:
        return None
    return Blame(
        side,
        f"true {function} over {n} complex terms = {truth!r} (math.fsum per component; "
        f"allowed error {limit:.3g}); reference is {ref_off:.3g} off, candidate "
        f"{cand_off:.3g} at {list(loc.index)}",
        "oracle",
    )


def _judge_spread(
    name: str,
    terms: list[float],
    kwargs: Mapping[str, Any],
    r: float,
    c: float,
    dtype: str,
    loc: Location,
) -> Blame | None:
    """``var``/``std`` against the true variance (fsum, two passes), each side in its bound."""
    correction = float(kwargs.get("correction") or 0.0)
    variance = true_variance(terms, correction)
    if variance is None:
        return None
    eps = EPSILON[dtype]
    allowed = variance_allowance(terms, variance, eps, correction)
    truth = variance
    if name == "std":
        truth = math.sqrt(variance)
        allowed = std_allowance(variance, allowed, eps)
    ref_off, cand_off = abs(float(r) - truth), abs(float(c) - truth)
    side = judge_sides(ref_off <= allowed, cand_off <= allowed)
    if side is None:
        return None
    return Blame(
        side,
        f"true {name} over {len(terms)} terms = {truth!r} (math.fsum, two passes; allowed "
        f"error {allowed:.3g}, the two-pass bound with a robust sum); reference is "
        f"{ref_off:.3g} off, candidate {cand_off:.3g} at {list(loc.index)}",
        "oracle",
    )


def _remainder_zero_sign(
    function: str, floats: Sequence[float], r: float, c: float, at: str
) -> Blame | None:
    """Two zeros of opposite signs from ``remainder``: "each element-wise result must have
    the same sign as the respective element x2_i" (the standard), so a zero result takes
    the divisor's sign (``remainder(-4.0, 2.0)`` is ``+0.0``)."""
    if function.removeprefix("xp.") != "remainder" or len(floats) != 2:
        return None
    divisor = floats[1]
    if not (r == 0 and c == 0) or divisor == 0 or math.isnan(divisor):
        return None
    sign = math.copysign(1.0, divisor)
    side = judge_sides(math.copysign(1.0, r) == sign, math.copysign(1.0, c) == sign)
    if side is None:
        return None
    return Blame(
        side,
        f"the standard: remainder's result has the sign of x2 ({divisor!r}), so the zero "
        f"remainder({floats[0]!r}, {divisor!r}) is {'+' if sign > 0 else '-'}0.0; reference "
        f"{r!r}, candidate {c!r} {at}",
        "standard-rule",
    )


def _floor_divide_element(
    function: str, floats: Sequence[float], r: float, c: float, dtype: str, at: str
) -> Blame | None:
    """``floor_divide`` of finite nonzero floats: ``floor(divide(x1, x2))``, which the
    standard prefers, or Python's floor of the exact quotient, which it allows; a side
    giving neither is wrong."""
    if function.removeprefix("xp.") != "floor_divide" or len(floats) != 2:
        return None
    allowed = floor_divide_results(floats[0], floats[1], np.dtype(dtype))
    if allowed is None:
        return None

    def ok(value: float) -> bool:
        return any(_same_special(value, v) for v in allowed)

    side = judge_sides(ok(r), ok(c))
    if side is None:
        return None
    return Blame(
        side,
        f"the standard: floor_divide({floats[0]!r}, {floats[1]!r}) is floor(divide(x1, x2)) "
        f"or, following Python, the floor of the exact quotient: "
        f"{' or '.join(map(repr, allowed))}; reference {r!r}, candidate {c!r} {at}",
        "standard-rule",
    )


def _zero_sign_by_truth(
    function: str, floats: Sequence[float], r: float, c: float, truth: Any, at: str
) -> Blame | None:
    """Two zeros of opposite signs for a nonzero true value: the rounded zero keeps its sign.

    A true value too small for the dtype rounds to a zero of its own sign (IEEE 754
    round-to-nearest), so ``-6e-45 * 1e-19`` in float32 is ``-0.0``.
    """
    if not (r == 0 and c == 0) or math.copysign(1.0, r) == math.copysign(1.0, c):
        return None
    if truth == 0:
        return None  # an exact zero: its sign is the special cases' business
    negative = bool(truth < 0)
    side = judge_sides(
        math.copysign(1.0, r) < 0 if negative else math.copysign(1.0, r) > 0,
        math.copysign(1.0, c) < 0 if negative else math.copysign(1.0, c) > 0,
    )
    if side is None:
        return None
    sign = "-" if negative else "+"
    return Blame(
        side,
        f"true {function}({', '.join(map(repr, floats))}) = {float(truth)!r} rounds to "
        f"{sign}0.0 (a zero keeps the sign of the value it rounds); reference {r!r}, "
        f"candidate {c!r} {at}",
        "oracle",
    )
