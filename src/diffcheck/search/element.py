"""A finding of an elementwise function, cut down to the element that fails.

Hypothesis shrinks an example's values well but its shape less so: a 3x4 array where one
element matters could stay a 3x4 array, and a shape it cannot shrink (a recipe's fixed
shape, a shrink cut by the time budget, a sweep row of 48 values) always does. Each
element of an elementwise function's result depends only on the inputs' elements at that
index (after broadcasting), so the element that fails can be tried by itself: the
verdict's worst element, else its first, as a 1-element array of the same dtype, then as
a 0-d array. Which functions are elementwise is the standard's own list
(:data:`~diffcheck.values.spec.STANDARD_FUNCTIONS`).

A smaller example is kept only when the candidate still fails it the same way: the same
finding key (kind and dtypes, or the message of a raise) and the same blamed side and
evidence. Otherwise the example stays as it was: a backend whose result depends on the
whole array (a shift by its sum, a vector path for long rows) keeps its shape, and one
that refuses 0-d input keeps the 1-element array.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from ..values.model import ValueVerdict
from ..values.spec import STANDARD_FUNCTIONS
from .isolation import CallFailure
from .recipes import Example

__all__ = ["ELEMENTWISE", "to_element"]

#: The standard's elementwise functions: one result element per (broadcast) input element.
ELEMENTWISE = frozenset(STANDARD_FUNCTIONS["elementwise"])

Judge = Callable[[Example], "ValueVerdict | CallFailure"]


def to_element(
    function: str, example: Example, verdict: ValueVerdict, judge: Judge
) -> tuple[Example, ValueVerdict] | None:
    """The failing element of ``example`` alone (1-element, then 0-d), with its verdict.

    Parameters
    ----------
    function
        The standard's name of the function called.
    example, verdict
        The failing example as shrunk, and its verdict.
    judge
        Judges an example on both backends (the search's own calls).

    Returns
    -------
    tuple of Example and ValueVerdict, or None
        The smallest example that fails the same way, or None when no smaller one does (or
        the function is not elementwise, or the example is already one 0-d element).
    """
    shape = _shape(function, example)
    if shape is None:
        return None
    want = _cause(verdict, example)

    def same(candidate: Example) -> tuple[Example, ValueVerdict] | None:
        try:
            answer = judge(candidate)
        except Exception:  # the harness failing on a smaller example: keep the larger one
            return None
        if not isinstance(answer, ValueVerdict) or answer.passed:
            return None
        return (candidate, answer) if _cause(answer, candidate) == want else None

    for index in _indices(verdict, shape):
        row = _element(example, shape, index, ndim=1)
        kept = (example, verdict) if _same_arrays(row, example) else same(row)
        if kept is None:
            continue
        point = same(_element(example, shape, index, ndim=0))
        if point is not None:
            return point
        return None if kept[0] is example else kept
    return None


def _shape(function: str, example: Example) -> tuple[int, ...] | None:
    """The broadcast shape of an elementwise call's arrays, when one element can stand
    alone (at least one element, and not already 0-d throughout); else None."""
    if function not in ELEMENTWISE or example.positional or example.dtypes or example.sequence:
        return None
    arrays = [a for a in example.args if isinstance(a, np.ndarray)]
    if not arrays or all(a.ndim == 0 for a in arrays):
        return None
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:  # inputs that do not broadcast: a shape finding, not an element's
        return None
    return shape if math.prod(shape) > 0 else None


def _cause(verdict: ValueVerdict, example: Example) -> tuple[Any, ...]:
    """What must stay the same for a smaller example to show the same finding."""
    from .runner import finding_key

    blame = verdict.blame
    return (
        finding_key(verdict, example),
        None if blame is None else (blame.side, blame.evidence),
    )


def _indices(verdict: ValueVerdict, shape: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """The worst element's index, then the first's; the first element when neither is
    known (a dtype finding is about every element)."""
    seen: list[tuple[int, ...]] = []
    for where in (verdict.worst, verdict.first):
        if where is None or where.output != 0 or len(where.index) != len(shape):
            continue
        index = tuple(int(i) for i in where.index)
        if index not in seen and all(0 <= i < n for i, n in zip(index, shape, strict=True)):
            seen.append(index)
    if not seen and verdict.worst is None and verdict.first is None:
        seen.append((0,) * len(shape))
    yield from seen


def _element(
    example: Example, shape: tuple[int, ...], index: tuple[int, ...], ndim: int
) -> Example:
    """``example`` with each array cut to its element at ``index`` of the broadcast shape."""
    args: list[Any] = []
    for arg in example.args:
        if isinstance(arg, np.ndarray):
            value = np.broadcast_to(arg, shape)[index]
            args.append(np.array(value, dtype=arg.dtype).reshape((1,) * ndim))
        else:
            args.append(arg)
    return replace(example, args=tuple(args))


def _same_arrays(one: Example, other: Example) -> bool:
    """Whether every array of ``one`` has the shape of ``other``'s (nothing was cut)."""
    return all(
        not isinstance(a, np.ndarray) or a.shape == b.shape
        for a, b in zip(one.args, other.args, strict=True)
    )
