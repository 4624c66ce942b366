"""Whole results the standard fixes exactly, computed without either backend.

Blame asks these before any oracle or vote: the empty product is 1 and the empty sum 0,
``all`` of nothing is True and ``any`` False, the mean (and variance) of nothing is NaN,
``can_cast`` answers by the promotion table, ``isin`` by value equality, ``round`` rounds
half to even (a complex number per component), and the determinant of a matrix of exact
binary fractions is an exact rational number (held to the error bound of an LU
factorization). Each answer is computed in Python from the inputs, not by NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from .compare import host_value
from .dtypes import promote
from .judges import judge_sides
from .model import Blame

__all__ = ["Exact", "blame_by_exact_answer", "exact_answer", "left_open"]

_EMPTY = {"prod": 1, "sum": 0, "all": True, "any": False}
_EMPTY_NAN = ("mean", "var", "std")


@dataclass(frozen=True)
class Exact:
    """The required result (a host array) and the rule that fixes it.

    ``tolerance`` maps a required value to the distance a result may be from it (None:
    equal exactly, NaN matching NaN).
    """

    value: npt.NDArray[Any]
    rule: str
    tolerance: npt.NDArray[Any] | None = None
    #: The rule fixes the sign of a zero too (``round(-0.4)`` is ``-0.0``, ``x - x`` is
    #: ``+0.0``): a zero of the other sign does not match.
    signed_zeros: bool = False

    def matches(self, result: Any) -> bool:
        got = np.asarray(host_value(result)[0])
        if got.shape != self.value.shape:
            return False
        want = self.value.astype(got.dtype) if self.tolerance is None else self.value
        if self.tolerance is None:
            if got.dtype.kind in "fc":
                same = bool(np.array_equal(got, want, equal_nan=True))
                return same and (not self.signed_zeros or _same_zero_signs(got, want))
            return bool(np.array_equal(got, want))
        return bool(np.all(np.abs(got.astype(np.float64) - want) <= self.tolerance))


def _same_zero_signs(got: npt.NDArray[Any], want: npt.NDArray[Any]) -> bool:
    """Whether every zero component of ``want`` has the sign of ``got``'s (real or complex)."""
    parts = (
        ((got.real, want.real), (got.imag, want.imag)) if got.dtype.kind == "c" else ((got, want),)
    )
    for mine, required in parts:
        zeros = required == 0
        if np.any(np.signbit(mine[zeros]) != np.signbit(required[zeros])):
            return False
    return True


def _arrays(args: Sequence[Any]) -> list[npt.NDArray[Any]]:
    return [host_value(a)[0] for a in args if not isinstance(a, bool | int | float | complex)]


def _empty_reduction(
    name: str, x: npt.NDArray[Any], kwargs: Mapping[str, Any], result: npt.NDArray[Any]
) -> Exact | None:
    axis = kwargs.get("axis")
    axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    terms = int(np.prod([x.shape[a] for a in axes])) if x.ndim else 1
    if terms != 0 or result.size == 0:
        return None
    if name in _EMPTY:
        fill: Any = _EMPTY[name]
        rule = f"the standard: {name} over no elements is {fill}"
    elif name in _EMPTY_NAN and float(kwargs.get("correction") or 0) >= 0:
        fill, rule = math.nan, f"the standard: {name} over no elements is NaN"
    else:
        return None
    return Exact(np.full(result.shape, fill), rule)


def _cast_pair(dtypes: Mapping[str, str]) -> tuple[str, str] | None:
    source, target = dtypes.get("from_") or dtypes.get("#"), dtypes.get("to")
    return None if source is None or target is None else (source, target)


def left_open(function: str, dtype_args: Mapping[str, str] | None = None) -> str | None:
    """Why the standard leaves this call's answer open (so no answer is a finding), or None.

    ``can_cast`` answers "according to type promotion rules", which say nothing of
    mixed kinds (int8 with float64, bool with anything else): either answer conforms.
    """
    pair = _cast_pair(dtype_args or {}) if function.removeprefix("xp.") == "can_cast" else None
    if pair is not None and promote(list(pair)) is None:
        return (
            f"the standard's promotion rules do not define {pair[0]} with {pair[1]}, so "
            f"can_cast({pair[0]}, {pair[1]}) may answer either way"
        )
    return None


def _can_cast(dtypes: Mapping[str, str]) -> Exact | None:
    pair = _cast_pair(dtypes)
    if pair is None or left_open("can_cast", dtypes) is not None:
        return None
    source, target = pair
    allowed = promote([source, target]) == target
    return Exact(
        np.asarray(allowed),
        f"the standard: can_cast({source}, {target}) follows the promotion table "
        f"({source} with {target} promotes to {promote([source, target])})",
    )


def _isin(arrays: list[npt.NDArray[Any]], kwargs: Mapping[str, Any]) -> Exact | None:
    if len(arrays) != 2 or arrays[0].dtype.kind not in "iub" or arrays[1].dtype.kind not in "iub":
        return None
    pool = {int(v) for v in arrays[1].reshape(-1).tolist()}
    invert = bool(kwargs.get("invert", False))
    found = [(int(v) in pool) != invert for v in arrays[0].reshape(-1).tolist()]
    return Exact(
        np.asarray(found, dtype=bool).reshape(arrays[0].shape),
        "the standard: isin tests membership by value equality" + (" (inverted)" if invert else ""),
    )


def _round_half_even(value: float) -> float:
    return value if not math.isfinite(value) else math.copysign(float(round(value)), value)


def _round(x: npt.NDArray[Any]) -> Exact | None:
    if x.dtype.kind not in "fc":
        return None
    flat = x.reshape(-1).tolist()
    if x.dtype.kind == "c":
        rounded: list[Any] = [
            complex(_round_half_even(v.real), _round_half_even(v.imag)) for v in flat
        ]
    else:
        rounded = [_round_half_even(v) for v in flat]
    return Exact(
        np.asarray(rounded, dtype=x.dtype).reshape(x.shape),
        "the standard: round rounds half to even"
        + (", the real and imaginary components separately" if x.dtype.kind == "c" else ""),
        signed_zeros=True,
    )


def _diff(x: npt.NDArray[Any], kwargs: Mapping[str, Any]) -> Exact | None:
    """``diff``'s n-th forward difference: each step one IEEE 754 subtraction per element,
    correctly rounded in the dtype (for a complex dtype, per component: the standard's
    complex subtraction is componentwise), so the result is fixed, signs of zeros included.
    """
    n, axis = kwargs.get("n", 1), kwargs.get("axis", -1)
    if x.dtype.kind not in "fc" or set(kwargs) - {"n", "axis"} or x.ndim == 0:
        return None
    if not isinstance(n, int) or not isinstance(axis, int) or n < 0:
        return None
    parts = (x.real, x.imag) if x.dtype.kind == "c" else (x,)
    done = []
    for part in parts:
        values = np.moveaxis(np.array(part, copy=True), axis, -1)
        for _ in range(n):
            with np.errstate(all="ignore"):  # inf - inf is NaN by IEEE 754: a value here
                values = np.subtract(values[..., 1:], values[..., :-1])
        done.append(np.moveaxis(values, -1, axis))
    result = done[0] if len(done) == 1 else (done[0] + 1j * 0).astype(x.dtype)
    if len(done) == 2:
        result.imag = done[1]
    return Exact(
        np.asarray(result, dtype=x.dtype),
        f"the standard: diff is x[i+1] - x[i] along the axis, {n} times, each an IEEE 754 "
        "subtraction in the dtype"
        + (" (real and imaginary components separately)" if x.dtype.kind == "c" else ""),
        signed_zeros=True,
    )


def _det(x: npt.NDArray[Any]) -> Exact | None:
    """Exact determinants by fraction-exact elimination, held to LU's error bound."""
    if x.dtype.kind != "f" or x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.size > 4096:
        return None
    if not np.all(np.isfinite(x)):
        return None
    n = x.shape[-1]
    matrices = x.reshape(-1, n, n).astype(np.float64)
    values, slack = [], []
    eps = float(np.finfo(x.dtype).eps)
    for m in matrices:
        values.append(float(_fraction_det([[Fraction(v) for v in row] for row in m.tolist()])))
        # Hadamard: |det| <= prod of row norms; LU's backward error is O(n eps) of it.
        rows = float(np.prod(np.linalg.norm(m, axis=1))) if n else 1.0
        slack.append(4 * max(n, 1) * eps * rows)
    shape = x.shape[:-2]
    return Exact(
        np.asarray(values).reshape(shape),
        "the exact determinant (rational arithmetic on the inputs), to within "
        "4 n eps times the product of the row norms",
        np.asarray(slack).reshape(shape),
    )


def _fraction_det(rows: list[list[Fraction]]) -> Fraction:
    n, det = len(rows), Fraction(1)
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return Fraction(0)
        if pivot != col:
            rows[col], rows[pivot] = rows[pivot], rows[col]
            det = -det
        det *= rows[col][col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return det


def exact_answer(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    dtype_args: Mapping[str, str] | None = None,
) -> Exact | None:
    """The result the standard fixes for this call, when it fixes one; else None.

    ``reference`` is one side's result, used only for the output's shape.
    """
    name = function.removeprefix("xp.")
    arrays = _arrays(args)
    if name == "can_cast":
        return _can_cast(dtype_args or {})
    if name == "isin":
        return _isin(arrays, kwargs)
    if not arrays:
        return None
    if name == "round" and not kwargs:
        return _round(arrays[0])
    if name == "diff" and len(arrays) == 1:
        return _diff(arrays[0], kwargs)
    if name == "linalg.det":
        return _det(arrays[0])
    if name in (*_EMPTY, *_EMPTY_NAN):
        return _empty_reduction(name, arrays[0], kwargs, np.asarray(host_value(reference)[0]))
    return None


def blame_by_exact_answer(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    dtype_args: Mapping[str, str] | None = None,
) -> Blame | None:
    """Blame from an answer the standard fixes exactly (None when it fixes none here)."""
    if reference is None or candidate is None:
        return None
    tagged = isinstance(reference, tuple) and len(reference) == 2 and isinstance(reference[1], str)
    if isinstance(reference, list | tuple) and not tagged:
        return None  # several outputs: none of these rules covers them
    exact = exact_answer(function, args, kwargs, reference, dtype_args)
    if exact is None:
        return None
    side = judge_sides(exact.matches(reference), exact.matches(candidate))
    if side is None:
        return None
    return Blame(side, f"{exact.rule}; the {side} differs from it", "standard-rule")
