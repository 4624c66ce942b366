"""map_call: one walk of a call's arguments, the same answer as map_arrays and arrays_in."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from diffcheck.localize._arrays import arrays_in, map_arrays, map_call, nbytes

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.ones(4, dtype=np.float64)
C = np.zeros((), dtype=np.int32)

CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((A,), {}),
    ((A, B), {}),
    ((A, 2.0), {}),
    ((1, A), {}),
    ((A, (3, 2)), {}),  # a shape
    ((A,), {"axis": (0, 1), "keepdims": True}),
    ((A,), {"out": B}),
    (([A, B],), {"axis": 0}),  # a list of arrays: map_arrays' walk
    (((A, B), C), {}),  # a tuple of arrays
    ((A, "float32"), {}),  # a pair that map_arrays reads as a tagged host
    ((A, None, slice(0, 2), Ellipsis), {}),
    ((np.float32(2.0), A), {}),  # a NumPy scalar is an array to is_array
    ((), {}),
]


class Counting:
    """A conversion that tags each array with its turn, so the order and count show."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, value: Any) -> Any:
        self.calls += 1
        array = value[0] if isinstance(value, tuple) else value
        return np.asarray(np.asarray(array, dtype=np.float64) + self.calls)  # a host array


def _same(x: Any, y: Any) -> bool:
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and np.array_equal(x, y)
    if isinstance(x, tuple | list):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    return bool(x == y) or x is y


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_map_call_maps_as_map_arrays_and_finds_what_arrays_in_finds(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    walked, fast = Counting(), Counting()
    want_args, want_kwargs = map_arrays((args, kwargs), walked)
    got_args, got_kwargs, found = map_call(args, kwargs, fast)
    assert fast.calls == walked.calls  # each array converted once, in the same order
    assert _same(got_args, want_args)
    assert _same(got_kwargs, want_kwargs)
    # The converted values, for the bytes a window keeps: arrays_in's of the result.
    assert sum(map(nbytes, found)) == sum(map(nbytes, arrays_in(want_args, want_kwargs)))
    assert len(found) == len(arrays_in(want_args, want_kwargs))
