"""``rms-norm``: out[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * w."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar, Final

import numpy as np
from pydantic import Field

from .._numbers import I32_MAX, I64_MAX, U64_MAX
from ..inputs import offset_seed, random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import ceil_to, checked_mul, require

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["RmsNorm", "RmsNormParams"]


class RmsNormParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Rows normalized independently.")
    dim: int = Field(128, ge=0, le=U64_MAX, description="Row length.")
    eps: float = Field(1e-6, description="Added to the mean square; an f32 value.")


class RmsNorm(Op[RmsNormParams]):
    name = "rms-norm"
    report_name = "rms_norm"
    execution_path = "rms_norm(x[tokens, dim], w[dim], eps)"
    params_model: ClassVar[type[OpParams]] = RmsNormParams

    def validate(self, params: RmsNormParams) -> int:
        tokens, dim = params.tokens, params.dim
        require(tokens != 0 and dim != 0, "RMSNorm tokens and dim must be nonzero")
        require(
            math.isfinite(params.eps) and params.eps > 0.0,
            "RMSNorm epsilon must be finite and positive",
        )
        elements = checked_mul(tokens, dim, "RMSNorm tokens * dim overflows usize")
        size = checked_mul(elements, 4, "RMSNorm f32 buffer byte size overflows usize")
        require(size <= I64_MAX, "RMSNorm f32 buffer exceeds the host allocation address range")
        # The row loop steps by a block width (>= 32, up to 1024) before its bounds check.
        step = max(32, ceil_to(min(dim, 1024), 32))
        require(
            elements <= I32_MAX and (dim - 1) + step <= I32_MAX,
            "RMSNorm shape exceeds the kernels' signed 32-bit indexing range",
        )
        return elements

    def output_shape(self, params: RmsNormParams) -> tuple[int, int]:
        return (params.tokens, params.dim)

    def inputs(self, params: RmsNormParams, seed: int) -> HostInputs:
        return {
            "x": random_vec(params.tokens * params.dim, -2.0, 2.0, seed),
            "w": random_vec(params.dim, 0.5, 1.5, offset_seed(seed, 1)),
        }

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: RmsNormParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["x"].dtype
        x = xp.reshape(xp.astype(arrays["x"], accumulate), (params.tokens, params.dim))
        w = xp.astype(arrays["w"], accumulate)
        mean_square = xp.sum(x * x, axis=1, keepdims=True) / params.dim
        inverse = 1.0 / xp.sqrt(mean_square + params.eps)
        return xp.astype(x * inverse * w, storage)

    def raw_launch(self, params: RmsNormParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_rms_norm

        p = params
        launch = plan_rms_norm(p.tokens, p.dim, p.eps, limit=limit)
        return RawLaunch.kernel(launch, Input("x"), Input("w"), Filled(p.tokens * p.dim))

    def fuzz_space(self) -> OpSpace:
        """Tokens, the row length over the tails of a row block, and the epsilon."""
        from ..launch import RMS_NORM_THREADS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (Dim("tokens"), Dim("dim", (RMS_NORM_THREADS,))),
            lambda p: 2 * p["tokens"] * p["dim"] + p["dim"],
            {"eps": _EPS_CHOICES},
        )


#: Epsilons drawn by the fuzzer, each exactly an f32 (the CLI parses --eps as f32); the
#: default first.
_EPS_CHOICES: Final = tuple(
    float(np.float32(value)) for value in (1e-6, 1e-5, 1e-12, 1.1754944e-38, 0.5, 1.0)
)
