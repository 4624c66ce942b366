"""The operation registry: each op defined once, found by its CLI token or an alias."""

from __future__ import annotations

from typing import Any

from ..errors import UnknownOpError
from ._base import HostInputs, Op, OpParams
from .add_rms_norm import AddRmsNorm, AddRmsNormParams
from .attention import Attention, AttentionParams
from .gemm import Gemm, GemmParams
from .layer_norm import LayerNorm, LayerNormParams
from .lifecycle import ContextLifecycle, ContextLifecycleParams
from .rms_norm import RmsNorm, RmsNormParams
from .rope import Rope, RopeParams
from .silu_mul import SiluMul, SiluMulParams
from .softmax import Softmax, SoftmaxParams

__all__ = [
    "OPS",
    "AddRmsNorm",
    "AddRmsNormParams",
    "Attention",
    "AttentionParams",
    "ContextLifecycle",
    "ContextLifecycleParams",
    "Gemm",
    "GemmParams",
    "HostInputs",
    "LayerNorm",
    "LayerNormParams",
    "Op",
    "OpParams",
    "RmsNorm",
    "RmsNormParams",
    "Rope",
    "RopeParams",
    "SiluMul",
    "SiluMulParams",
    "Softmax",
    "SoftmaxParams",
    "get_op",
]

#: Every op by its canonical name, in the order they are listed to users.
_ALL: tuple[Op[Any], ...] = (
    RmsNorm(),
    Gemm(),
    SiluMul(),
    ContextLifecycle(),
    Softmax(),
    LayerNorm(),
    Rope(),
    Attention(),
    AddRmsNorm(),
)
OPS: dict[str, Op[Any]] = {op.name: op for op in _ALL}
_ALIASES = {alias: op for op in OPS.values() for alias in op.aliases}


def get_op(name: str) -> Op[Any]:
    """The op called ``name`` (canonical or alias); UnknownOpError otherwise."""
    op = OPS.get(name) or _ALIASES.get(name)
    if op is None:
        raise UnknownOpError(name)
    return op
