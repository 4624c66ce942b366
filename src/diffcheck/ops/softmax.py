"""``softmax``: out[i, j] = exp(x[i, j] / T - m_i) / sum over visible j, with an optional causal mask.

With ``causal``, row ``i`` is query position ``dim - tokens + i`` and sees the columns
``j <= dim - tokens + i``; masked entries are exactly 0.0. Inputs are uniform in [-4, 4), so a
temperature below 1 makes the rows peaked and the maximum subtraction matter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import Field

from .._numbers import U64_MAX
from ..inputs import random_vec
from ..precision import PrecisionName
from ._base import HostInputs, Op, OpParams
from ._limits import check_positive_f32, check_rows, require
from ._xp import causal_visible, masked_softmax

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["Softmax", "SoftmaxParams"]


class SoftmaxParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Rows (query positions).")
    dim: int = Field(256, ge=0, le=U64_MAX, description="Row length reduced over.")
    causal: bool = Field(False, description="Mask columns after each row's query position.")
    temperature: float = Field(1.0, description="Divides the logits; a finite f32 > 0.")


class Softmax(Op[SoftmaxParams]):
    name = "softmax"
    report_name = "softmax"
    execution_path = "softmax(x[tokens, dim] / temperature, causal) over the last axis"
    params_model: ClassVar[type[OpParams]] = SoftmaxParams
    wide_reference_accumulation = True
    # Rounding the logits to f16/bf16 storage moves x by up to |x|·2^-11 (2^-8), and exp turns
    # that into a relative error of the output; inputs reach |x| = 4 and the division by a
    # temperature below 1 scales it further. Measured with MLX on the CPU at the defaults:
    # NMSE 3.2e-7 (f16) and 2.3e-5 (bf16), at temperature 0.5 with the causal mask 9.4e-7 and
    # 7.8e-5, against buckets of 1e-6 and 1e-4. Four times the buckets keeps a 4x margin at
    # temperature 0.5 while a wrong element of ordinary size still fails; a lower temperature
    # at half precision needs an explicit --max-nmse.
    tolerances: ClassVar[Mapping[PrecisionName, float]] = {"f16": 4e-6, "bf16": 4e-4}

    def validate(self, params: SoftmaxParams) -> int:
        elements = check_rows("Softmax", params.tokens, params.dim)
        check_positive_f32("Softmax", "temperature", params.temperature)
        require(
            not params.causal or params.tokens <= params.dim,
            f"Softmax causal mask needs tokens <= dim (got tokens {params.tokens}, "
            f"dim {params.dim}): row i sees columns up to dim - tokens + i",
        )
        return elements

    def output_shape(self, params: SoftmaxParams) -> tuple[int, int]:
        return (params.tokens, params.dim)

    def inputs(self, params: SoftmaxParams, seed: int) -> HostInputs:
        return {"x": random_vec(params.tokens * params.dim, -4.0, 4.0, seed)}

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: SoftmaxParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["x"].dtype
        x = xp.reshape(xp.astype(arrays["x"], accumulate), (params.tokens, params.dim))
        # The kernels divide by the f32 temperature; so does every namespace here.
        logits = x / float(np.float32(params.temperature))
        visible = causal_visible(xp, params.tokens, params.dim, x) if params.causal else None
        return xp.astype(masked_softmax(xp, logits, visible), storage)

    def raw_launch(self, params: SoftmaxParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_softmax

        p = params
        launch = plan_softmax(p.tokens, p.dim, p.causal, p.temperature, limit=limit)
        return RawLaunch.kernel(launch, Input("x"), Filled(p.tokens * p.dim))

    def fuzz_space(self) -> OpSpace:
        """Rows and row length (tails of a 256-thread row block), mask and temperature."""
        from ..launch import RMS_NORM_THREADS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (Dim("dim", (RMS_NORM_THREADS,)), Dim("tokens")),
            lambda p: 2 * p["tokens"] * p["dim"],
            # Temperatures stay within [0.5, 3]: below that, half-precision storage of the
            # logits alone exceeds the default f16/bf16 tolerance (see ``tolerances``).
            {"causal": (False, True), "temperature": (1.0, 0.5, 2.0, 0.7, 3.0)},
            fix=_causal_fits,
        )


def _causal_fits(values: dict[str, Any]) -> dict[str, Any]:
    # A causal mask needs tokens <= dim: lower tokens (never raise a dimension).
    if values.get("causal"):
        values["tokens"] = min(values["tokens"], values["dim"])
    return values
