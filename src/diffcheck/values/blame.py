"""Blame: which side of a failed comparison is wrong, and why.

NumPy is not always right, so a divergence is judged by evidence independent of both
sides, strongest first:

1. **special-case**: the Array API standard's special-case rules for elementwise functions
   (NaN, ±inf, ±0 inputs), transcribed in :mod:`diffcheck.values.special_cases`;
2. **oracle**: the true value at high precision (:mod:`diffcheck.values.oracle`) for
   elementwise math and reductions; a side beyond its own share of the bound is wrong;
3. **standard-rule**: results the standard fixes exactly (:mod:`diffcheck.values.exact`:
   empty reductions, ``can_cast``, ``isin``, ``round``, exact determinants, asked first for
   value failures), the standard's rules for dtypes (promotion, result dtypes of sums and
   index functions), shapes (broadcasting, reductions), integers (exact arithmetic while it
   fits, shifts), comparisons, and which functions exist;
4. **vote**: further backends' results, only when nothing above decides, recorded as such.

A side judged wrong by no evidence is never blamed: the answer is then ``undecided``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .compare import host_value
from .defaults import DefaultDtypes
from .dtypes import (
    COMPLEX,
    INTEGER,
    REAL_FLOATING,
    expected_result_dtype,
    expected_result_dtypes,
    promote,
    scalars_fit,
)
from .elements import element_args
from .exact import blame_by_exact_answer
from .judges import judge_element, judge_reduction, judge_sides
from .model import Blame, Evidence, Side, ValueVerdict
from .rules import expected_shape
from .spec import is_standard_name
from .vote import vote

__all__ = ["Blame", "Evidence", "Side", "astype_refusal_allowed", "blame"]


def _input_dtypes(args: Sequence[Any]) -> list[str]:
    """Dtype names of the array arguments.

    Python scalars take part in no promotion, and other arguments (a dtype given by name,
    a shape, None) are not arrays at all.
    """
    names = []
    for arg in args:
        tagged = isinstance(arg, tuple) and len(arg) == 2 and isinstance(arg[1], str)
        if isinstance(arg, np.ndarray | np.generic) or tagged:
            names.append(host_value(arg)[1])
    return names


def _missing_name(reason: str | None) -> str | None:
    """The attribute a namespace lacked, from the ``missing`` verdict's reason."""
    found = re.search(r"has no attribute '([^']+)'", reason or "")
    return found.group(1) if found else None


def _blame_call(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    verdict: ValueVerdict,
    dtype_args: Mapping[str, str] | None = None,
    positional: Sequence[Any] = (),
) -> Blame | None:
    missing_ref, missing_cand = reference is None, candidate is None
    if not (missing_ref or missing_cand):
        return None
    side: Side = (
        "both" if missing_ref and missing_cand else ("reference" if missing_ref else "candidate")
    )
    if verdict.kind == "missing":
        lacked = _missing_name(verdict.reason) or function
        if not is_standard_name(lacked):
            return Blame(
                "undecided",
                f"the {side} namespace lacks {lacked}, which the standard does not define",
                "standard-rule",
            )
        return Blame(
            side, f"the standard defines {lacked}; the {side} namespace lacks it", "standard-rule"
        )
    if function.removeprefix("xp.") == "astype":
        return _blame_astype(args, dtype_args, side)
    if _outside_domain(function, args):
        return Blame(
            "undecided",
            f"the standard specifies no result of {function} for these inputs (integer "
            "division by zero or a negative shift count), so raising is allowed",
            "standard-rule",
        )
    silent = _silent_on_empty(function, args, kwargs)
    if silent is not None:
        return Blame("undecided", silent, "standard-rule")
    if not scalars_fit(promote(_input_dtypes(args)), args):
        return Blame(
            "undecided",
            f"the standard leaves {function} of a Python scalar with arrays of another kind "
            "open, so raising is allowed",
            "standard-rule",
        )
    # A dtype given by name (full(shape, fill, dtype=uint64)) fixes the result as an input's
    # dtype does (full_like): the same rule decides both.
    given = (dtype_args or {}).get("dtype")
    required = expected_result_dtype(function, *_input_dtypes(args), dtype=given)
    if required is None:  # several outputs (unique_all): each has its dtype, or none is set
        outputs = expected_result_dtypes(function, *_input_dtypes(args), dtype=given)
        if len(outputs) > 1 and all(outputs):
            required = ", ".join(str(o) for o in outputs)
    if required is None:
        return None  # the standard does not define a result here: raising may be right
    if not _integers_fit(required, [*args, *positional]):
        return Blame(
            "undecided",
            f"a Python integer argument of {function} lies outside {required}'s range, which "
            "the standard leaves unspecified, so raising is allowed",
            "standard-rule",
        )
    inputs = f"{', '.join(_input_dtypes(args))} inputs" if _input_dtypes(args) else "these inputs"
    return Blame(
        side,
        f"the standard defines {function} for {inputs} (result {required}); the {side} raised",
        "standard-rule",
    )


def astype_refusal_allowed(args: Sequence[Any], dtype_args: Mapping[str, str] | None) -> str | None:
    """Why refusing this ``astype`` conforms, or None when the standard defines the cast.

    "Casting a complex floating-point array to a real-valued data type should not be
    permitted" (2022.12 on); every other cast is defined, complex to ``bool`` included
    ("a value of 0 + 0j must cast to False").
    """
    target = (dtype_args or {}).get("#")
    sources = _input_dtypes(args)
    if target is None or not sources:
        return None
    if sources[0] in COMPLEX and (target in INTEGER or target in REAL_FLOATING):
        return (
            f"the standard: casting a complex floating-point array to a real-valued data type "
            f"({sources[0]} to {target}) should not be permitted"
        )
    return None


def _blame_astype(
    args: Sequence[Any], dtype_args: Mapping[str, str] | None, side: Side
) -> Blame | None:
    target = (dtype_args or {}).get("#")
    sources = _input_dtypes(args)
    if target is None or not sources or astype_refusal_allowed(args, dtype_args) is not None:
        return None
    return Blame(
        side,
        f"the standard defines astype from {sources[0]} to {target}; the {side} raised",
        "standard-rule",
    )


def _silent_on_empty(function: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str | None:
    """Why raising is allowed for a reduction over no elements whose result the standard
    does not give, or None: the maximum and minimum of nothing are "implementation-defined"
    (an error allowed), and ``vector_norm`` with ``ord`` of +-inf is such a maximum or
    minimum of ``|x|``, of which its text says nothing for no elements."""
    name = function.removeprefix("xp.")
    arrays = [host_value(a)[0] for a in args if isinstance(a, np.ndarray | np.generic)]
    if not arrays:
        return None
    if name == "linalg.vector_norm" and abs(float(kwargs.get("ord", 2))) != math.inf:
        return None
    if name not in ("max", "min", "linalg.vector_norm"):
        return None
    x, axis = arrays[0], kwargs.get("axis")
    axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    try:
        terms = int(np.prod([x.shape[a] for a in axes])) if x.ndim else 1
    except (IndexError, TypeError):
        return None
    if terms:
        return None
    return (
        f"the standard gives no result of {name} over no elements (a maximum or minimum of "
        "nothing), so raising is allowed"
    )


def _integers_fit(dtype: str, args: Sequence[Any]) -> bool:
    """Whether every Python integer argument is a value of the integer ``dtype`` (or any
    other dtype: the range matters to integers only)."""
    from .rules import integer_range

    limits = integer_range(dtype)
    if limits is None:
        return True
    scalars = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
    return all(limits[0] <= a <= limits[1] for a in scalars)


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
    defaults: tuple[DefaultDtypes, DefaultDtypes],
) -> Blame | None:
    inputs = _input_dtypes(args)
    if not scalars_fit(promote(inputs), args):
        return None  # a Python scalar of another kind: the standard requires no dtype
    refs, cands = _outputs(reference), _outputs(candidate)
    wanted_ref, wanted_cand = (
        expected_result_dtypes(
            function, *inputs, outputs=len(refs), dtype=kwargs.get("dtype"), **own.options()
        )
        for own in defaults
    )
    rows = zip(refs, cands, wanted_ref, wanted_cand, strict=False)
    for output, (r_value, c_value, need_ref, need_cand) in enumerate(rows):
        ref, cand = host_value(r_value)[1], host_value(c_value)[1]
        if need_ref is None or need_cand is None or (ref, cand) == (need_ref, need_cand):
            continue
        side = judge_sides(ref == need_ref, cand == need_cand)
        if side is None:
            continue
        label = f" output {output}" if len(refs) > 1 else ""
        required = (
            need_ref
            if need_ref == need_cand
            else f"{need_ref} of the reference and {need_cand} of the candidate (each "
            "side's declared default dtypes)"
        )
        return Blame(
            side,
            f"the standard requires {function}({', '.join(inputs)}){label} -> {required}; "
            f"reference returns {ref}, candidate {cand}",
            "standard-rule",
        )
    return None


def _outputs(value: Any) -> list[Any]:
    if isinstance(value, list | tuple) and not (len(value) == 2 and isinstance(value[1], str)):
        return list(value)
    return [value]


def _first(value: Any) -> Any:
    if isinstance(value, list | tuple) and not (len(value) == 2 and isinstance(value[1], str)):
        return value[0] if value else np.asarray([])
    return value


def _blame_shape(
    function: str, args: Sequence[Any], kwargs: Mapping[str, Any], reference: Any, candidate: Any
) -> Blame | None:
    shapes = [
        tuple(host_value(a)[0].shape)
        for a in args
        if isinstance(a, np.ndarray | np.generic)
        or (isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], str))
    ]
    required = expected_shape(function, shapes, kwargs)
    if required is None:
        return None
    ref = tuple(host_value(_first(reference))[0].shape)
    cand = tuple(host_value(_first(candidate))[0].shape)
    side = judge_sides(ref == required, cand == required)
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


def _blame_values(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    verdict: ValueVerdict,
) -> Blame | None:
    reduction = _is_reduction(function)
    for loc in (verdict.first, verdict.worst):
        if loc is None:
            continue
        ref, dtype = _output(reference, loc.output)
        cand, _ = _output(candidate, loc.output)
        shape = tuple(int(n) for n in ref.shape)
        ref_value, cand_value = ref[loc.index].item(), cand[loc.index].item()
        found: Blame | None = None
        if reduction:
            found = judge_reduction(function, args, kwargs, ref_value, cand_value, dtype, loc)
        else:
            elements = element_args(args, loc.index, shape)
            if elements is not None:
                found = judge_element(
                    function, elements, kwargs, ref_value, cand_value, dtype, loc, verdict.bound
                )
        if found is not None:
            return found
    return None


def _is_reduction(function: str) -> bool:
    from .bounds import REDUCTIONS

    return function.removeprefix("xp.") in REDUCTIONS | {"max", "min"}


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
    defaults: tuple[DefaultDtypes, DefaultDtypes] | None = None,
    dtype_args: Mapping[str, str] | None = None,
    positional: Sequence[Any] = (),
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
        The default integer (and index) dtype of both namespaces when ``defaults`` is not
        given (the standard lets it be int32 or int64); it fixes the result dtype of
        ``argmax``, ``sum`` of integers and the like.
    defaults
        Each side's declared default dtypes (reference, candidate), as
        :func:`~diffcheck.values.defaults.declared_defaults` reads them: each side is
        held to its own.
    dtype_args
        Arguments that name a dtype (``can_cast``'s ``from_`` and ``to``), by parameter.
    positional
        Arguments passed after the arrays that are not arrays (``full``'s shape and fill):
        a Python integer among them outside the result dtype's range leaves a refusal open.

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
        found = _blame_call(
            function, args, kwargs, reference, candidate, verdict, dtype_args, tuple(positional)
        )
    elif kind == "dtype":
        if defaults is None:
            same = DefaultDtypes(integral=default_int, indexing=default_int, declared=True)
            defaults = (same, same)
        found = _blame_dtype(function, args, kwargs, reference, candidate, defaults)
    elif kind == "shape":
        found = _blame_shape(function, args, kwargs, reference, candidate)
    elif reference is not None and candidate is not None:
        # An answer the standard fixes exactly decides before any oracle or vote.
        found = blame_by_exact_answer(function, args, kwargs, reference, candidate, dtype_args)
        if found is None:
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
