"""The operation registry: each op defined once, found by its CLI token or an alias.

Ops come from the ``diffcheck.ops`` entry-point group (:mod:`diffcheck.ops._registry`),
diffcheck's own included; :data:`OPS` discovers them on first use.
"""

from __future__ import annotations

from typing import Any

from ._base import HostInputs, Op, OpParams
from ._registry import ENTRY_POINT_GROUP, OpPluginError, OpRegistry, OpSource
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
    "ENTRY_POINT_GROUP",
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
    "OpPluginError",
    "OpRegistry",
    "OpSource",
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

#: Every op by its canonical name, in listing order (diffcheck's own, then plugins by name),
#: discovered from the ``diffcheck.ops`` entry points on first use.
OPS: OpRegistry = OpRegistry()


def get_op(name: str) -> Op[Any]:
    """The op called ``name`` (canonical or alias).

    Raises
    ------
    OpPluginError
        When the op's plugin failed to load, or two packages claim the name.
    UnknownOpError
        When no op answers to ``name``.
    """
    return OPS.get_op(name)
