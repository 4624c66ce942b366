"""The input classes a known API divergence covers: which calls, and which elements of them.

A declaration that matched by function, kind and dtype alone excused too much: a wrong
shift by 0 passed as MLX's shift-past-the-width divergence, a wrong ``all()`` of a
non-empty array as its empty-``all`` one. Each declaration now names an :class:`InputClass`,
a predicate over the finding's call (:class:`ApiCase`); a finding outside it is new.

Element classes are judged on *every* failing element (where the two results differ), not
on the example as a whole: an example whose counts are ``[0, 70]`` and whose shift by 0 is
wrong is outside "counts at or past the width", though one of its counts is inside.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "EMPTY_INPUT",
    "EMPTY_REDUCTION",
    "EVERY_INPUT",
    "FLOAT32_PRECISION",
    "HUGE_FOR_FLOAT32",
    "NAN_INPUT",
    "NEGATIVE_ZERO_INPUT",
    "SHIFT_PAST_WIDTH",
    "ZERO_D_KEEPDIMS",
    "ZERO_RESULT",
    "ApiCase",
    "InputClass",
    "fill_above_int64",
    "keyword_given",
]


def _host(value: Any) -> Any:
    """A result on the host: a tagged bfloat16 pair is its float32 array."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        return np.asarray(value[0])
    return value


@dataclass(frozen=True)
class ApiCase:
    """One finding's call as a predicate sees it: inputs on the host and both results.

    ``reference`` and ``candidate`` are None when that side returned nothing (a missing
    function, a raise); a tuple when the function returns several arrays.
    """

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    positional: tuple[Any, ...] = ()
    reference: Any = None
    candidate: Any = None

    def failing(self) -> npt.NDArray[np.bool_] | None:
        """Where the two single-array results differ (a NaN equals a NaN, -0 differs from +0).

        None when there is no element-wise answer: a side without a result, several
        results, or results of different shapes.
        """
        ref, cand = _host(self.reference), _host(self.candidate)
        if ref is None or cand is None or isinstance(ref, tuple) or isinstance(cand, tuple):
            return None
        ref, cand = np.asarray(ref), np.asarray(cand)
        if ref.shape != cand.shape:
            return None
        with np.errstate(all="ignore"):
            same = np.asarray(ref == cand)
            if ref.dtype.kind in "fc" or cand.dtype.kind in "fc":
                same &= np.signbit(np.real(ref)) == np.signbit(np.real(cand))
                same |= np.isnan(ref) & np.isnan(cand)
        return ~same

    def first_array(self) -> npt.NDArray[Any] | None:
        """The first array input, or None."""
        return next((np.asarray(a) for a in self.args if isinstance(a, np.ndarray)), None)


@dataclass(frozen=True)
class InputClass:
    """A named predicate over an :class:`ApiCase`: the inputs a declaration covers.

    ``elementwise`` says the predicate judges failing elements, as a declaration of a
    value, NaN, infinity or signed-zero divergence must (a whole-function class such as
    :data:`EVERY_INPUT` would excuse any wrong value of the function).
    """

    description: str
    holds: Callable[[ApiCase], bool]
    elementwise: bool = True

    def covers(self, case: ApiCase) -> bool:
        """Whether ``case`` is inside the class; a predicate that raises says no."""
        try:
            return bool(self.holds(case))
        except Exception:  # a case the predicate cannot read is not shown to be covered
            return False


def _on_failing(case: ApiCase, test: Callable[[npt.NDArray[Any]], Any], which: int = 0) -> bool:
    """``test`` holds for input ``which`` at every failing element (at least one fails)."""
    mask = case.failing()
    arrays = [a for a in case.args if isinstance(a, np.ndarray | int | float | bool)]
    if mask is None or not mask.any() or which >= len(arrays):
        return False
    values = np.broadcast_to(np.asarray(arrays[which]), mask.shape)[mask]
    with np.errstate(all="ignore"):
        return bool(np.all(test(values)))


def _shift_past_width(case: ApiCase) -> bool:
    reference = np.asarray(_host(case.reference))
    width = reference.dtype.itemsize * 8
    return _on_failing(case, lambda counts: counts >= width, which=1)


def _empty_reduction(case: ApiCase) -> bool:
    x = case.first_array()
    if x is None:
        return False
    axis = case.kwargs.get("axis")
    if axis is None:
        return x.size == 0
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return x.ndim > 0 and int(np.prod([x.shape[a] for a in axes])) == 0


def _float32_precision(case: ApiCase) -> bool:
    """Every failing element is within 8 float32 ULPs (relative 2**-20) of the reference.

    Complex results are measured by the modulus of the difference: a cast to float64 would
    drop the imaginary parts, and a wrong one would pass as float32 precision.
    """
    mask = case.failing()
    if mask is None or not mask.any():
        return False
    ref = np.asarray(_host(case.reference))[mask]
    cand = np.asarray(_host(case.candidate))[mask]
    wide = np.complex128 if "c" in (ref.dtype.kind, cand.dtype.kind) else np.float64
    ref, cand = ref.astype(wide), cand.astype(wide)
    scale = np.maximum(np.abs(ref), np.finfo(np.float32).tiny)
    with np.errstate(all="ignore"):
        return bool(np.all(np.isfinite(cand) & (np.abs(cand - ref) <= 2.0**-20 * scale)))


def _zero_result(case: ApiCase) -> bool:
    mask = case.failing()
    if mask is None or not mask.any():
        return False
    ref = np.asarray(_host(case.reference))[mask]
    cand = np.asarray(_host(case.candidate))[mask]
    return bool(np.all((ref == 0) & (cand == 0)))


#: The function as a whole, for a divergence that is not about values: a missing function,
#: a result dtype, a refused dtype. Not allowed for value kinds.
EVERY_INPUT = InputClass("every input (the function as a whole)", lambda case: True, False)
SHIFT_PAST_WIDTH = InputClass(
    "every failing element shifts by a count at or past the bit width", _shift_past_width
)
EMPTY_REDUCTION = InputClass(
    "the reduction runs over no elements (an empty array, or an empty axis)", _empty_reduction
)
NAN_INPUT = InputClass(
    "every failing element's input is NaN", lambda case: _on_failing(case, np.isnan)
)
NEGATIVE_ZERO_INPUT = InputClass(
    "every failing element's input is -0.0",
    lambda case: _on_failing(case, lambda x: (x == 0) & np.signbit(x)),
)
ZERO_RESULT = InputClass("every failing element is a zero on both sides", _zero_result)
HUGE_FOR_FLOAT32 = InputClass(
    "every failing element's input is finite and beyond float32's range",
    lambda case: _on_failing(
        case, lambda x: np.isfinite(x) & (np.abs(x) > np.finfo(np.float32).max)
    ),
)
FLOAT32_PRECISION = InputClass(
    "every failing element is within 8 float32 ULPs of the reference (float32 precision)",
    _float32_precision,
)
EMPTY_INPUT = InputClass(
    "the first array input holds no elements (a zero-size dimension)",
    lambda case: (x := case.first_array()) is not None and x.size == 0,
    elementwise=False,
)
ZERO_D_KEEPDIMS = InputClass(
    "a 0-d array with keepdims=True",
    lambda case: (
        (x := case.first_array()) is not None
        and x.ndim == 0
        and case.kwargs.get("keepdims") is True
    ),
    elementwise=False,
)


def keyword_given(*names: str) -> InputClass:
    """Calls that pass one of the keywords ``names`` (a keyword the backend does not take)."""
    return InputClass(
        f"calls passing {' or '.join(f'{n}=' for n in names)}",
        lambda case: any(n in case.kwargs for n in names),
        elementwise=False,
    )


def fill_above_int64() -> InputClass:
    """Calls with an integer argument above the int64 range (a uint64 fill value)."""

    def holds(case: ApiCase) -> bool:
        values = [*case.args, *case.positional, *case.kwargs.values()]
        return any(
            isinstance(v, int | np.integer) and not isinstance(v, bool) and v > 2**63 - 1
            for v in values
        )

    return InputClass("an integer argument above the int64 range", holds, elementwise=False)
