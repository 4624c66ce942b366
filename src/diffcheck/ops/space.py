"""The shapes ``diffcheck fuzz`` draws: each op's dimensions, their edges and a size budget.

Every op brings its own :class:`OpSpace` from :meth:`Op.fuzz_space <diffcheck.ops.Op.fuzz_space>`
(an op of a plugin package too); the fuzzer (:mod:`diffcheck.fuzz`) only draws from it.

Backend bugs live in tails, so every dimension is drawn half the time from its *edges* (1,
small primes, powers of two and their neighbours, and one to three multiples of the kernel
tiles that cover it, each ±1: see :mod:`diffcheck.launch`) and half the time from the
whole range that still fits the budget. Dimensions are drawn one after another; each one's
range is the largest value for which the op's input plus output element count stays within
``max_elements`` with the dimensions not yet drawn at 1. Everything shrinks towards 1, the
first listed choice and seed 0, so a failure shrinks towards the smallest shape that shows it.

Hypothesis is imported only by :meth:`OpSpace.strategy`; the rest is plain arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from .._numbers import U64_MAX

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "MAX_ELEMENTS_LIMIT",
    "Dim",
    "Drawn",
    "OpSpace",
    "edges",
]

#: The largest budget accepted: every op's element counts then stay within the kernels'
#: signed 32-bit indexing, so a drawn shape is always one the op validates.
MAX_ELEMENTS_LIMIT: Final = 2**30
_PRIMES: Final = (2, 3, 5, 7, 11, 13, 17, 31, 37, 61, 67, 127, 131, 251, 257, 509, 521, 1021)

#: One drawn example: the op's params (keyword values) and the u64 input seed.
Drawn = tuple[dict[str, Any], int]


@dataclass(frozen=True)
class Dim:
    """One integer parameter and the kernel tiles whose boundaries matter for it.

    ``limit`` caps the drawn value below what the budget allows (RoPE's positions, whose
    float32 angles lose precision beyond a few thousand whatever the kernel does).
    """

    name: str
    tiles: tuple[int, ...] = ()
    limit: int | None = None


def _unchanged(values: dict[str, Any]) -> dict[str, Any]:
    return values


@dataclass(frozen=True)
class OpSpace:
    """Where one op's examples are drawn from."""

    op: str
    #: Drawn in this order (the first has the widest range).
    dims: tuple[Dim, ...]
    #: Input plus output elements of a shape (params by name).
    size: Callable[[Mapping[str, int]], int]
    #: Non-shape params drawn from a fixed list (the first is the shrink target).
    choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    #: Turns a drawn example into a valid one (``tokens <= dim`` under a causal mask, heads a
    #: multiple of kv_heads, an even width); ``size`` must cost a draw as fixed, so the
    #: budget still holds.
    fix: Callable[[dict[str, Any]], dict[str, Any]] = _unchanged

    @property
    def smallest(self) -> int:
        """Elements of the smallest shape (every dimension 1): the least budget that works."""
        return self.size(dict.fromkeys((dim.name for dim in self.dims), 1))

    def largest(self, drawn: Mapping[str, int], name: str, budget: int) -> int:
        """The largest value of ``name`` that fits ``budget`` with undrawn dimensions at 1."""
        shape = {**dict.fromkeys((dim.name for dim in self.dims), 1), **drawn}
        limit = next((dim.limit for dim in self.dims if dim.name == name), None)
        low, high = 1, min(budget, limit or budget)  # size is monotone: binary search
        while low < high:
            middle = (low + high + 1) // 2
            if self.size({**shape, name: middle}) <= budget:
                low = middle
            else:
                high = middle - 1
        return low

    def strategy(self, budget: int) -> SearchStrategy[Drawn]:
        """A Hypothesis strategy of (params, seed) within ``budget`` elements."""
        from hypothesis import strategies as st

        @st.composite
        def examples(draw: st.DrawFn) -> Drawn:
            values: dict[str, Any] = {}
            for dim in self.dims:
                bound = self.largest(values, dim.name, budget)
                values[dim.name] = draw(
                    st.one_of(st.sampled_from(edges(dim.tiles, bound)), st.integers(1, bound)),
                    label=dim.name,
                )
            for name, options in self.choices.items():
                values[name] = draw(st.sampled_from(options), label=name)
            values = self.fix(values)
            seed = draw(
                st.one_of(st.sampled_from((0, U64_MAX)), st.integers(0, U64_MAX)), label="seed"
            )
            return values, seed

        return examples()

    def shape_text(self, params: Mapping[str, Any]) -> str:
        """``m=1 n=33 k=5`` (the drawn dimensions and choices)."""
        names = [dim.name for dim in self.dims] + list(self.choices)
        return " ".join(f"{name}={_text(params[name])}" for name in names)


def _text(value: Any) -> str:
    # Floats are f32 values (eps): print the shortest f32 repr, 1e-05 not 9.99999974e-06.
    return str(np.float32(value)) if isinstance(value, float) else str(value)


@cache
def edges(tiles: tuple[int, ...], bound: int) -> tuple[int, ...]:
    """The edge values of a dimension up to ``bound``, ascending (1 first)."""
    values = {1, *_PRIMES}
    power = 1
    while power <= bound:
        values |= {power - 1, power, power + 1}
        power *= 2
    for tile in tiles:
        for multiple in (tile, 2 * tile, 3 * tile):
            values |= {multiple - 1, multiple, multiple + 1}
    return tuple(sorted(value for value in values if 1 <= value <= bound))
