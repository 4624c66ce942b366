"""``rope``: rotary position embedding over x[tokens, heads, head_dim], in either pair layout.

Token ``t`` is at position ``p = offset + t``; pair ``i`` in [0, head_dim/2) turns by
``theta = p * base^(-2i/head_dim)``. The ``half`` layout pairs ``(x[i], x[i + head_dim/2])``
(GPT-NeoX, Llama in Hugging Face); ``interleaved`` pairs ``(x[2i], x[2i+1])`` (GPT-J, the
original paper). Each pair ``(a, b)`` becomes ``(a cos - b sin, a sin + b cos)`` in place.
The reference computes the angles in float64; a float32 angle loses about ``p * 2^-24`` of
it, which is why very long positions are a numerics question for a kernel, not a tolerance.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .._numbers import U64_MAX
from ..inputs import random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import check_buffer, check_positive_f32, checked_mul, require
from ._xp import arange_like

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["U32_MAX", "Rope", "RopeParams"]

U32_MAX = 2**32 - 1


class RopeParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Positions (rows).")
    heads: int = Field(2, ge=0, le=U64_MAX, description="Heads rotated alike.")
    head_dim: int = Field(64, ge=0, le=U64_MAX, description="Even; head_dim/2 pairs per head.")
    layout: Literal["half", "interleaved"] = Field(
        "half", description="Pairs (i, i + head_dim/2) or (2i, 2i + 1)."
    )
    offset: int = Field(0, ge=0, le=U64_MAX, description="Position of token 0 (a u32).")
    base: float = Field(10000.0, description="Frequency base; a finite f32 > 1.")


class Rope(Op[RopeParams]):
    name = "rope"
    report_name = "rope"
    execution_path = "rope(x[tokens, heads, head_dim], layout, offset, base)"
    params_model: ClassVar[type[OpParams]] = RopeParams
    wide_reference_accumulation = True

    def validate(self, params: RopeParams) -> int:
        tokens, heads, head_dim = params.tokens, params.heads, params.head_dim
        require(
            tokens != 0 and heads != 0 and head_dim != 0,
            "RoPE tokens, heads and head_dim must be nonzero",
        )
        require(head_dim % 2 == 0, f"RoPE head_dim must be even, not {head_dim}")
        require(
            params.offset <= U32_MAX and params.offset + tokens - 1 <= U32_MAX,
            f"RoPE positions offset .. offset + tokens - 1 must fit in u32 (offset {params.offset}, "
            f"tokens {tokens})",
        )
        check_positive_f32("RoPE", "base", params.base, above=1.0)
        width = checked_mul(heads, head_dim, "RoPE heads * head_dim overflows usize")
        elements = checked_mul(tokens, width, "RoPE tokens * heads * head_dim overflows usize")
        check_buffer("RoPE", elements)
        return elements

    def output_shape(self, params: RopeParams) -> tuple[int, int]:
        return (params.tokens, params.heads * params.head_dim)

    def inputs(self, params: RopeParams, seed: int) -> HostInputs:
        count = params.tokens * params.heads * params.head_dim
        return {"x": random_vec(count, -1.0, 1.0, seed)}

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: RopeParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["x"].dtype
        tokens, heads, head_dim = params.tokens, params.heads, params.head_dim
        half = head_dim // 2
        x = xp.reshape(xp.astype(arrays["x"], accumulate), (tokens, heads, head_dim))
        # theta[t, i] = (offset + t) * base^(-2i / head_dim), in the accumulation dtype.
        position = arange_like(xp, tokens, accumulate, x) + float(params.offset)
        pair = arange_like(xp, half, accumulate, x)
        base = float(np.float32(params.base))
        inverse_frequency = xp.exp(pair * (-2.0 * math.log(base) / head_dim))
        theta = xp.reshape(position, (tokens, 1, 1)) * xp.reshape(inverse_frequency, (1, 1, half))
        cos, sin = xp.cos(theta), xp.sin(theta)
        if params.layout == "half":
            a, b = x[:, :, :half], x[:, :, half:]
            rotated = xp.concat([a * cos - b * sin, a * sin + b * cos], axis=2)
        else:
            pairs = xp.reshape(x, (tokens, heads, half, 2))
            a, b = pairs[:, :, :, 0], pairs[:, :, :, 1]
            rotated = xp.stack([a * cos - b * sin, a * sin + b * cos], axis=3)
        return xp.astype(xp.reshape(rotated, (tokens, heads * head_dim)), storage)

    def raw_launch(self, params: RopeParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, Table, plan_rope, rope_turn_words

        p = params
        interleaved = p.layout == "interleaved"
        launch = plan_rope(p.tokens, p.heads, p.head_dim, interleaved, p.offset, limit=limit)
        turns = Table(rope_turn_words(p.base, p.head_dim))
        return RawLaunch.kernel(launch, Input("x"), turns, Filled(p.tokens * p.heads * p.head_dim))

    def fuzz_space(self) -> OpSpace:
        """Positions, heads and even head widths in both layouts, offsets and bases.

        Positions stay below 8192 (``tokens`` up to 4096 after an offset up to 4095): a
        float32 angle ``p * f`` is off by up to ``p * 2^-24`` radians, which at p = 60000
        alone gives NMSE 3.7e-7 on MLX, over the f32 tolerance, for any float32 kernel. Those
        positions are a question to ask with ``run --offset``, not a kernel tail.
        """
        from ..launch import ELEMENTWISE_THREADS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (Dim("tokens", limit=4096), Dim("heads"), Dim("head_dim", (ELEMENTWISE_THREADS,))),
            # Costed at the even width the draw is rounded up to, so the budget holds.
            lambda p: 2 * p["tokens"] * p["heads"] * (p["head_dim"] + p["head_dim"] % 2),
            {
                "layout": ("half", "interleaved"),
                "offset": (0, 1, 255, 4095),
                "base": (10000.0, 500000.0, 2.0),
            },
            fix=_even_head_dim,
        )


def _even_head_dim(values: dict[str, Any]) -> dict[str, Any]:
    # Pairs need an even width: round an odd one up (1 becomes 2, the smallest valid).
    values["head_dim"] += values["head_dim"] % 2
    return values
