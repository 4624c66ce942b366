"""How to draw one call of a standard function: examples, calls, and families of recipes.

An :class:`Example` is one call's host inputs: arrays (exact dtype) and Python scalars,
keyword arguments as JSON values, and the few arguments that must be built in each
namespace (a dtype, an array sequence). A :class:`Recipe` draws examples for one function
from a :class:`~diffcheck.search.arrays.Space`; the families below (``unary``, ``binary``,
``reduction``...) build recipes, and :mod:`diffcheck.search.table` says which family
each function of the standard uses.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..values.call import resolve_function
from ..values.dtypes import INTEGER
from .arrays import Space, shift_counts

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = ["Example", "Recipe", "SpecCall", "call_for"]


@dataclass(frozen=True)
class Example:
    """One call's inputs, on the host.

    Attributes
    ----------
    args
        The positional array arguments (NumPy arrays of an exact dtype) and Python scalars.
    kwargs
        Keyword arguments: JSON scalars, strings and tuples of ints (``axis=(0, 2)``).
    positional
        Positional arguments after ``args`` that are not arrays (a shape, an axes tuple).
    dtypes
        Arguments that name a dtype, by keyword (``"dtype": "int16"``); the key ``"#"``
        is a positional dtype after ``positional`` (``astype(x, dtype)``).
    sequence
        The arrays are passed as one list (``concat``, ``stack``).
    """

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    positional: tuple[Any, ...] = ()
    dtypes: dict[str, str] = field(default_factory=dict)
    sequence: bool = False

    def input_dtypes(self) -> str:
        """The dtypes of the array inputs (or the requested dtype), comma-separated."""
        names = [str(a.dtype) for a in self.args if isinstance(a, np.ndarray)]
        names += list(self.dtypes.values())
        unique = list(dict.fromkeys(names))
        return ",".join(unique) if unique else "none"

    def size(self) -> int:
        """Elements of every array input: how large the example is."""
        return sum(int(a.size) for a in self.args if isinstance(a, np.ndarray))


@dataclass(frozen=True)
class SpecCall:
    """``xp.<function>(*arrays, *positional, dtype, **kwargs)`` with dtypes built in ``xp``."""

    function: str
    positional: tuple[Any, ...] = ()
    dtypes: tuple[tuple[str, str], ...] = ()
    sequence: bool = False

    def __call__(self, xp: Any, *arrays: Any, **kwargs: Any) -> Any:
        function = resolve_function(xp, self.function)
        # A dtype the standard's stub makes positional-only is passed by position
        # (``can_cast(from_, to, /)``), in the stub's order; "#" is positional by itself.
        order = _positional_only(self.function)
        at = {key: (order.index(key) if key in order else -1) for key, _ in self.dtypes}
        named = {key: getattr(xp, name) for key, name in self.dtypes if key != "#" and at[key] < 0}
        trailing = [
            getattr(xp, name)
            for key, name in sorted(self.dtypes, key=lambda item: at[item[0]])
            if key == "#" or at[key] >= 0
        ]
        head = [list(arrays)] if self.sequence else list(arrays)
        return function(*head, *self.positional, *trailing, **named, **kwargs)


def _positional_only(function: str) -> tuple[str, ...]:
    """The positional-only parameters of ``function`` in the newest version that has it."""
    from ..values.signatures import VERSIONS, signature

    for version in reversed(VERSIONS):
        found = signature(function, version)
        if found is not None:
            return found.positional_only
    return ()


def call_for(function: str, example: Example) -> str | SpecCall:
    """The spec name itself where the call is plain (it keeps the standard's dtype rules)."""
    if not (example.positional or example.dtypes or example.sequence):
        return function
    return SpecCall(
        function, example.positional, tuple(sorted(example.dtypes.items())), example.sequence
    )


@dataclass(frozen=True)
class Recipe:
    """How to draw the arguments of one function.

    Attributes
    ----------
    category
        The dtype category of its main input (the function is skipped, with that reason,
        when both backends share no dtype of it).
    draw
        ``draw(space)`` -> a Hypothesis strategy of :class:`Example`.
    """

    category: str
    draw: Callable[[Space], SearchStrategy[Example]]
    #: Elementwise functions: ``sweeps(space, seed)``, rows of many distinct float values
    #: judged after the Hypothesis search (see :func:`sweeps_for`).
    sweeps: Callable[[Space, int], list[Example]] | None = None
    #: Every array argument is an operand of the main input's category (``unary``,
    #: ``binary``, ``reduction``), so casting them all to another dtype of it is a call
    #: the standard defines: the function gets dtype rows (not ``take``'s indices or
    #: ``where``'s condition).
    dtype_rows: bool = False
    #: The function takes ``dtype=`` (``sum``): its dtype rows pass it too.
    dtype_keyword: bool = False
    #: Keywords with few values, each tried once after the search if never drawn
    #: (:func:`~diffcheck.search.dtype_rows.keyword_rows`).
    keyword_values: tuple[tuple[str, tuple[Any, ...]], ...] = ()


#: Sweep rows per float dtype: three rows of 48 hold about 80 distinct ordinary values.
SWEEPS_PER_DTYPE = 3


def sweeps_for(arity: int, category: str) -> Callable[[Space, int], list[Example]]:
    """Sweep examples of an elementwise function of ``arity`` arrays of ``category``.

    Hypothesis' first draws of an array are small and its dtype choices come in runs, so
    in a default run a float function may see a float dtype once, with one to three
    elements. After the search, each float dtype of the function gets
    :data:`SWEEPS_PER_DTYPE` rows (:func:`~diffcheck.search.values.sweep`, seeded by the
    search's seed, the function and the row): every float function then sees dozens of
    distinct ordinary values, its own points, subnormals and special cases in each dtype.
    """

    def build(space: Space, seed: int) -> list[Example]:
        from .values import sweep

        made: list[Example] = []
        for dtype in space.of(category):  # only the dtypes the function is defined for
            if dtype in INTEGER or dtype == "bool" or dtype == "bfloat16":
                continue
            for row in range(SWEEPS_PER_DTYPE):
                base = (seed * 7919 + row * 104729 + len(made)) % 2**32
                args = tuple(sweep(base + i, dtype, space.function) for i in range(arity))
                made.append(Example(args))
        return made

    return build


def _axis(draw: DrawFn, ndim: int, *, allow_none: bool = True, many: bool = True) -> Any:
    from hypothesis import strategies as st

    options: list[SearchStrategy[Any]] = []
    if allow_none:
        options.append(st.none())
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if many:
            options.append(
                st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(
                    lambda axes: tuple(sorted(axes))
                )
            )
    return draw(st.one_of(options)) if options else None


def unary(category: str, *, finite: bool = False, **options: Any) -> Recipe:
    """``f(x)`` on any shape; ``options`` maps keyword names to strategies of their values."""
    from hypothesis import strategies as st

    def build(space: Space) -> SearchStrategy[Example]:
        @st.composite
        def example(draw: DrawFn) -> Example:
            dtype = draw(space.dtype(category))
            x = draw(space.array(dtype, space.value_shape(), finite=finite))
            kwargs = {k: draw(v) for k, v in options.items()}
            return Example((x,), {k: v for k, v in kwargs.items() if v is not None})

        return example()

    return Recipe(category, build, sweeps_for(1, category) if not options else None, True)


def binary(
    category: str,
    *,
    rhs: Callable[[str], SearchStrategy[Any]] | None = None,
    rhs_category: str | None = None,
    shift: bool = False,
) -> Recipe:
    """``f(x1, x2)`` on broadcasting shapes (``rhs`` draws x2's elements).

    x2 has x1's dtype or, as often, another of the category that the standard's promotion
    table pairs with it (``int8`` with ``uint8``, ``float32`` with ``float64``...), so the
    result dtype is checked against the promotion rules, not only against the reference.
    ``shift`` draws x2 as shift counts (at and past the bit width, never negative, where the
    standard specifies no result) of x1's dtype.
    """
    from hypothesis import strategies as st

    def build(space: Space) -> SearchStrategy[Example]:
        @st.composite
        def example(draw: DrawFn) -> Example:
            dtype = draw(space.dtype(category))
            if rhs_category:
                other = draw(space.dtype(rhs_category))
            elif shift:
                other = dtype
            else:
                other = draw(_promotable_with(space, category, dtype))
            shapes = draw(_broadcastable(space, 2))
            x1 = draw(space.array(dtype, shapes[0]))
            if shift:
                limit = int(np.iinfo(dtype).max)
                counts = st.one_of(
                    st.sampled_from(shift_counts(dtype)), st.integers(0, min(limit, 70))
                )
                x2 = draw(space.array(other, shapes[1], elements=counts))
            elif rhs is not None:
                x2 = draw(space.array(other, shapes[1], elements=rhs(other)))
            else:
                x2 = draw(space.array(other, shapes[1]))
            return Example((x1, x2))

        return example()

    sweeps = None if shift or rhs_category else sweeps_for(2, category)
    return Recipe(category, build, sweeps, not (shift or rhs_category or rhs))


@functools.lru_cache(maxsize=1024)  # built once per space and dtype: see arrays._cached
def _promotable_with(space: Space, category: str, dtype: str) -> SearchStrategy[str]:
    """``dtype`` itself or, as often, another dtype of ``category`` the standard promotes it with."""
    from hypothesis import strategies as st

    from ..values.dtypes import promote

    others = [o for o in space.of(category) if o != dtype and promote([dtype, o]) is not None]
    if not others:
        return st.just(dtype)
    return st.one_of(st.just(dtype), st.sampled_from(others))


@functools.lru_cache(maxsize=1024)  # built once per space: see arrays._cached
def _broadcastable(space: Space, count: int) -> SearchStrategy[tuple[tuple[int, ...], ...]]:
    """``count`` shapes that broadcast together, each as large as a unary draw's.

    A result shape is drawn as for one array; each input keeps its trailing axes (some
    or all) with a side of 1 now and then. (Hypothesis' ``mutually_broadcastable_shapes``
    mostly gives shapes of one element, so binary functions saw few values.)
    """
    from hypothesis import strategies as st

    @st.composite
    def shapes(draw: DrawFn) -> tuple[tuple[int, ...], ...]:
        result = draw(space.value_shape())
        drawn = []
        for index in range(count):  # the first input spans the result's axes
            keep = len(result) if index == 0 else draw(st.integers(0, len(result)))
            kept = result[len(result) - keep :]
            ones = draw(st.lists(st.integers(0, 3), min_size=len(kept), max_size=len(kept)))
            drawn.append(tuple(1 if o == 3 else n for n, o in zip(kept, ones, strict=True)))
        return tuple(drawn)

    return shapes()


def reduction(
    category: str,
    *,
    keepdims: bool = True,
    finite: bool = False,
    many_axes: bool = True,
    min_dims: int = 0,
    large: str | None = None,
    dtype_keyword: bool = False,
    **options: Any,
) -> Recipe:
    """``f(x, axis=..., keepdims=...)`` with axis None, one axis or several.

    ``dtype_keyword`` draws the function's ``dtype=`` too (left out half the time): one
    of ``x``'s kind that holds every value of ``x``'s dtype (:func:`_widening`), so the
    cast the standard asks for changes no value.

    ``large`` (``"sums"`` or ``"products"``) makes one example in
    :data:`~diffcheck.search.large.LARGE_SHARE` a long floating-point array
    (:mod:`diffcheck.search.large`), reduced whole or along its last axis.
    """
    from hypothesis import strategies as st

    from .large import is_large

    def build(space: Space) -> SearchStrategy[Example]:
        floats = tuple(d for d in space.of(category) if d not in INTEGER and d != "bool")

        @st.composite
        def example(draw: DrawFn) -> Example:
            if large and floats and is_large(draw):
                return _large_reduction(draw, space, floats, large, min_dims, keepdims, options)
            dtype = draw(space.dtype(category))
            x = draw(space.array(dtype, space.shape(min_dims=min_dims), finite=finite))
            kwargs: dict[str, Any] = {}
            axis = _axis(draw, x.ndim, allow_none=min_dims == 0, many=many_axes)
            if axis is not None:
                kwargs["axis"] = axis
            if keepdims and draw(st.booleans()):
                kwargs["keepdims"] = True
            for key, strategy in options.items():
                value = draw(strategy)
                if value is not None:
                    kwargs[key] = value
            wider: tuple[str, ...] = _widening(dtype, space.of(category)) if dtype_keyword else ()
            named: bool = bool(wider) and draw(st.booleans())
            if named:
                given: str = draw(st.sampled_from(wider))
                return Example((x,), kwargs, dtypes={"dtype": given})
            return Example((x,), kwargs)

        return example()

    sweeps = _cancelling_rows(category) if large == "sums" and min_dims == 0 else None
    return Recipe(category, build, sweeps, True, dtype_keyword)


def _widening(dtype: str, dtypes: Sequence[str]) -> tuple[str, ...]:
    """The dtypes among ``dtypes`` of ``dtype``'s kind that hold all of its values."""
    if dtype == "bfloat16" or dtype == "bool":
        return ()
    own = np.dtype(dtype)
    return tuple(
        d
        for d in dtypes
        if d not in ("bfloat16", "bool")
        and np.dtype(d).kind == own.kind
        and np.dtype(d).itemsize >= own.itemsize
    )


#: Elements of a cancellation sweep row: large n, where a left-to-right sum drifts.
CANCELLING_LENGTH = 1_000_000


def _cancelling_rows(category: str) -> Callable[[Space, int], list[Example]]:
    """After the search of a sum-like reduction, one row per real float dtype of
    :data:`CANCELLING_LENGTH` values of mean about 100 and a spread of 2^-8 of it (seeded
    by the search's seed): a large mean, a small spread and a large n, where a
    left-to-right sum and a one-pass variance lose their digits (float32 ``var`` of 10^6
    such values was 4.3e-4 off relative, found before only on constant rows)."""

    def build(space: Space, seed: int) -> list[Example]:
        rows: list[Example] = []
        for dtype in space.of(category):
            if dtype not in ("float32", "float64"):
                continue
            rng = np.random.default_rng((seed * 7919 + len(rows)) % 2**32)
            mean = 64.0 + 64.0 * rng.random()
            values = mean * (1.0 + 2.0**-8 * rng.random(CANCELLING_LENGTH))
            rows.append(Example((values.astype(dtype),)))
        return rows

    return build


def _large_reduction(
    draw: DrawFn,
    space: Space,
    floats: tuple[str, ...],
    large: str,
    min_dims: int,
    keepdims: bool,
    options: dict[str, Any],
) -> Example:
    """A long 1-D array (or a few long rows), reduced whole or along its last axis."""
    from hypothesis import strategies as st

    from .large import large_values, length

    dtype = draw(st.sampled_from(floats))
    n = length(draw)
    shape = (n,) if draw(st.integers(0, 3)) else (2, n // 2)
    x = large_values(draw, dtype, shape, products=large == "products")
    kwargs: dict[str, Any] = {}
    if min_dims or len(shape) > 1 or draw(st.booleans()):
        kwargs["axis"] = -1  # the contiguous axis: where NumPy sums pairwise
    if keepdims and draw(st.booleans()):
        kwargs["keepdims"] = True
    for key, strategy in options.items():
        # Left out half the time: a backend lacking the keyword still has its values judged.
        value = draw(strategy) if draw(st.booleans()) else None
        if value is not None:
            kwargs[key] = value
    return Example((x,), kwargs)


def custom(category: str, body: Callable[[DrawFn, Space], Example]) -> Recipe:
    """A recipe whose example ``body(draw, space)`` builds (functions with coupled arguments)."""
    from hypothesis import strategies as st

    def build(space: Space) -> SearchStrategy[Example]:
        return st.composite(lambda draw: body(draw, space))()

    return Recipe(category, build)
