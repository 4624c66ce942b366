"""Which ops the fuzzer can draw, and the space of one of them (each op owns its own)."""

from __future__ import annotations

from ..errors import ConfigError
from ..ops import OPS, get_op
from ..ops.space import OpSpace

__all__ = ["fuzzable_ops", "space_for"]


def fuzzable_ops() -> list[str]:
    """Every registered op with a fuzz space, in registry order."""
    return [name for name, op in OPS.items() if op.fuzz_space() is not None]


def space_for(op: str) -> OpSpace:
    """The space of ``op`` (a canonical name), from :meth:`Op.fuzz_space`.

    Raises
    ------
    ConfigError
        For an op without one.
    """
    space = get_op(op).fuzz_space()
    if space is None:
        raise ConfigError(
            f"op {op!r} has no fuzz strategy; fuzzable ops: {', '.join(fuzzable_ops())}"
        )
    return space
