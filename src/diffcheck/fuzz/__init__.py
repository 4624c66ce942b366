"""The shape fuzzer: draw many shapes of one op, run each check, shrink the first failure.

``driver``
    :func:`fuzz`: the options, the checks it builds and the report of the minimal failure.
``search``
    The Hypothesis side: the property, its state and a seeded search (Hypothesis is
    imported only when a fuzz runs).
``spaces``
    Which ops can be fuzzed and the space of one of them.

Each op owns its space (:meth:`Op.fuzz_space <diffcheck.ops.Op.fuzz_space>`, built from
:class:`~diffcheck.ops.space.OpSpace` and :class:`~diffcheck.ops.space.Dim`, re-exported
here), so the ops never import the fuzzer.
"""

from __future__ import annotations

from ..ops.space import MAX_ELEMENTS_LIMIT, Dim, Drawn, OpSpace, edges
from .driver import DEFAULT_EXAMPLES, DEFAULT_MAX_ELEMENTS, FuzzResult, FuzzStatus, fuzz
from .spaces import fuzzable_ops, space_for

__all__ = [
    "DEFAULT_EXAMPLES",
    "DEFAULT_MAX_ELEMENTS",
    "MAX_ELEMENTS_LIMIT",
    "Dim",
    "Drawn",
    "FuzzResult",
    "FuzzStatus",
    "OpSpace",
    "edges",
    "fuzz",
    "fuzzable_ops",
    "space_for",
]
