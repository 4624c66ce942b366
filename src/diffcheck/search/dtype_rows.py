"""One example in each dtype a function's draws missed.

Hypothesis' dtype choices come in runs: at a few examples per function, ``sum`` may never
see ``uint8`` or ``uint16``, where a library returns ``int64`` instead of the standard's
``uint64``, or refuses the dtype outright. After the search, each dtype of the function's
category that no drawn example used gets one example: the function's first drawn example
with its arrays cast exactly to that dtype, or, where a value would change, arrays of ones
of the same shapes (a value every dtype holds). What such an example can show is about the
dtype (its result dtype, a refusal, a wrong answer on plain values), so one is enough.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .recipes import Example

__all__ = ["array_dtypes", "dtype_rows", "keyword_rows", "keywords_of", "row_key"]


def array_dtypes(example: Example) -> set[str]:
    """The dtypes of an example's array inputs."""
    return {str(a.dtype) for a in example.args if isinstance(a, np.ndarray)}


def row_key(example: Example) -> str:
    """What a dtype row stands for: the input dtypes, and which argument names a dtype
    (``sum(x)`` and ``sum(x, dtype=uint16)`` of a uint16 ``x`` are two rows)."""
    named = ",".join(f"{k}={v}" for k, v in sorted(example.dtypes.items()))
    return f"{example.input_dtypes()};{named}"


def _in(example: Example, dtype: str) -> Example | None:
    """``example`` with every array in ``dtype``: cast exactly, else as ones (None when an
    array cannot be made in it: ``bfloat16``, which NumPy does not hold)."""
    exact: list[Any] = []
    ones: list[Any] = []
    same = True
    for arg in example.args:
        if not isinstance(arg, np.ndarray):
            exact.append(arg)
            ones.append(arg)
            continue
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # complex to real: the check below sees it
                moved = arg.astype(dtype)
                # by value, not by a round trip (int8 -128 -> uint8 128 -> int8 -128)
                nan = arg.dtype.kind in "fc" and moved.dtype.kind in "fc"
                same = same and bool(np.array_equal(moved, arg, equal_nan=nan))
        except TypeError:
            return None
        exact.append(moved)
        ones.append(np.ones(arg.shape, dtype))
    return replace(example, args=tuple(exact if same else ones))


def dtype_rows(
    first: Example | None, drawn: set[str], dtypes: Sequence[str], keyword: bool = False
) -> list[Example]:
    """One example per dtype of ``dtypes`` whose inputs ``drawn`` does not hold, from ``first``.

    ``drawn`` holds the drawn examples' :func:`row_key`. With
    ``keyword`` (the function takes ``dtype=``: ``sum(x, dtype=uint16)``), each dtype also
    gets a row whose keyword names the row's own dtype; a drawn ``dtype=`` is left out of
    the rows without it. Examples that name a dtype otherwise (``astype``, ``full``) and
    examples without arrays draw their dtypes their own way and get none.
    """
    if first is None:
        return []
    plain = replace(first, dtypes={}) if set(first.dtypes) == {"dtype"} else first
    if plain.dtypes or not array_dtypes(plain):
        return []
    made: dict[str, Example] = {}
    for dtype in dtypes:
        if dtype == "bfloat16":
            continue
        example = _in(plain, dtype)
        if example is None:
            continue
        rows = [example, replace(example, dtypes={"dtype": dtype})] if keyword else [example]
        for row in rows:
            key = row_key(row)
            if key not in drawn and key not in made:
                made[key] = row
    return list(made.values())


def keywords_of(example: Example) -> set[str]:
    """An example's keyword arguments, each as ``name=value``."""
    return {f"{k}={v!r}" for k, v in example.kwargs.items()}


def keyword_rows(
    first: Example | None, drawn: set[str], values: Sequence[tuple[str, tuple[Any, ...]]]
) -> list[Example]:
    """``first`` once with each value of each optional keyword no drawn example passed.

    Hypothesis draws the simplest choice first (``None``: the keyword left out), so at a
    few examples per function ``asarray(x, copy=False)`` may never be called; each value
    of a keyword with few of them (``copy``, ``descending``, a fractional ``correction``)
    is tried once on the function's first example.
    """
    if first is None:
        return []
    made = []
    for key, options in values:
        for value in options:
            if f"{key}={value!r}" not in drawn:
                made.append(replace(first, kwargs={**first.kwargs, key: value}))
    return made
