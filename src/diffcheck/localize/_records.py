"""What the judge keeps of a call: the reference's record, and a candidate call in waiting."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..values.model import Bound
from ._arrays import map_arrays
from ._proxy import RawCall

__all__ = ["Kept", "Pending", "arrays_of", "reduced_terms", "window_inputs"]

#: Functions whose outputs reduce their input: the bound grows with the terms per output.
_REDUCING = {"sum", "prod", "mean", "var", "std", "cumulative_sum", "cumulative_prod"}


@dataclass(slots=True)
class Kept:
    """The reference's record of one call: metadata always, arrays inside the window."""

    name: str
    site: str
    input_shapes: tuple[tuple[int, ...], ...]
    input_dtypes: tuple[str, ...]
    output_shapes: tuple[tuple[int, ...], ...]
    output_dtypes: tuple[str, ...]
    digest: str  # of the outputs: taken for a stored call only (empty until then)
    args: tuple[Any, ...] | None = None
    kwargs: dict[str, Any] | None = None
    outputs: list[Any] | None = None
    nbytes: int = 0
    function: Callable[..., Any] | None = None  # the reference's callable, for re-runs


@dataclass(slots=True)
class Pending:
    """A candidate call waiting to be judged: its own outputs and its local re-run's."""

    kept: Kept
    call: RawCall
    local: list[Any] | str  # the re-run's outputs, or why it raised
    casts: dict[str, str]  # reference input dtype -> the candidate's
    expected: list[Any]  # what the local re-run must match (the reference's output)
    #: The re-run's host inputs (args, kwargs): the reference's, in the candidate's dtypes.
    inputs: tuple[tuple[Any, ...], dict[str, Any]] = ((), {})
    #: The dtypes of the arrays the candidate's own call received, in order.
    received: tuple[str, ...] = ()
    #: A Python float meets narrowed arrays in this call (its local bound allows 1 ULP more).
    scalar: bool = False
    #: The local error's bound (its first output's), once judged.
    bound: Bound | None = None
    #: The bound in words where it is no Bound of the model (a scan's prefix bound).
    bound_text: str | None = None
    #: What the local verdict adds about how it judged (a decomposition's null space).
    note: str | None = None


def arrays_of(pending: Sequence[Pending]) -> list[Any]:
    """The queued calls' own outputs, then their re-runs' (the order ``judge_all`` reads)."""
    arrays = [o for p in pending for o in p.call.outputs]
    return arrays + [o for p in pending if not isinstance(p.local, str) for o in p.local]


def reduced_terms(name: str, kept: Kept) -> int:
    if name not in _REDUCING and ("." not in name or name.rsplit(".", 1)[1] not in _REDUCING):
        return 1
    if not kept.input_shapes or not kept.output_shapes:
        return 1
    size_in = math.prod(kept.input_shapes[0])
    size_out = math.prod(kept.output_shapes[0])
    return max(1, size_in // max(size_out, 1))


def window_inputs(kept: Sequence[Kept]) -> list[Any]:
    """The plain host arrays the window's re-runs take (each once, in order)."""
    found: dict[int, Any] = {}

    def note(host: Any) -> Any:
        if isinstance(host, np.ndarray):  # a tagged bfloat16 host is cast on the device
            found.setdefault(id(host), host)
        return host

    for record in kept:
        if record.outputs is not None:
            map_arrays((record.args, record.kwargs), note)
    return list(found.values())
