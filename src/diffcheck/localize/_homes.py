"""A window's device arrays, already computed, brought to the host together.

A GPU library pays for every copy to the host (a synchronization and a transfer of its
own, tens of microseconds), and a window of 58 calls has about 116 outputs to judge. The
arrays of one dtype are joined on the device into one flat array, which comes home in one
copy and is cut into views of the same values there. A library that cannot join them
(no ``concat``, or it refuses) brings each home on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..values.call import _home
from ._arrays import dtype_of, shape_of
from ._proxy import is_array

__all__ = ["homes"]


def homes(adapter: Adapter, arrays: Sequence[Any]) -> list[Any]:
    """Host values of ``arrays`` (synchronized by the caller), as ``_home`` gives each."""
    found: list[Any] = [None] * len(arrays)
    groups: dict[str, list[int]] = {}
    for i, array in enumerate(arrays):
        if is_array(array) and not isinstance(array, np.ndarray):
            groups.setdefault(dtype_of(array.dtype), []).append(i)
        else:
            found[i] = _home(adapter, array, computed=True)
    for members in groups.values():
        joined = _joined(adapter, [arrays[i] for i in members]) if len(members) > 1 else None
        if joined is None:
            for i in members:
                found[i] = _home(adapter, arrays[i], computed=True)
        else:
            for i, host in zip(members, joined, strict=True):
                found[i] = host
    return found


def _joined(adapter: Adapter, arrays: list[Any]) -> list[Any] | None:
    """The arrays (one dtype) home through one flat copy; None when the library refuses."""
    xp = adapter.namespace()
    shapes = [shape_of(a) for a in arrays]
    try:
        flat = xp.concat([xp.reshape(a, (-1,)) for a in arrays])
        adapter.synchronize(flat)
        host = _home(adapter, flat, computed=True)
    except Exception:  # no concat, or not for these arrays: one copy each
        return None
    values, tag = (host[0], host[1]) if isinstance(host, tuple) else (host, None)
    out: list[Any] = []
    start = 0
    for shape in shapes:
        size = int(np.prod(shape, dtype=np.int64))
        part = values[start : start + size].reshape(shape)
        out.append((part, tag) if tag is not None else part)
        start += size
    return out
