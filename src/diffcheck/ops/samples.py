"""The contract's sample shapes: defaults plus the tails that catch a kernel's edge handling.

One list, used by the conformance kit, adapter tests and measurement scripts alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CONTRACT_CASES", "OpCase"]


@dataclass(frozen=True)
class OpCase:
    """One op at one shape (the params not given take the op's defaults)."""

    op: str
    params: tuple[tuple[str, int], ...] = ()

    @property
    def id(self) -> str:
        shape = "-".join(f"{key}{value}" for key, value in self.params)
        return f"{self.op}-{shape}" if shape else f"{self.op}-default"

    @property
    def values(self) -> dict[str, int]:
        """The params as keyword arguments for ``Op.params``."""
        return dict(self.params)


#: gemm 64x32x32 (one full tile), 64x33x35 (tails in n and k), 1x3x5 (GEMV); silu-mul 4x256
#: and 3x257 (a partial launch); rms-norm 4x128 and 3x33; the lifecycle at 3/33/35 and tokens 1.
CONTRACT_CASES: Final[tuple[OpCase, ...]] = (
    OpCase("gemm"),
    OpCase("gemm", (("m", 64), ("n", 33), ("k", 35))),
    OpCase("gemm", (("m", 1), ("n", 3), ("k", 5))),
    OpCase("silu-mul"),
    OpCase("silu-mul", (("tokens", 3), ("intermediate", 257))),
    OpCase("rms-norm"),
    OpCase("rms-norm", (("tokens", 3), ("dim", 33))),
    OpCase("context-lifecycle"),
    OpCase("context-lifecycle", (("tokens", 1),)),
)
