"""A window's device arrays, already computed, brought to the host together.

A GPU library pays for every copy to the host (a synchronization and a transfer of its
own, tens of microseconds), and a window of 58 calls has about 116 outputs to judge. The
arrays of one dtype are joined on the device into one flat array, which comes home in one
copy and is cut into views of the same values there. A library that cannot join them
(no ``concat``, or it refuses) brings each home on its own, and so does an adapter named
for the CPU (``mlx:cpu``, ``torch:cpu``): its arrays are host memory already, each read
costs about a microsecond, and a join would be one more pass over them all (on mlx:cpu
the block's window came home in 2.8 ms joined, against 2.2 ms one by one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from array_api_compat import (
    is_array_api_strict_namespace,
    is_dask_namespace,
    is_numpy_namespace,
)

from ..adapters import Adapter
from ..differ.judge import host_array
from ..values.call import _home
from ._arrays import dtype_of, reshaped, shape_of
from ._proxy import is_array

__all__ = ["homes", "on_host"]


def on_host(adapter: Adapter) -> bool:
    """Whether ``adapter``'s arrays live in host memory: it is named for the CPU (``mlx:cpu``,
    ``torch:cpu``), or names no device and its library has no other memory (NumPy,
    array_api_strict, Dask). A move there is a host copy of a few microseconds, and joining
    or batching moves is work of its own, not a saving (array_api_strict's block at 128
    tokens: the joins and prefetches were a fifth of its ``locate``)."""
    if adapter.device is not None:
        return adapter.device == "cpu"
    xp = adapter.namespace()
    return bool(
        is_numpy_namespace(xp) or is_array_api_strict_namespace(xp) or is_dask_namespace(xp)
    )


def homes(adapter: Adapter, arrays: Sequence[Any]) -> list[Any]:
    """Host values of ``arrays``, as ``_home`` gives each, after one evaluation of them all.

    A lazy library (MLX) computes the whole window here, as one graph: evaluated one
    call at a time, 58 calls cost 10x the program.
    """
    if on_host(adapter):  # nothing to join (see the module docstring): each array alone
        _synchronize(adapter, [a for a in arrays if is_array(a)])
        return [_computed_home(adapter, a) for a in arrays]
    found: list[Any] = [None] * len(arrays)
    groups: dict[str, list[int]] = {}
    for i, array in enumerate(arrays):
        if is_array(array) and not isinstance(array, np.ndarray):
            groups.setdefault(dtype_of(array.dtype), []).append(i)
    joined: dict[str, Any] = {}
    xp = adapter.namespace()
    for name, members in groups.items():
        if len(members) > 1:
            try:
                joined[name] = xp.concat([reshaped(xp, arrays[i], (-1,)) for i in members])
            except Exception:  # no concat, or not for these arrays: one copy each
                continue
    inside = {i for name in joined for i in groups[name]}
    alone = [a for i, a in enumerate(arrays) if i not in inside and is_array(a)]
    _synchronize(adapter, list(joined.values()) + alone)
    for name, members in groups.items():
        if name in joined:
            for i, host in zip(members, _cut(adapter, joined[name], arrays, members), strict=True):
                found[i] = host
    for i, array in enumerate(arrays):
        if found[i] is None:
            found[i] = _home(adapter, array, computed=True)
    return found


def _computed_home(adapter: Adapter, array: Any) -> Any:
    """``_home(adapter, array, computed=True)``'s values, in fewer steps for a device array.

    An adapter with the protocol's ``to_host`` (MLX's) gives :func:`host_array`'s view
    flattened, which ``_home`` shapes again: here the view is taken as it is, the same values
    in the same shape (a strided one is not copied; every judge reads it in C order). Any
    other adapter's flat host view is shaped as ``_home`` shapes it. A NumPy array, a scalar,
    a bfloat16 array (widened on the device) and a view the adapter refuses take ``_home``.
    On mlx:cpu this took the block's 116 arrays home in about 0.3 ms, against 0.55 through
    ``_home``.
    """
    if type(array) is np.ndarray or not is_array(array) or dtype_of(array.dtype) == "bfloat16":
        return _home(adapter, array, computed=True)
    try:
        if type(adapter).to_host is Adapter.to_host:
            return host_array(array)
        return np.asarray(adapter.to_host(array)).reshape(shape_of(array))
    except (TypeError, ValueError, RuntimeError, BufferError):
        return _home(adapter, array, computed=True)


def _synchronize(adapter: Adapter, arrays: list[Any]) -> None:
    if not arrays:
        return
    try:
        adapter.synchronize(arrays)
    except Exception:  # an adapter that synchronizes one array at a time
        for array in arrays:
            adapter.synchronize(array)


def _cut(adapter: Adapter, flat: Any, arrays: Sequence[Any], members: list[int]) -> list[Any]:
    """``flat`` (the members joined, computed) home in one copy, cut into their shapes."""
    host = _home(adapter, flat, computed=True)
    values, tag = (host[0], host[1]) if isinstance(host, tuple) else (host, None)
    out: list[Any] = []
    start = 0
    for i in members:
        shape = shape_of(arrays[i])
        size = math.prod(shape)
        part = values[start : start + size].reshape(shape)
        out.append((part, tag) if tag is not None else part)
        start += size
    return out
