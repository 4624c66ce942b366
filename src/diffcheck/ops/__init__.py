"""The operation registry: each op defined once, found by its CLI token or an alias."""

from __future__ import annotations

from typing import Any

from ..errors import UnknownOpError
from ._base import HostInputs, Op, OpParams
from .gemm import Gemm, GemmParams
from .lifecycle import ContextLifecycle, ContextLifecycleParams
from .rms_norm import RmsNorm, RmsNormParams
from .silu_mul import SiluMul, SiluMulParams

__all__ = [
    "OPS",
    "ContextLifecycle",
    "ContextLifecycleParams",
    "Gemm",
    "GemmParams",
    "HostInputs",
    "Op",
    "OpParams",
    "RmsNorm",
    "RmsNormParams",
    "SiluMul",
    "SiluMulParams",
    "get_op",
]

#: Every op by its canonical name, in the order they are listed to users.
_ALL: tuple[Op[Any], ...] = (RmsNorm(), Gemm(), SiluMul(), ContextLifecycle())
OPS: dict[str, Op[Any]] = {op.name: op for op in _ALL}
_ALIASES = {alias: op for op in OPS.values() for alias in op.aliases}


def get_op(name: str) -> Op[Any]:
    """The op called ``name`` (canonical or alias); UnknownOpError otherwise."""
    op = OPS.get(name) or _ALIASES.get(name)
    if op is None:
        raise UnknownOpError(name)
    return op
