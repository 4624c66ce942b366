"""``silu-mul``: out[t, j] = silu(gate[t, j]) · up[t, j], each input row laid out [gate | up]."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from .._numbers import U64_MAX
from ..inputs import random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import check_silu_mul

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["SiluMul", "SiluMulParams", "silu_mul"]


class SiluMulParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Rows.")
    intermediate: int = Field(
        256, ge=0, le=U64_MAX, description="Output columns; input rows are twice as wide."
    )


def silu_mul(xp: Any, gate_up: Any, tokens: int, intermediate: int) -> Any:
    """silu(gate) · up for ``gate_up`` of shape [tokens, 2·intermediate], in its own dtype."""
    rows = xp.reshape(gate_up, (tokens, 2 * intermediate))
    gate, up = rows[:, :intermediate], rows[:, intermediate:]
    return gate / (1.0 + xp.exp(-gate)) * up


class SiluMul(Op[SiluMulParams]):
    name = "silu-mul"
    report_name = "fused_silu_mul"
    execution_path = "silu_mul(gate_up[tokens, 2 * intermediate])"
    params_model: ClassVar[type[OpParams]] = SiluMulParams

    def validate(self, params: SiluMulParams) -> int:
        return check_silu_mul(params.tokens, params.intermediate)

    def output_shape(self, params: SiluMulParams) -> tuple[int, int]:
        return (params.tokens, params.intermediate)

    def inputs(self, params: SiluMulParams, seed: int) -> HostInputs:
        count = 2 * params.tokens * params.intermediate
        return {"gate_up": random_vec(count, -3.0, 3.0, seed)}

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: SiluMulParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["gate_up"].dtype
        wide = xp.astype(arrays["gate_up"], accumulate)
        return xp.astype(silu_mul(xp, wide, params.tokens, params.intermediate), storage)

    def raw_launch(self, params: SiluMulParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_silu_mul

        p = params
        launch = plan_silu_mul(p.tokens, p.intermediate, limit=limit)
        return RawLaunch.kernel(launch, Input("gate_up"), Filled(p.tokens * p.intermediate))

    def fuzz_space(self) -> OpSpace:
        """Tokens, and the intermediate width over the tails of an elementwise workgroup."""
        from ..launch import ELEMENTWISE_THREADS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (Dim("tokens"), Dim("intermediate", (ELEMENTWISE_THREADS,))),
            lambda p: 3 * p["tokens"] * p["intermediate"],
        )
