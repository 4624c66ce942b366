"""``layer-norm``: out[t, :] = (x[t, :] - mean) / sqrt(var + eps) * weight + bias.

Mean and population variance are taken over each row (two passes: the mean first, then the
squared deviations, as a numerically careful kernel does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import Field

from .._numbers import U64_MAX
from ..inputs import offset_seed, random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import check_positive_f32, check_rows

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["LayerNorm", "LayerNormParams"]


class LayerNormParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Rows normalized independently.")
    dim: int = Field(128, ge=0, le=U64_MAX, description="Row length.")
    eps: float = Field(1e-5, description="Added to the variance; a finite f32 > 0.")


class LayerNorm(Op[LayerNormParams]):
    name = "layer-norm"
    report_name = "layer_norm"
    execution_path = "layer_norm(x[tokens, dim], weight[dim], bias[dim], eps)"
    params_model: ClassVar[type[OpParams]] = LayerNormParams
    wide_reference_accumulation = True

    def validate(self, params: LayerNormParams) -> int:
        elements = check_rows("LayerNorm", params.tokens, params.dim)
        check_positive_f32("LayerNorm", "epsilon", params.eps)
        return elements

    def output_shape(self, params: LayerNormParams) -> tuple[int, int]:
        return (params.tokens, params.dim)

    def inputs(self, params: LayerNormParams, seed: int) -> HostInputs:
        return {
            "x": random_vec(params.tokens * params.dim, -2.0, 2.0, seed),
            "weight": random_vec(params.dim, 0.5, 1.5, offset_seed(seed, 1)),
            "bias": random_vec(params.dim, -0.5, 0.5, offset_seed(seed, 2)),
        }

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: LayerNormParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["x"].dtype
        x = xp.reshape(xp.astype(arrays["x"], accumulate), (params.tokens, params.dim))
        weight = xp.astype(arrays["weight"], accumulate)
        bias = xp.astype(arrays["bias"], accumulate)
        mean = xp.sum(x, axis=1, keepdims=True) / params.dim
        centred = x - mean
        variance = xp.sum(centred * centred, axis=1, keepdims=True) / params.dim
        inverse = 1.0 / xp.sqrt(variance + float(np.float32(params.eps)))
        return xp.astype(centred * inverse * weight + bias, storage)

    def raw_launch(self, params: LayerNormParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_layer_norm

        p = params
        launch = plan_layer_norm(p.tokens, p.dim, p.eps, limit=limit)
        inputs = (Input("x"), Input("weight"), Input("bias"))
        return RawLaunch.kernel(launch, *inputs, Filled(p.tokens * p.dim))

    def fuzz_space(self) -> OpSpace:
        """Rows and row length (tails of a 256-thread row block) and epsilons."""
        from ..launch import RMS_NORM_THREADS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (Dim("tokens"), Dim("dim", (RMS_NORM_THREADS,))),
            lambda p: 2 * p["tokens"] * p["dim"] + 2 * p["dim"],
            {"eps": tuple(float(np.float32(e)) for e in (1e-5, 1e-6, 1e-12, 0.5))},
        )
