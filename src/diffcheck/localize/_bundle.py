"""The first wrong call as a replay bundle: the same file ``diffcheck fuzz --api`` writes.

The call is rebuilt as a search example from the reference's exact inputs of that call (cast
to the dtypes the candidate's call received) and judged again by the search's own path, so
``diffcheck replay BUNDLE`` re-derives every stored field as for any search finding. Only
calls of the standard's functions can be bundled: a namespace function or an operator
(``a + b`` is ``add``); an index, an attribute or a method cannot, and neither can a call
with an argument a bundle does not store (a bfloat16 input, an object).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..errors import BundleError
from ..search.bundle import Bundle, standard_function
from ..search.recipes import Example
from ..search.record import bundle_of
from ..search.runner import Finding, judge, outputs
from ..values.dtypes import dtype_name
from ..values.spec import STANDARD_DTYPES
from ._proxy import is_array

__all__ = ["bundle_for_call"]

_SCALARS = (bool, int, float, complex)
#: The dtypes a bundle can name (its ``dtypes`` field): the standard's, and float16.
_BUNDLE_DTYPES = frozenset((*STANDARD_DTYPES, "float16"))


def _dtype_of(value: Any) -> str | None:
    """The dtype a dtype object names (``xp.float32``), or None for anything else."""
    if is_array(value) or isinstance(value, (*_SCALARS, str, tuple, list)) or value is None:
        return None
    try:
        name = dtype_name(value)
    except Exception:  # not a dtype at all
        return None
    return name if name in _BUNDLE_DTYPES else None


def _example(args: Sequence[Any], kwargs: dict[str, Any]) -> Example | str:
    """The call's arguments as a search example, or why they cannot be one."""
    arrays: list[Any] = []
    positional: list[Any] = []
    dtypes: dict[str, str] = {}
    sequence = False
    for value in args:
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
            return f"a {value[1]} input, which a bundle does not store"
        if isinstance(value, (np.ndarray, _SCALARS)):
            if positional:
                return "an array after a non-array positional argument"
            arrays.append(value)
        elif isinstance(value, list | tuple) and value and all(is_array(v) for v in value):
            if arrays or sequence:
                return "a sequence of arrays beside other arrays"
            arrays.extend(value)
            sequence = True
        elif isinstance(value, tuple) and all(type(v) is int for v in value):
            positional.append(value)
        elif (name := _dtype_of(value)) is not None:
            dtypes["#"] = name
        else:
            return f"a positional argument of type {type(value).__name__}"
    plain: dict[str, Any] = {}
    for key, value in kwargs.items():
        if (name := _dtype_of(value)) is not None:
            dtypes[key] = name
        elif (
            value is None
            or isinstance(value, (*_SCALARS, str))
            or (isinstance(value, tuple) and all(type(v) is int for v in value))
        ):
            plain[key] = value
        else:
            return f"keyword {key} of type {type(value).__name__}"
    return Example(tuple(arrays), plain, tuple(positional), dtypes, sequence)


def bundle_for_call(
    name: str,
    via: str,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    reference: Adapter,
    candidate: Adapter,
) -> tuple[Bundle | None, str]:
    """The bundle of one call, or None and why not; the second item says what was done."""
    if via == "array":
        return None, f"{name} is an index, attribute or method, not a function of the standard"
    try:
        function = standard_function(name)
    except ValueError:
        return None, f"{name} is not a function of the standard a bundle may name"
    example = _example(args, kwargs)
    if isinstance(example, str):
        return None, f"{name} takes {example}"
    verdict = judge(function, example, reference, candidate)  # each side in its computing()
    if verdict.passed:
        return None, (
            f"{name} on these inputs passes the search's own judgment (its bound differs "
            "from this call's); no bundle"
        )
    ref, cand = outputs(function, example, reference, candidate)
    finding = Finding(
        function, verdict.kind or "", example.input_dtypes(), example, verdict, ref, cand
    )
    try:
        return bundle_of(finding, reference, candidate), "bundled"
    except BundleError as error:
        return None, f"{name}: {error}"
