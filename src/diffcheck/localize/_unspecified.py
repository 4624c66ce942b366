"""Calls whose output values the standard leaves unspecified: judged by shape and dtype.

``empty`` and ``empty_like`` return whatever the memory held: two correct libraries give
different bits, so a comparison of their values would blame a correct call. Their outputs'
shapes are judged, and the local re-run's dtypes as for any call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._arrays import host_dtype
from ._records import Pending
from ._rerun import dtype_problem, gives_default_floating
from ._result import CallError

__all__ = ["UNSPECIFIED", "unspecified_errors"]

#: The standard's functions whose output values are unspecified.
UNSPECIFIED = frozenset(["empty", "empty_like"])


def _held(host: Any) -> Any:
    """A host array's values (a bfloat16 host is a tuple whose first item holds them)."""
    return host[0] if isinstance(host, tuple) else host


def _judged(
    pending: Pending, reference: Sequence[Any], hosts: Sequence[Any], local: bool
) -> CallError:
    """One side's error: right unless an output count, shape or (re-run) dtype differs."""
    wrong = None
    kept = pending.kept
    default = gives_default_floating(pending.call.name, kept.args, kept.kwargs)
    if len(hosts) != len(reference):
        wrong = f"{len(hosts)} outputs, the reference has {len(reference)}"
    for ref, got in zip(reference, hosts, strict=False):
        have, want = np.shape(_held(got)), np.shape(_held(ref))
        if wrong is None and have != want:
            wrong = f"shape {have}, but the reference's is {want}"
        if wrong is None and local:
            wrong = dtype_problem(host_dtype(ref), host_dtype(got), pending.casts, default)
    if wrong is not None:
        return CallError(float("inf"), float("inf"), None, False, wrong, (), ())
    why = f"{pending.call.name}'s values are unspecified: its shape and dtype judged"
    return CallError(0.0, 0.0, None, True, why, (), ())


def unspecified_errors(
    pending: Pending, carried_hosts: list[Any], local_hosts: list[Any] | None
) -> tuple[CallError, CallError]:
    """The carried and the local error of a call of :data:`UNSPECIFIED` (no values read)."""
    kept = pending.kept
    assert kept.outputs is not None
    pending.bound_text = "shape, dtype"
    carried = _judged(pending, kept.outputs, carried_hosts, local=False)
    if local_hosts is None:  # the re-run raised: no local error, as for any call
        nan = float("nan")
        return carried, CallError(nan, nan, None, True, f"not re-run: {pending.local}", (), ())
    return carried, _judged(pending, pending.expected, local_hosts, local=True)
