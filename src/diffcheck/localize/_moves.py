"""Moving a window's host inputs to the candidate, once each, for the local re-runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..values.call import _to_device
from ._arrays import dtype_of, host_dtype, reshaped
from ._homes import on_host
from ._records import Kept, window_inputs

__all__ = ["Mover"]


class Mover:
    """The candidate's copies of the window's host inputs (the judge's re-runs take them)."""

    def __init__(self, candidate: Adapter) -> None:
        self.candidate = candidate
        self.xp = candidate.namespace()
        # The window's host inputs already moved to the candidate, by identity (each held
        # with its device copy, so the identity stays unique): an output of one call is
        # often the input of several (a normalized activation feeds three projections).
        self._moved: dict[int, tuple[Any, Any]] = {}

    def new_window(self) -> None:
        """Forget the last window's moved inputs (their host arrays may go)."""
        self._moved.clear()

    def prefetch_window(self, kept: Sequence[Kept]) -> None:
        """:meth:`prefetch` the host inputs of the window's re-runs (``kept``'s stored calls).

        An adapter on the host (:func:`on_host`) skips it: a move there is a host copy of a
        few microseconds, and the views would be work of their own (on mlx:cpu, 140 slices
        and reshapes in the window's graph: 7.2 ms a locate with them, 6.9 without).
        """
        if not on_host(self.candidate):
            self.prefetch(window_inputs(kept))

    def prefetch(self, hosts: Sequence[Any]) -> None:
        """Move the window's host inputs to the candidate together, one copy per dtype.

        A GPU library pays for each host-to-device copy (tens of microseconds on an H200
        host, for a window of about 70 re-run inputs). Arrays of one dtype are laid into one
        host buffer, each at an offset of a multiple of 256 bytes (so every view starts as
        aligned as a fresh allocation: a kernel's choice may depend on it), moved once, and
        each re-run gets a view of its own values (exact: nothing is computed).

        """
        groups: dict[str, list[Any]] = {}
        for host in hosts:
            if id(host) not in self._moved:
                groups.setdefault(host_dtype(host), []).append(host)
        for dtype, members in groups.items():
            if len(members) < 2:
                continue
            unit = max(1, 256 // members[0].dtype.itemsize)
            offsets, total = [], 0
            for host in members:
                offsets.append(total)
                total += -(-max(host.size, 1) // unit) * unit
            buffer = np.zeros(total, dtype=members[0].dtype)
            for host, offset in zip(members, offsets, strict=True):
                buffer[offset : offset + host.size] = host.reshape(-1)
            try:
                joined = _to_device(self.candidate, self.xp, buffer)
                if dtype_of(joined.dtype) != dtype:
                    continue  # the device stores another dtype: each re-run casts its own
                for host, offset in zip(members, offsets, strict=True):
                    view = reshaped(self.xp, joined[offset : offset + host.size], host.shape)
                    self._moved[id(host)] = (host, view)
            except Exception:  # a library that cannot slice so: each input moves alone
                continue

    def moved(self, host: Any, array: Any) -> None:
        """``array`` on the candidate holds ``host``'s exact values (a program input)."""
        if dtype_of(array.dtype) == host_dtype(host):  # else a re-run casts its own copy
            self._moved[id(host)] = (host, array)

    def _move(self, host: Any) -> Any:
        """``host`` on the candidate in its own dtype, kept for the window's other re-runs."""
        value = _to_device(self.candidate, self.xp, host)
        wanted = host_dtype(host)
        if dtype_of(value.dtype) != wanted:
            value = self.xp.astype(value, getattr(self.xp, wanted))
        self._moved[id(host)] = (host, value)
        return value
