"""What a call's local re-run hands the candidate, and what its result must be.

The re-run takes the reference's exact input arrays, moved over. Everything else in the
call is the program's own: a dtype object (``xp.astype(x, xp.float32)``, ``xp.eye(n,
dtype=x.dtype)``) or a device is the candidate's own, never the reference's (a library
refuses another library's dtype objects, and a refusal is no wrong result). Python scalars
stay as the reference's call had them; where the candidate computes in bfloat16, the
reference rounds them to bfloat16 first, as the standard's scalar rules say (NumPy does so
for float16 by itself).

An output's dtype is judged apart from its values: the values are compared in the
reference's dtype where the candidate's fit it (so an integer that wrapped around in a
narrower dtype is a different value, never a match), and a dtype other than the one the
inputs call for is wrong, except the width of the default integer, which the standard
leaves to each library (int32 or int64), and the default floating dtype (float32 or
float64) of a creation function given neither ``dtype=`` nor an array to follow
(``xp.asarray(0.0)``, ``xp.empty(n)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..values.dtypes import BOOL, FLOATING, INTEGER, SIGNED, UNSIGNED
from ..values.model import Bound
from ..values.ulp import round_to_bfloat16
from ._arrays import arrays_in, dtype_of, host_dtype
from ._proxy import LEAVES, is_array

__all__ = [
    "comparable",
    "dtype_problem",
    "gives_default_floating",
    "has_float_scalar",
    "is_dtype",
    "own_objects",
    "round_scalars",
    "short_bound",
]

_DTYPE_NAMES = frozenset((BOOL, *INTEGER, *FLOATING))
_CONTAINERS = (tuple, list, dict)


def is_dtype(value: Any) -> bool:
    """Whether ``value`` is a dtype object of some library (not an array, scalar or device)."""
    if type(value) in LEAVES or is_array(value) or isinstance(value, _CONTAINERS):
        return False
    try:
        return dtype_of(value) in _DTYPE_NAMES
    except Exception:  # an object whose text is no name at all
        return False


def _library_object(value: Any) -> bool:
    """A value that belongs to one library (a dtype, a device), not an array or plain value."""
    kind = type(value)
    if kind in LEAVES or kind is tuple or kind is list:
        return False
    return not (is_array(value) or isinstance(value, _CONTAINERS))


def own_objects(
    xp: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    theirs: tuple[tuple[Any, ...], dict[str, Any]],
    casts: list[tuple[str, str]],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The re-run's arguments with each library object replaced by the candidate's own.

    ``theirs`` is the candidate's own call (args, kwargs): the same program at the same
    call, so its argument in the same place is its own dtype (or device). A dtype the
    candidate's call lacks is looked up by name in ``xp``. A dtype argument that differs
    (``x.dtype`` is float16 on an f16 candidate) is noted in ``casts``, which says what dtype
    the outputs must have.
    """
    their_args, their_kwargs = theirs
    for v in (*args, *kwargs.values()) if kwargs else args:
        if type(v) not in LEAVES and _library_object(v):
            break
    else:
        return args, kwargs  # arrays and plain values only: most calls (about 1 us)

    def own(value: Any, found: bool, other: Any) -> Any:
        if not _library_object(value):
            return value
        if is_dtype(value):
            if found and is_dtype(other):
                casts.append((dtype_of(value), dtype_of(other)))
                return other
            return getattr(xp, dtype_of(value), value)
        return other if found else value

    new_args = tuple(
        [
            own(v, i < len(their_args), their_args[i] if i < len(their_args) else None)
            for i, v in enumerate(args)
        ]
    )
    new_kwargs = {k: own(v, k in their_kwargs, their_kwargs.get(k)) for k, v in kwargs.items()}
    return new_args, new_kwargs


def has_float_scalar(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
    """Whether a Python float is among the call's arguments (not inside a shape or key)."""
    return any(type(v) is float for v in (*args, *kwargs.values()))


def _bfloat16(value: float) -> float:
    return float(round_to_bfloat16(np.float32(value)))


def round_scalars(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``(args, kwargs)`` with each Python float rounded to bfloat16 (held as a float).

    For a call whose floating inputs are bfloat16 values held as float32: NumPy would
    convert the scalar to float32, the standard (and a bfloat16 library) to bfloat16.
    """
    return (
        tuple([_bfloat16(v) if type(v) is float else v for v in args]),
        {k: _bfloat16(v) if type(v) is float else v for k, v in kwargs.items()},
    )


def _kind(name: str) -> str:
    if name in SIGNED:
        return "signed"
    if name in UNSIGNED:
        return "unsigned"
    return "bool" if name == BOOL else "floating" if name in FLOATING else name


#: Creation functions whose result, without ``dtype=`` and without an array argument, has
#: the library's default dtype.
_CREATION = frozenset(["asarray", "empty", "zeros", "ones", "full", "arange", "linspace", "eye"])
_DEFAULT_FLOATING = frozenset(["float32", "float64"])


def gives_default_floating(name: str, args: Any, kwargs: Any) -> bool:
    """Whether a call's floating result dtype is the library's default by the standard: a
    creation function given neither ``dtype=`` nor an array whose dtype it would follow."""
    if name not in _CREATION or (kwargs or {}).get("dtype") is not None:
        return False
    return not arrays_in(tuple(args or ()), kwargs or {})


def dtype_problem(
    reference: str, got: str, casts: Mapping[str, str], default_floating: bool = False
) -> str | None:
    """Why an output dtype ``got`` is wrong where the reference gave ``reference``, or None.

    ``casts`` maps the reference's input dtypes (and dtype arguments) to the candidate's: an
    f16 candidate's float16 stands for the reference's float32. ``default_floating``: the
    call gives its library's default floating dtype (:func:`gives_default_floating`).
    """
    expected = casts.get(reference, reference)
    if got == expected:
        return None
    if default_floating and {got, reference} <= _DEFAULT_FLOATING:
        return None  # the default floating dtype is the library's (float32 or float64)
    kind = _kind(expected)
    same_kind = kind in ("signed", "unsigned") and _kind(got) == kind
    if same_kind and expected.endswith("64") and got.endswith("32"):
        return None  # the default integer's width is the library's (int32 or int64)
    return (
        f"result dtype {got}, but the reference gave {reference} for these inputs "
        f"(so {expected} here)"
    )


def _fits(values: np.ndarray[Any, Any], name: str) -> bool:
    """Whether every value of ``values`` is a value of dtype ``name`` (no wrap, no rounding)."""
    if values.size == 0 or name in FLOATING:
        return True
    with np.errstate(all="ignore"):
        if values.dtype.kind in "fc":
            if values.dtype.kind == "c" or not np.isfinite(values).all():
                return False
            if not bool((values == np.round(values)).all()):
                return False
        if name == BOOL:
            return bool(np.isin(values, (0, 1)).all())
        info = np.iinfo(np.dtype(name))
        low, high = values.min(), values.max()
        return bool(int(low) >= info.min and int(high) <= info.max)


def differ(reference: str, candidate: str) -> bool:
    """Whether outputs of these dtypes need :func:`comparable` (not one dtype, not two floats:
    a narrower float is the reference rounded into it, the judge's rule)."""
    return reference != candidate and not (reference in FLOATING and candidate in FLOATING)


def comparable(reference: Any, candidate: Any) -> tuple[Any, Any] | None:
    """The two outputs in one dtype when an integer or bool side differs in dtype, else None.

    The candidate's values are moved into the reference's dtype when each one is a value of
    it; otherwise both are compared as float64 (they differ, and the figures say by how
    much). Casting the reference into the candidate's narrower dtype instead would wrap
    363 to 107 in uint8 and call a wrapped count right.
    """
    ref_name, cand_name = host_dtype(reference), host_dtype(candidate)
    if not differ(ref_name, cand_name):
        return None
    ref = np.asarray(reference[0] if isinstance(reference, tuple) else reference)
    cand = np.asarray(candidate[0] if isinstance(candidate, tuple) else candidate)
    if ref_name in _DTYPE_NAMES and ref_name != "bfloat16" and _fits(cand, ref_name):
        with np.errstate(all="ignore"):
            return reference, cand.astype(ref.dtype)
    return ref.astype(np.float64), cand.astype(np.float64)


def short_bound(bound: Bound | None) -> str:
    """A bound in a table cell: ``<= 2 ULP``, ``exact``, ``NMSE < 1e-07``, ``-`` (none)."""
    if bound is None:
        return "-"
    if bound.kind == "exact":
        return "exact"
    if bound.kind == "nmse":
        return f"NMSE < {bound.nmse:.0e}"
    text = f"<= {bound.ulps:g} ULP"
    return f"{text} or abs" if bound.atol is not None else text
