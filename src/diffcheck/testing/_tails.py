"""Tail and odd shapes for the conformance kit, taken from each op's fuzz space.

Kernels go wrong at the edges of their tiles: an axis of 1, one past a multiple of 32
(a warp, a subgroup), just under and past a power of two. A default shape is usually a
multiple of every tile, so a kernel that drops the last partial block passes it. Each op
with a fuzz space gets one case per :data:`TAIL_LENGTHS` value: every dimension at that
length, in the space's own order (its first dimension is the one it ranges widest: a
reduction axis such as softmax's row or attention's KV length), within
:data:`TAIL_BUDGET` elements (later dimensions shrink first), then made valid by the
space's own ``fix``.
"""

from __future__ import annotations

from typing import Final

from ..ops.samples import OpCase

__all__ = ["TAIL_BUDGET", "TAIL_LENGTHS", "fuzz_ops", "tail_cases"]

#: Axis lengths at the fuzz space's edges: 1, just under and past 32, and 127 (a prime just
#: under a power of two, past three 32-wide blocks).
TAIL_LENGTHS: Final = (1, 33, 127)
#: Input plus output elements of one tail case: small enough for a CPU-only kit run.
TAIL_BUDGET: Final = 2**15


def tail_cases(op_name: str) -> tuple[OpCase, ...]:
    """One case per tail length for ``op_name``; none for an op without a fuzz space.

    The space's first dimension gets the length first, so it keeps it when the budget binds.
    """
    from ..ops import get_op

    space = get_op(op_name).fuzz_space()
    if space is None:
        return ()
    cases: list[OpCase] = []
    for length in TAIL_LENGTHS:
        values: dict[str, int] = {}
        for dim in space.dims:
            values[dim.name] = min(length, space.largest(values, dim.name, TAIL_BUDGET))
        defaults = {name: options[0] for name, options in space.choices.items()}
        fixed = space.fix({**values, **defaults})
        params = tuple((dim.name, int(fixed[dim.name])) for dim in space.dims)
        case = OpCase(op_name, params)
        if case not in cases:
            cases.append(case)
    return tuple(cases)


def fuzz_ops() -> list[str]:
    """diffcheck's own ops that have a fuzz space, in listing order (the kit's short fuzz)."""
    from ..ops import OPS
    from ..ops._registry import CORE_PACKAGE

    return [
        name
        for name, op in OPS.items()
        if OPS.source(name).package == CORE_PACKAGE and op.fuzz_space() is not None
    ]
