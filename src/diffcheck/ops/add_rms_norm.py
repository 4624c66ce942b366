"""``add-rms-norm``: h = x + residual; out = h / sqrt(mean(h^2) + eps) * weight; both checked.

The fused residual add writes the updated residual stream ``h`` as well as the normalized
output, and a kernel can get either wrong on its own, so the output is [2, tokens·dim]:
row 0 is ``h`` (segment ``residual``), row 1 the normalized output (segment ``normed``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import Field

from .._numbers import U64_MAX
from ..differ import Segment
from ..inputs import offset_seed, random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import check_buffer, check_positive_f32, check_rows, checked_mul

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["AddRmsNorm", "AddRmsNormParams"]


class AddRmsNormParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Rows normalized independently.")
    dim: int = Field(128, ge=0, le=U64_MAX, description="Row length.")
    eps: float = Field(1e-6, description="Added to the mean square; a finite f32 > 0.")


class AddRmsNorm(Op[AddRmsNormParams]):
    name = "add-rms-norm"
    report_name = "add_rms_norm"
    execution_path = (
        "add_rms_norm(x[tokens, dim], residual[tokens, dim], weight[dim], eps) -> "
        "[residual + x, rms_norm(residual + x)]"
    )
    params_model: ClassVar[type[OpParams]] = AddRmsNormParams
    wide_reference_accumulation = True

    def validate(self, params: AddRmsNormParams) -> int:
        elements = check_rows("AddRMSNorm", params.tokens, params.dim)
        check_positive_f32("AddRMSNorm", "epsilon", params.eps)
        output = checked_mul(elements, 2, "AddRMSNorm output element count overflows usize")
        check_buffer("AddRMSNorm output", output)
        return output

    def output_shape(self, params: AddRmsNormParams) -> tuple[int, int]:
        return (2, params.tokens * params.dim)

    def segments(self, params: AddRmsNormParams) -> list[Segment]:
        size = params.tokens * params.dim
        return [Segment("residual", 0, size), Segment("normed", size, 2 * size)]

    def inputs(self, params: AddRmsNormParams, seed: int) -> HostInputs:
        count = params.tokens * params.dim
        return {
            "x": random_vec(count, -2.0, 2.0, seed),
            "residual": random_vec(count, -2.0, 2.0, offset_seed(seed, 1)),
            "weight": random_vec(params.dim, 0.5, 1.5, offset_seed(seed, 2)),
        }

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: AddRmsNormParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["x"].dtype
        shape = (params.tokens, params.dim)
        x = xp.reshape(xp.astype(arrays["x"], accumulate), shape)
        residual = xp.reshape(xp.astype(arrays["residual"], accumulate), shape)
        weight = xp.astype(arrays["weight"], accumulate)
        h = x + residual
        mean_square = xp.sum(h * h, axis=1, keepdims=True) / params.dim
        normed = h * (1.0 / xp.sqrt(mean_square + float(np.float32(params.eps)))) * weight
        flat = (params.tokens * params.dim,)
        return xp.astype(xp.stack([xp.reshape(h, flat), xp.reshape(normed, flat)], axis=0), storage)

    def raw_launch(self, params: AddRmsNormParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_add_rms_norm

        p = params
        launch = plan_add_rms_norm(p.tokens, p.dim, p.eps, limit=limit)
        inputs = (Input("x"), Input("residual"), Input("weight"))
        # Both outputs, the residual sum then the normed rows, in one buffer.
        return RawLaunch.kernel(launch, *inputs, Filled(2 * p.tokens * p.dim))

    def fuzz_space(self) -> OpSpace:
        """Rows and row length (tails of a 256-thread row block) and epsilons."""
        from ..launch import RMS_NORM_THREADS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (Dim("tokens"), Dim("dim", (RMS_NORM_THREADS,))),
            # x and residual in, both outputs out, plus the weight row.
            lambda p: 4 * p["tokens"] * p["dim"] + p["dim"],
            {"eps": tuple(float(np.float32(e)) for e in (1e-6, 1e-5, 1e-12, 0.5))},
        )
