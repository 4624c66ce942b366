"""Examples whose arguments depend on each other: creation, manipulation, linalg, FFTs.

Each ``body(draw, space)`` draws one :class:`~diffcheck.search.recipes.Example`: a shape
and the axes that fit it, a matrix and the vector it is solved against, a well-conditioned
matrix for ``inv`` (diagonally dominant) or an SPD one for ``cholesky``, so the search
measures the function rather than the conditioning of random input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..values.signatures import axis_interval
from .arrays import Space, edge_values
from .large import is_large, large_values, length
from .recipes import Example, Recipe

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn

__all__: list[str] = []  # bodies are used by diffcheck.search.table only


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def creation_shape(draw: DrawFn, space: Space, category: str = "numeric") -> Example:
    """``zeros(shape, dtype=)`` and ``ones``: a shape (empty and 0-d included) and a dtype."""
    dtype = draw(space.dtype(category))
    shape = draw(space.shape())
    return Example((), positional=(shape,), dtypes={"dtype": dtype})


def full(draw: DrawFn, space: Space) -> Example:
    dtype = draw(space.dtype("real"))
    shape = draw(space.shape())
    fill = draw(space.array(dtype, ())).item()
    return Example((), positional=(shape, fill), dtypes={"dtype": dtype})


def like(draw: DrawFn, space: Space, fill: bool = False) -> Example:
    """``zeros_like(x)``, ``ones_like(x)``, ``full_like(x, value)``."""
    dtype = draw(space.dtype("real" if fill else "any"))
    x = draw(space.array(dtype, space.shape()))
    if not fill:
        return Example((x,))
    return Example((x, draw(space.array(dtype, ())).item()))


def arange(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("signed"))
    start = draw(st.integers(-20, 20))
    stop = draw(st.integers(-20, 20))
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    return Example((), positional=(start, stop, step), dtypes={"dtype": dtype})


def linspace(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("real_floating"))
    start = draw(st.integers(-10, 10))
    stop = draw(st.integers(-10, 10))
    num = draw(st.integers(0, 9))
    endpoint = draw(st.booleans())
    return Example(
        (),
        kwargs={"endpoint": endpoint},
        positional=(float(start), float(stop), num),
        dtypes={"dtype": dtype},
    )


def eye(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("numeric"))
    rows = draw(st.integers(0, space.max_side))
    cols = draw(st.integers(0, space.max_side))
    k = draw(st.integers(-3, 3))
    return Example((), kwargs={"k": k}, positional=(rows, cols), dtypes={"dtype": dtype})


def matrix_like(draw: DrawFn, space: Space, category: str = "numeric", **offset: int) -> Example:
    """An array of at least two axes (``tril``, ``matrix_transpose``, ``diagonal``...)."""
    st = _st()
    dtype = draw(space.dtype(category))
    x = draw(space.array(dtype, space.shape(min_dims=2)))
    kwargs = {key: draw(st.integers(-limit, limit)) for key, limit in offset.items()}
    return Example((x,), kwargs)


def astype(draw: DrawFn, space: Space) -> Example:
    source = draw(space.dtype("any"))
    target = draw(space.dtype("any"))
    x = draw(space.array(source, space.shape()))
    return Example((x,), dtypes={"#": target})


def can_cast(draw: DrawFn, space: Space) -> Example:
    source = draw(space.dtype("any"))
    target = draw(space.dtype("any"))
    # Both dtypes are built in each namespace and passed by position (the stub's
    # ``can_cast(from_, to, /)``); no array at all.
    return Example((), dtypes={"from_": source, "to": target})


def take(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("any"))
    x = draw(space.array(dtype, space.shape(min_dims=1, min_side=1)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    length = x.shape[axis]
    count = draw(st.integers(0, 5))
    indices = np.asarray(draw(st.lists(st.integers(0, length - 1), min_size=count, max_size=count)))
    kwargs = {"axis": axis} if x.ndim > 1 or draw(st.booleans()) else {}
    return Example((x, indices.astype(np.int64)), kwargs)


def take_along_axis(draw: DrawFn, space: Space) -> Example:
    """``x`` and indices of x's shape but for ``axis``, each index within that axis."""
    st = _st()
    dtype = draw(space.dtype("any"))
    x = draw(space.array(dtype, space.shape(min_dims=1, min_side=1)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    shape = list(x.shape)
    shape[axis] = draw(st.integers(0, 5))
    count = int(np.prod(shape))
    flat = draw(st.lists(st.integers(0, x.shape[axis] - 1), min_size=count, max_size=count))
    indices = np.asarray(flat, dtype=np.int64).reshape(shape)
    return Example((x, indices), {"axis": axis})


def irfftn(draw: DrawFn, space: Space) -> Example:
    """A complex input whose last axis has at least 2 elements (the output has 2(m - 1))."""
    st = _st()
    dtype = draw(space.dtype("complex"))
    shape = (*draw(space.shape(min_dims=0, max_dims=1, min_side=1)), draw(st.integers(2, 9)))
    x = draw(space.array(dtype, shape, finite=True))
    return Example((x,), {"norm": draw(st.sampled_from(["backward", "ortho", "forward"]))})


def matmul(draw: DrawFn, space: Space, category: str = "numeric") -> Example:
    st = _st()
    floats = space.of("real_floating")
    if floats and is_large(draw):  # a long inner dimension: its sums' error shows
        dtype = draw(st.sampled_from(floats))
        m, n = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        k = length(draw) // (m * n)
        return Example((large_values(draw, dtype, (m, k)), large_values(draw, dtype, (k, n))))
    dtype = draw(space.dtype(category))
    m, k, n = (draw(st.integers(1, space.max_side)) for _ in range(3))
    batch = draw(st.sampled_from([(), (2,)]))
    x1 = draw(space.array(dtype, (*batch, m, k), finite=True))
    x2 = draw(space.array(dtype, (k, n) if draw(st.booleans()) else (*batch, k, n), finite=True))
    return Example((x1, x2))


def tensordot(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("numeric"))
    a, b, c = (draw(st.integers(1, space.max_side)) for _ in range(3))
    axes = draw(st.integers(0, 1))
    x1 = draw(space.array(dtype, (a, b), finite=True))
    x2 = draw(space.array(dtype, (b, c) if axes else (c,), finite=True))
    return Example((x1, x2), {"axes": axes})


def vecdot(draw: DrawFn, space: Space) -> Example:
    st = _st()
    floats = space.of("real_floating")
    if floats and is_large(draw):  # two long vectors: the dot product's error shows
        dtype = draw(st.sampled_from(floats))
        n = length(draw)
        return Example((large_values(draw, dtype, (n,)), large_values(draw, dtype, (n,))))
    dtype = draw(space.dtype("numeric"))
    shape = draw(space.shape(min_dims=1))
    x1 = draw(space.array(dtype, shape, finite=True))
    x2 = draw(space.array(dtype, shape, finite=True))
    # The axis on the interval the version's stub states ([-N, -1] for vecdot: a positive
    # axis is outside the standard, so a refusal of it would be no finding).
    low, high = axis_interval("vecdot", space.api_version, len(shape)) or (-len(shape), -1)
    kwargs = {"axis": draw(st.integers(low, high))} if draw(st.booleans()) else {}
    return Example((x1, x2), kwargs)


def square(
    draw: DrawFn, space: Space, kind: str = "general", category: str = "real_floating"
) -> Example:
    """A (batch of) square matrix: ``general``, ``dominant`` (invertible), ``spd``, ``symmetric``."""
    st = _st()
    dtype = draw(space.dtype(category))
    n = draw(st.integers(1, space.max_side))
    batch = draw(st.sampled_from([(), (2,)]))
    m = draw(space.array(dtype, (*batch, n, n), finite=True)).astype(np.float64)
    if kind == "dominant":
        m = m + np.eye(n) * (np.abs(m).sum(axis=-1, keepdims=True) + 1.0)
    elif kind == "spd":
        m = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
    elif kind == "symmetric":
        m = (m + np.swapaxes(m, -1, -2)) / 2
    return Example((m.astype(dtype),))


def solve(draw: DrawFn, space: Space) -> Example:
    st = _st()
    (a,) = square(draw, space, "dominant").args
    n = a.shape[-1]
    b = draw(space.array(str(a.dtype), (*a.shape[:-2], n, draw(st.integers(1, 3))), finite=True))
    return Example((a, b))


def cross(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("numeric"))
    batch = draw(st.sampled_from([(), (2,), (2, 2)]))
    return Example(
        (
            draw(space.array(dtype, (*batch, 3), finite=True)),
            draw(space.array(dtype, (*batch, 3), finite=True)),
        )
    )


def outer(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("numeric"))
    sizes = [draw(st.integers(0, space.max_side)) for _ in range(2)]
    return Example(tuple(draw(space.array(dtype, (n,), finite=True)) for n in sizes))


def matrix_power(draw: DrawFn, space: Space) -> Example:
    st = _st()
    (a,) = square(draw, space, "dominant").args
    return Example((a,), positional=(draw(st.integers(-2, 3)),))


def matrix_norm(draw: DrawFn, space: Space) -> Example:
    st = _st()
    (a,) = square(draw, space, "general").args
    order = draw(st.sampled_from(["fro", "nuc", 1, -1, 2, -2, "inf", "-inf"]))
    order = {"inf": float("inf"), "-inf": float("-inf")}.get(order, order)
    return Example((a,), {"ord": order, "keepdims": draw(st.booleans())})


def vector_norm(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("floating"))
    x = draw(space.array(dtype, space.shape(min_dims=1), finite=True))
    order = draw(st.sampled_from([2, 1, 0, 3, float("inf"), float("-inf")]))
    return Example((x,), {"ord": order})


def fft(
    draw: DrawFn, space: Space, category: str, nd: bool = False, output_n: bool = False
) -> Example:
    """An FFT's input: at least one axis of length >= 1, ``n`` (or ``s``), ``axis``, ``norm``."""
    st = _st()
    dtype = draw(space.dtype(category))
    x = draw(space.array(dtype, space.shape(min_dims=1, max_dims=2, min_side=1), finite=True))
    kwargs: dict[str, Any] = {"norm": draw(st.sampled_from(["backward", "ortho", "forward"]))}
    if nd:
        return Example((x,), kwargs)
    if output_n or draw(st.booleans()):
        kwargs["n"] = draw(st.integers(2 if output_n else 1, 2 * space.max_side))
    if x.ndim > 1:
        kwargs["axis"] = draw(st.integers(-x.ndim, x.ndim - 1))
    return Example((x,), kwargs)


def fftfreq(draw: DrawFn, space: Space) -> Example:
    st = _st()
    n = draw(st.integers(1, 9))
    return Example((n,), {"d": draw(st.sampled_from([1.0, 0.5, 0.1, 2.0]))})


def sequence(draw: DrawFn, space: Space, stack: bool = False) -> Example:
    """``concat`` / ``stack`` of two arrays that fit together along the drawn axis."""
    st = _st()
    dtype = draw(space.dtype("any"))
    shape = list(draw(space.shape(min_dims=1)))
    if stack:
        axis = draw(st.integers(-len(shape) - 1, len(shape)))
        arrays = tuple(draw(space.array(dtype, tuple(shape))) for _ in range(2))
        return Example(arrays, {"axis": axis}, sequence=True)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    other = list(shape)
    other[axis] = draw(st.integers(0, space.max_side))
    arrays = (draw(space.array(dtype, tuple(shape))), draw(space.array(dtype, tuple(other))))
    return Example(arrays, {"axis": axis}, sequence=True)


def reshape_like(draw: DrawFn, space: Space, what: str) -> Example:
    """Manipulations that take an axis or shape fitted to the drawn array."""
    st = _st()
    dtype = draw(space.dtype("any"))
    x = draw(space.array(dtype, space.shape(min_dims=1)))
    n = x.ndim
    if what == "reshape":
        return Example((x,), positional=(draw(st.sampled_from([(-1,), (x.size,), (1, -1)])),))
    if what == "permute_dims":
        return Example((x,), positional=(tuple(draw(st.permutations(range(n)))),))
    if what == "moveaxis":
        return Example(
            (x,), positional=(draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1)))
        )
    if what == "expand_dims":
        return Example((x,), {"axis": draw(st.integers(-n - 1, n))})
    if what == "squeeze":
        x = x.reshape((*x.shape, 1))
        return Example((x,), positional=(-1,))
    if what == "flip":
        return Example((x,), {"axis": _some_axis(draw, n)} if draw(st.booleans()) else {})
    if what == "roll":
        return Example(
            (x,), {"axis": draw(st.integers(-n, n - 1))}, positional=(draw(st.integers(-5, 5)),)
        )
    if what == "repeat":
        return Example(
            (x,), {"axis": draw(st.integers(-n, n - 1))}, positional=(draw(st.integers(0, 3)),)
        )
    if what == "tile":
        return Example((x,), positional=(tuple(draw(st.integers(0, 2)) for _ in range(n)),))
    if what == "unstack":
        return Example((x,), {"axis": draw(st.integers(-n, n - 1))})
    if what == "broadcast_to":
        return Example((x,), positional=((2, *x.shape),))
    if what == "diff":
        return Example((x,), {"axis": draw(st.integers(-n, n - 1)), "n": draw(st.integers(0, 2))})
    raise AssertionError(what)


def _some_axis(draw: DrawFn, n: int) -> Any:
    st = _st()
    return draw(st.one_of(st.integers(-n, n - 1), st.just(tuple(range(n)))))


def sorted_search(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("real"))
    x1 = np.sort(draw(space.array(dtype, (draw(st.integers(0, 6)),))))
    x2 = draw(space.array(dtype, space.shape()))
    return Example((x1, x2), {"side": draw(st.sampled_from(["left", "right"]))})


def where(draw: DrawFn, space: Space) -> Example:
    dtype = draw(space.dtype("any"))
    shape = draw(space.shape())
    condition = draw(space.array("bool", shape))
    return Example((condition, draw(space.array(dtype, shape)), draw(space.array(dtype, shape))))


def meshgrid(draw: DrawFn, space: Space) -> Example:
    st = _st()
    dtype = draw(space.dtype("numeric"))
    arrays = tuple(
        draw(space.array(dtype, (draw(st.integers(0, space.max_side)),))) for _ in range(2)
    )
    return Example(arrays, {"indexing": draw(st.sampled_from(["xy", "ij"]))})


def clip(draw: DrawFn, space: Space) -> Example:
    dtype = draw(space.dtype("real"))
    x = draw(space.array(dtype, space.shape()))
    bounds = sorted(draw(space.array(dtype, (2,), finite=True)).tolist())
    if any(v != v for v in bounds):  # NaN bounds: the standard leaves clip open
        return Example((x,))
    return Example((x,), {"min": bounds[0], "max": bounds[1]})


def isin(draw: DrawFn, space: Space) -> Example:
    """``isin(x1, x2)`` (2025.12): integer arrays sharing values, so both answers occur."""
    st = _st()
    dtype = draw(space.dtype("integer"))
    pool = st.sampled_from(edge_values(dtype)) | st.integers(0, 5)
    x1 = draw(space.array(dtype, space.shape(), elements=pool))
    x2 = draw(space.array(dtype, space.shape(min_dims=1), elements=pool))
    kwargs = {"invert": True} if draw(st.booleans()) else {}
    return Example((x1, x2), kwargs)


def newer_recipes() -> dict[str, Recipe]:
    """Recipes of functions that versions after 2024.12 add (searched under those versions)."""
    from .recipes import custom

    return {"isin": custom("integer", isin)}
