"""Blame: which side of a failed comparison is wrong, and why.

NumPy is not always right, so a divergence is judged by evidence independent of both
sides, strongest first:

1. **special-case**: the Array API standard's special-case rules for elementwise functions
   (NaN, ±inf, ±0 inputs), transcribed in :mod:`diffcheck.values.special_cases`;
2. **oracle**: the true value at high precision (:mod:`diffcheck.values.oracle`) for
   elementwise math and reductions; a side beyond its own share of the bound is wrong;
3. **standard-rule**: the standard's rules for dtypes (promotion, result dtypes of sums and
   index functions), shapes (broadcasting, reductions), integers (exact arithmetic while it
   fits, shifts), comparisons, and which functions exist;
4. **vote**: further backends' results, only when nothing above decides, recorded as such.

A side judged wrong by no evidence is never blamed: the answer is then ``undecided``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .compare import host_value
from .dtypes import COMPLEX, expected_result_dtype
from .elements import element_args, reduced_terms
from .model import Blame, Bound, Evidence, Location, Side, ValueVerdict
from .oracle import (
    complex_ulps_from_truth,
    true_complex,
    true_reduction,
    true_value,
    ulps_from_truth,
)
from .rules import exact_element, expected_shape, integer_range
from .special_cases import special_case
from .ulp import EPSILON
from .vote import vote

__all__ = ["Blame", "Evidence", "Side", "blame"]


def _judge(ref_ok: bool, cand_ok: bool) -> Side | None:
    if ref_ok and cand_ok:
        return None
    if ref_ok:
        return "candidate"
    if cand_ok:
        return "reference"
    return "both"


def _input_dtypes(args: Sequence[Any]) -> list[str]:
    """Dtype names of the array arguments (Python scalars take part in no promotion)."""
    names = []
    for arg in args:
        if isinstance(arg, bool | int | float | complex):
            continue
        names.append(host_value(arg)[1])
    return names


def _blame_call(
    function: str, args: Sequence[Any], reference: Any, candidate: Any, kind: str
) -> Blame | None:
    missing_ref, missing_cand = reference is None, candidate is None
    if not (missing_ref or missing_cand):
        return None
    side: Side = (
        "both" if missing_ref and missing_cand else ("reference" if missing_ref else "candidate")
    )
    if kind == "missing":
        return Blame(
            side, f"the standard defines {function}; the {side} namespace lacks it", "standard-rule"
        )
    if _outside_domain(function, args):
        return Blame(
            "undecided",
            f"the standard specifies no result of {function} for these inputs (integer "
            "division by zero or a negative shift count), so raising is allowed",
            "standard-rule",
        )
    required = expected_result_dtype(function, *_input_dtypes(args))
    if required is None:
        return None  # the standard does not define a result here: raising may be right
    return Blame(
        side,
        f"the standard defines {function} for {', '.join(_input_dtypes(args))} "
        f"inputs (result {required}); the {side} raised",
        "standard-rule",
    )


def _outside_domain(function: str, args: Sequence[Any]) -> bool:
    """Inputs for which the standard specifies no integer result (so raising is allowed)."""
    name = function.removeprefix("xp.")
    if len(args) != 2:
        return False
    divisor = host_value(args[1])[0] if not isinstance(args[1], int) else np.asarray(args[1])
    if divisor.dtype.kind not in "iu" and not isinstance(args[1], int):
        return False
    if name in ("floor_divide", "remainder"):
        return bool(np.any(divisor == 0))
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        return bool(np.any(divisor < 0))
    return False


def _blame_dtype(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    default_int: str,
) -> Blame | None:
    inputs = _input_dtypes(args)
    required = expected_result_dtype(
        function, *inputs, default_int=default_int, dtype=kwargs.get("dtype")
    )
    if required is None:
        return None
    ref, cand = host_value(_first(reference))[1], host_value(_first(candidate))[1]
    side = _judge(ref == required, cand == required)
    if side is None:
        return None
    return Blame(
        side,
        f"the standard requires {function}({', '.join(inputs)}) -> {required}; "
        f"reference returns {ref}, candidate {cand}",
        "standard-rule",
    )


def _first(value: Any) -> Any:
    if isinstance(value, list | tuple) and not (len(value) == 2 and isinstance(value[1], str)):
        return value[0] if value else np.asarray([])
    return value


def _blame_shape(
    function: str, args: Sequence[Any], kwargs: Mapping[str, Any], reference: Any, candidate: Any
) -> Blame | None:
    shapes = [tuple(host_value(a)[0].shape) for a in args if not isinstance(a, int | float)]
    required = expected_shape(function, shapes, kwargs)
    if required is None:
        return None
    ref = tuple(host_value(_first(reference))[0].shape)
    cand = tuple(host_value(_first(candidate))[0].shape)
    side = _judge(ref == required, cand == required)
    if side is None:
        return None
    return Blame(
        side,
        f"the standard requires shape {required} from inputs {shapes}; "
        f"reference {ref}, candidate {cand}",
        "standard-rule",
    )


def _output(value: Any, output: int) -> tuple[np.ndarray[Any, Any], str]:
    if isinstance(value, list | tuple) and not (len(value) == 2 and isinstance(value[1], str)):
        value = value[output]
    return host_value(value)


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


def _judge_element(
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
        side = _judge(ref_value == required, cand_value == required)
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
                side = _judge(_same_special(r, value), _same_special(c, value))
            else:  # an approximation to a multiple of pi: each side within its share
                share = _allowance(bound)
                side = _judge(
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
        truth = true_value(function, floats)
        if truth is not None:
            share = _allowance(bound)
            ref_ulps, cand_ulps = (ulps_from_truth(v, truth, dtype) for v in (r, c))
            side = _judge(ref_ulps <= share, cand_ulps <= share)
            if side is None:
                return None
            return Blame(
                side,
                f"true {function}({', '.join(map(repr, floats))}) = "
                f"{float(truth)!r}; reference is {ref_ulps:.3g} ULP off, candidate "
                f"{cand_ulps:.3g} ULP (each side may be {share:.3g}) {at}",
                "oracle",
            )
    return None


def _judge_complex(
    function: str,
    args: Sequence[Any],
    ref_value: Any,
    cand_value: Any,
    dtype: str,
    at: str,
    bound: Bound,
) -> Blame | None:
    """The complex oracle: each side's distance from the true value, in its own share."""
    if not all(isinstance(a, int | float | complex) for a in args):
        return None
    truth = true_complex(function, [complex(a) for a in args])
    if truth is None:
        return None
    share = _allowance(bound)
    ref_ulps = complex_ulps_from_truth(complex(ref_value), truth, dtype)
    cand_ulps = complex_ulps_from_truth(complex(cand_value), truth, dtype)
    side = _judge(ref_ulps <= share, cand_ulps <= share)
    if side is None:
        return None
    return Blame(
        side,
        f"true {function}({', '.join(map(repr, args))}) = {complex(truth)!r}; reference is "
        f"{ref_ulps:.3g} ULP off, candidate {cand_ulps:.3g} ULP (each side may be "
        f"{share:.3g}) {at}",
        "oracle",
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
    side = _judge(r == truth, c == truth)
    if side is None:
        return None
    return Blame(
        side,
        f"exact {name} of {len(ints)} integers = {truth}, which fits {dtype}; reference {r!r}, "
        f"candidate {c!r} at {list(loc.index)}",
        "standard-rule",
    )


def _judge_reduction(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    r: float,
    c: float,
    dtype: str,
    loc: Location,
) -> Blame | None:
    terms = reduced_terms(function, args, kwargs, loc.index)
    if not terms:
        return None
    if dtype not in EPSILON:
        return _judge_integer_reduction(function, terms, r, c, dtype, loc)
    truth = true_reduction(function, terms)
    if truth is None:
        return None
    n = len(terms)
    eps = EPSILON[dtype]
    magnitude = math.fsum(abs(float(t)) for t in terms)
    if function.removeprefix("xp.") == "mean":
        magnitude /= n
    # Recursive summation is within (n - 1) * eps * sum|x| of the truth, plus the final
    # rounding; any order of summation meets it, so a side beyond it is wrong.
    limit = (n - 1) * eps * magnitude
    if function.removeprefix("xp.") in ("prod", "cumulative_prod"):
        limit = n * eps * abs(float(truth))
    ref_off, cand_off = (abs(float(v) - float(truth)) for v in (r, c))
    ref_ok = ulps_from_truth(r, truth, dtype) <= 0.5 + 1e-9 or ref_off <= limit
    cand_ok = ulps_from_truth(c, truth, dtype) <= 0.5 + 1e-9 or cand_off <= limit
    side = _judge(ref_ok, cand_ok)
    if side is None:
        return None
    return Blame(
        side,
        f"true {function} over {n} terms = {float(truth)!r} (allowed error "
        f"{limit:.3g}); reference is {ref_off:.3g} off, candidate {cand_off:.3g} "
        f"at {list(loc.index)}",
        "oracle",
    )


def _blame_values(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    verdict: ValueVerdict,
) -> Blame | None:
    reduction = reduced_terms(function, args, kwargs, ()) is not None or _is_reduction(function)
    for loc in (verdict.first, verdict.worst):
        if loc is None:
            continue
        ref, dtype = _output(reference, loc.output)
        cand, _ = _output(candidate, loc.output)
        shape = tuple(int(n) for n in ref.shape)
        ref_value, cand_value = ref[loc.index].item(), cand[loc.index].item()
        found: Blame | None = None
        if reduction:
            found = _judge_reduction(function, args, kwargs, ref_value, cand_value, dtype, loc)
        else:
            elements = element_args(args, loc.index, shape)
            if elements is not None:
                found = _judge_element(
                    function, elements, kwargs, ref_value, cand_value, dtype, loc, verdict.bound
                )
        if found is not None:
            return found
    return None


def _is_reduction(function: str) -> bool:
    from .bounds import REDUCTIONS

    return function.removeprefix("xp.") in REDUCTIONS


def blame(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    verdict: ValueVerdict,
    *,
    voters: Sequence[tuple[str, Callable[..., Any]]] = (),
    default_int: str = "int64",
) -> Blame:
    """Decide which side of a failed comparison is wrong, from independent evidence.

    Parameters
    ----------
    function
        The standard's function name (``add``, ``cumulative_sum``, ``linalg.vecdot``...).
    args, kwargs
        The host inputs the function was called with (NumPy arrays in their own dtype, or
        Python scalars) and its keyword arguments.
    reference, candidate
        Both host results (as for :func:`~diffcheck.values.compare_values`); None for a
        side that lacks the function or raised.
    verdict
        The comparison's verdict; it says what kind of failure to judge and where.
    voters
        ``(name, call)`` pairs of further backends, ``call(*args, **kwargs)`` returning a
        host result; asked only when no rule or oracle decides.
    default_int
        The default integer dtype of the namespaces (the standard lets it be int32 or
        int64); it fixes the result dtype of ``argmax``, ``sum`` of integers and the like.

    Returns
    -------
    Blame
        ``candidate``, ``reference``, ``both`` or ``undecided``, with its evidence and why.
    """
    if verdict.passed:
        return Blame("undecided", "the two sides agree: nothing to blame", "none")
    kind = verdict.kind
    found: Blame | None = None
    if kind in ("missing", "raises"):
        found = _blame_call(function, args, reference, candidate, kind)
    elif kind == "dtype":
        found = _blame_dtype(function, args, kwargs, reference, candidate, default_int)
    elif kind == "shape":
        found = _blame_shape(function, args, kwargs, reference, candidate)
    elif reference is not None and candidate is not None:
        found = _blame_values(function, args, kwargs, reference, candidate, verdict)
    if found is not None:
        return found
    if reference is not None and candidate is not None:
        voted = vote(function, args, kwargs, reference, candidate, verdict, voters)
        if voted is not None:
            return voted
    return Blame(
        "undecided",
        f"no special case, oracle or standard rule decides this {kind} "
        "failure of {function}, and no further backend voted".replace("{function}", function),
        "none",
    )
