"""Host arrays for the API search: dtype categories, edge values, Hypothesis strategies.

Inputs are drawn on the host as NumPy arrays of an exact dtype through Hypothesis' Array API
strategies (``hypothesis.extra.array_api`` over NumPy), then moved to each side. Elements
mix Hypothesis' own draws for the dtype (which already favour NaN, infinities, signed
zeros, subnormals and the dtype's limits) with an explicit list of edge values, so every
example has a fair chance of hitting the cases where backends differ.

Hypothesis is imported only inside the functions that draw.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..values.dtypes import BOOL, COMPLEX, INTEGER, SIGNED
from ..values.signatures import default_version

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["CATEGORIES", "Space", "edge_values", "shift_counts", "strategies_namespace"]

REAL_FLOAT = ("float32", "float64")
#: The standard's dtype categories, by the names its function pages use.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "bool": (BOOL,),
    "integer": INTEGER,
    "signed": SIGNED,
    "integer_or_bool": (BOOL, *INTEGER),
    "real_floating": REAL_FLOAT,
    "complex": COMPLEX,
    "floating": (*REAL_FLOAT, *COMPLEX),
    "real": (*INTEGER, *REAL_FLOAT),
    "numeric": (*INTEGER, *REAL_FLOAT, *COMPLEX),
    "any": (BOOL, *INTEGER, *REAL_FLOAT, *COMPLEX),
}


def edge_values(dtype: str) -> list[Any]:
    """The values where backends most often part ways, for ``dtype``.

    Floats: NaN, ±inf, ±0.0, the smallest subnormal and normal, the largest finite value,
    huge and tiny magnitudes, ±1 and values just off them. Integers: 0, ±1, the dtype's
    minimum and maximum and their neighbours. Complex: pairs of the real edges.
    """
    if dtype == BOOL:
        return [False, True]
    if dtype in INTEGER:
        info = np.iinfo(dtype)
        values = {0, 1, 2, info.max, info.max - 1, info.min, info.min + 1}
        if info.min < 0:
            values |= {-1, -2}
        return sorted(int(v) for v in values)
    real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    finfo = np.finfo(real)
    tiny, huge = float(finfo.smallest_subnormal), float(finfo.max)
    floats = [
        float("nan"),
        float("inf"),
        float("-inf"),
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        tiny,
        -tiny,
        float(finfo.smallest_normal),
        huge,
        -huge,
        1e30 if real == "float32" else 1e300,
        1e-30 if real == "float32" else 1e-300,
        float(np.nextafter(np.asarray(1.0, real), np.asarray(2.0, real))),
        float(np.nextafter(np.asarray(1.0, real), np.asarray(0.0, real))),
    ]
    # Each value as the dtype stores it (1e30 is not a float32): Hypothesis refuses others.
    floats = [float(np.asarray(v, real)) for v in floats]
    if dtype in COMPLEX:
        pairs = [complex(a, b) for a in floats[:8] for b in (0.0, -0.0, 1.0, float("inf"))]
        return [*pairs, complex(floats[8], floats[11]), complex(floats[12], floats[13])]
    return floats


def shift_counts(dtype: str) -> list[int]:
    """Shift counts at and past the bit width of ``dtype`` (where hardware masks the count)."""
    bits = np.dtype(dtype).itemsize * 8
    limit = int(np.iinfo(dtype).max)
    return [c for c in (0, 1, bits - 1, bits, bits + 1, 2 * bits - 1, 2 * bits) if c <= limit]


@dataclass(frozen=True)
class Space:
    """What the search may draw: the dtypes both sides hold, and how large an array gets.

    Attributes
    ----------
    dtypes
        The standard's dtypes both backends support, in the standard's order.
    max_side
        The largest length of one axis.
    max_dims
        The most axes of an array.
    function
        The function being drawn for (float elements include its interesting points;
        see :mod:`diffcheck.search.values`).
    api_version
        The standard's version whose signatures the calls follow (default: the newest
        NumPy declares).
    """

    dtypes: tuple[str, ...]
    max_side: int = 4
    max_dims: int = 3
    #: The function being drawn for: its interesting points join the float draws.
    function: str = ""
    #: The standard's version whose signatures the calls follow (``--api-version``).
    api_version: str = field(default_factory=lambda: default_version(np))

    def of(self, category: str) -> tuple[str, ...]:
        """The supported dtypes of a category (``numeric``, ``real_floating``...)."""
        return tuple(d for d in CATEGORIES[category] if d in self.dtypes)

    def dtype(self, category: str) -> SearchStrategy[str]:
        """One supported dtype of ``category`` (the recipe is skipped when there is none)."""
        dtypes: SearchStrategy[str] = _cached(self, "dtype", category)
        return dtypes

    def _dtype(self, category: str) -> SearchStrategy[str]:
        from hypothesis import strategies as st

        # Each kind (bool, integers, real floats, complex) as likely as the others, so a
        # category of eight integer dtypes and two float ones still draws floats often.
        kinds = [
            found
            for kind in ((BOOL,), INTEGER, REAL_FLOAT, COMPLEX)
            if (found := [d for d in self.of(category) if d in kind])
        ]
        # From one wide integer (its residues are near uniform; Hypothesis' own choice
        # among a few options leans on the ones it drew before). It shrinks to the first.
        return st.integers(0, 2**32 - 1).map(
            lambda u: kinds[u % len(kinds)][(u // len(kinds)) % len(kinds[u % len(kinds)])]
        )

    def shape(
        self, *, min_dims: int = 0, max_dims: int | None = None, min_side: int = 0
    ) -> SearchStrategy[tuple[int, ...]]:
        """A shape, 0-d and empty ones included unless ``min_dims``/``min_side`` say not."""
        shapes: SearchStrategy[tuple[int, ...]] = _cached(
            self, "shape", min_dims, max_dims, min_side
        )
        return shapes

    def _shape(
        self, min_dims: int, max_dims: int | None, min_side: int
    ) -> SearchStrategy[tuple[int, ...]]:
        top = self.max_dims if max_dims is None else max_dims
        shapes: SearchStrategy[tuple[int, ...]] = strategies_namespace().array_shapes(
            min_dims=min_dims,
            max_dims=max(top, min_dims),
            min_side=min_side,
            max_side=self.max_side,
        )
        return shapes

    def value_shape(self) -> SearchStrategy[tuple[int, ...]]:
        """A shape for elementwise values: empty ones an eighth of the time, not half.

        An empty array checks shape handling only; the values are what elementwise
        functions get wrong, so most draws hold at least one element.
        """
        shapes: SearchStrategy[tuple[int, ...]] = _cached(self, "value_shape")
        return shapes

    def _value_shape(self) -> SearchStrategy[tuple[int, ...]]:
        from hypothesis import strategies as st

        full = self.shape(min_dims=1, min_side=1)
        row = st.integers(1, self.max_side**3).map(lambda n: (n,))  # many values, one axis
        return st.one_of(full, row, self.shape(min_side=1), self.shape())

    def array(
        self,
        dtype: str,
        shape: tuple[int, ...] | SearchStrategy[tuple[int, ...]],
        *,
        elements: SearchStrategy[Any] | None = None,
        finite: bool = False,
        extra: Sequence[Any] = (),
    ) -> SearchStrategy[np.ndarray[Any, Any]]:
        """A host array of ``dtype``: Hypothesis' draws for the dtype mixed with its edges.

        ``finite`` keeps floats finite and moderate (linear algebra, FFTs: NaN there
        measures the library's NaN propagation, not the function); ``elements`` replaces
        the draws altogether; ``extra`` adds values to the edges.
        """
        key = (dtype, shape, None, finite, tuple(extra))
        if elements is None and _hashable(key):
            cached: SearchStrategy[np.ndarray[Any, Any]] = _cached(self, "array", *key)
            return cached
        return self._array(dtype, shape, elements, finite, extra)

    def _array(
        self,
        dtype: str,
        shape: tuple[int, ...] | SearchStrategy[tuple[int, ...]],
        elements: SearchStrategy[Any] | None,
        finite: bool,
        extra: Sequence[Any],
    ) -> SearchStrategy[np.ndarray[Any, Any]]:
        from hypothesis import strategies as st

        xps = strategies_namespace()
        if elements is None:
            if finite and dtype not in INTEGER and dtype != BOOL:
                # Eighths in [-8, 8]: exact in every float dtype, so no draw is rounded.
                real = st.integers(-64, 64).map(lambda k: k / 8)
                elements = st.builds(complex, real, real) if dtype in COMPLEX else real
            elif dtype in INTEGER or dtype == BOOL:
                own = xps.from_dtype(dtype)
                edges = st.sampled_from([*edge_values(dtype), *extra])
                elements = st.one_of(edges, edges, own)  # two thirds edges: where bugs are
            else:  # floats: ordinary, the function's points, subnormals, special cases
                from .values import float_elements

                elements = float_elements(dtype, self.function)
                if extra:
                    elements = st.one_of(elements, st.sampled_from(list(extra)))
        # No fill: every element is drawn on its own. (With a fill, Hypothesis draws a
        # sparse few elements and gives all others one fill value: an array of 64 elements
        # would hold two or three distinct values.) Arrays here hold at most
        # max_side ** max_dims elements, so drawing each stays cheap.
        drawn: SearchStrategy[np.ndarray[Any, Any]] = xps.arrays(
            dtype, shape, elements=elements, fill=st.nothing()
        )
        return drawn


@functools.lru_cache(maxsize=4096)
def _cached(space: Space, what: str, *args: Any) -> Any:
    """``space``'s strategy ``what`` for ``args``, built once.

    A recipe asks for its strategies inside every draw; building one (and Hypothesis
    validating it on first use) cost more than drawing from it: about two thirds of a
    search's time went there. Strategies are immutable, so one per arguments serves all.
    """
    build: Callable[..., Any] = getattr(space, f"_{what}")
    return build(*args)


def _hashable(key: tuple[Any, ...]) -> bool:
    """Whether ``key`` can key the cache (an extra value may be an unhashable array)."""
    try:
        hash(key)
    except TypeError:
        return False
    return True


_XPS: Any = None


def strategies_namespace() -> Any:
    """Hypothesis' Array API strategies over NumPy (built once: building inspects NumPy)."""
    global _XPS
    if _XPS is None:
        from hypothesis.extra.array_api import make_strategies_namespace

        _XPS = make_strategies_namespace(np, api_version="2023.12")
    return _XPS
