"""``attention``: scaled dot-product attention with grouped-query heads and an optional causal mask.

Query head ``h`` reads KV head ``h // (heads // kv_heads)``. With ``causal``, query ``t`` is
at position ``kv_len - tokens + t`` and sees keys ``j <= kv_len - tokens + t`` (a query block
aligned to the end of the cache, as in decode and chunked prefill). The output is
**head-major**, [heads, tokens·head_dim], so each head is one contiguous segment
(``head0``, ``head1``, ...) and a wrong head is named in the verdict.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from .._numbers import U64_MAX
from ..differ import Segment
from ..inputs import offset_seed, random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import check_buffer, checked_mul, require
from ._xp import causal_visible, masked_softmax

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["Attention", "AttentionParams"]


class AttentionParams(OpParams):
    tokens: int = Field(4, ge=0, le=U64_MAX, description="Query length.")
    kv_len: int = Field(8, ge=0, le=U64_MAX, description="Key/value length.")
    heads: int = Field(4, ge=0, le=U64_MAX, description="Query heads.")
    kv_heads: int = Field(2, ge=0, le=U64_MAX, description="Key/value heads; divides heads.")
    head_dim: int = Field(32, ge=0, le=U64_MAX, description="Width of one head.")
    causal: bool = Field(True, description="Mask keys after each query's position.")


class Attention(Op[AttentionParams]):
    name = "attention"
    report_name = "attention"
    execution_path = (
        "attention(q[tokens, heads, head_dim], k[kv_len, kv_heads, head_dim], "
        "v[kv_len, kv_heads, head_dim], causal) -> out[heads, tokens * head_dim]"
    )
    params_model: ClassVar[type[OpParams]] = AttentionParams
    wide_reference_accumulation = True

    def validate(self, params: AttentionParams) -> int:
        tokens, kv_len, heads = params.tokens, params.kv_len, params.heads
        kv_heads, head_dim = params.kv_heads, params.head_dim
        require(
            0 not in (tokens, kv_len, heads, kv_heads, head_dim),
            "Attention tokens, kv_len, heads, kv_heads and head_dim must be nonzero",
        )
        require(
            heads % kv_heads == 0,
            f"Attention kv_heads must divide heads (got heads {heads}, kv_heads {kv_heads})",
        )
        require(
            not params.causal or tokens <= kv_len,
            f"Attention causal mask needs tokens <= kv_len (got tokens {tokens}, kv_len {kv_len})",
        )
        width = checked_mul(heads, head_dim, "Attention heads * head_dim overflows usize")
        output = checked_mul(tokens, width, "Attention q/output element count overflows usize")
        check_buffer("Attention q/output", output)
        kv_width = checked_mul(kv_heads, head_dim, "Attention kv_heads * head_dim overflows usize")
        kv = checked_mul(kv_len, kv_width, "Attention k/v element count overflows usize")
        check_buffer("Attention k/v", kv)
        scores = checked_mul(
            checked_mul(heads, tokens, "Attention score count overflows usize"),
            kv_len,
            "Attention score count overflows usize",
        )
        check_buffer("Attention scores", scores)
        return output

    def output_shape(self, params: AttentionParams) -> tuple[int, int]:
        return (params.heads, params.tokens * params.head_dim)

    def segment_count(self, params: AttentionParams) -> int:
        return int(params.heads)  # 2e9 heads are counted, never built

    def segments(self, params: AttentionParams) -> list[Segment]:
        size = params.tokens * params.head_dim
        return [Segment(f"head{h}", h * size, (h + 1) * size) for h in range(params.heads)]

    def inputs(self, params: AttentionParams, seed: int) -> HostInputs:
        q = params.tokens * params.heads * params.head_dim
        kv = params.kv_len * params.kv_heads * params.head_dim
        return {
            "q": random_vec(q, -1.0, 1.0, seed),
            "k": random_vec(kv, -1.0, 1.0, offset_seed(seed, 1)),
            "v": random_vec(kv, -1.0, 1.0, offset_seed(seed, 2)),
        }

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: AttentionParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["q"].dtype
        tokens, kv_len, heads = params.tokens, params.kv_len, params.heads
        kv_heads, head_dim = params.kv_heads, params.head_dim
        group = heads // kv_heads
        q = xp.reshape(xp.astype(arrays["q"], accumulate), (tokens, heads, head_dim))
        k = xp.reshape(xp.astype(arrays["k"], accumulate), (kv_len, kv_heads, head_dim))
        v = xp.reshape(xp.astype(arrays["v"], accumulate), (kv_len, kv_heads, head_dim))
        # Head h = g * group + r reads KV head g: [heads, tokens, d] -> [kv_heads, group*tokens, d]
        # puts every query row of KV head g in one batch, with no gather.
        q = xp.reshape(xp.permute_dims(q, (1, 0, 2)), (kv_heads, group * tokens, head_dim))
        k = xp.permute_dims(k, (1, 0, 2))  # [kv_heads, kv_len, d]
        v = xp.permute_dims(v, (1, 0, 2))
        scores = xp.matmul(q, xp.matrix_transpose(k)) * (1.0 / math.sqrt(head_dim))
        scores = xp.reshape(scores, (kv_heads, group, tokens, kv_len))
        visible = causal_visible(xp, tokens, kv_len, q) if params.causal else None
        weights = xp.reshape(
            masked_softmax(xp, scores, visible), (kv_heads, group * tokens, kv_len)
        )
        out = xp.matmul(weights, v)  # [kv_heads, group * tokens, d]
        return xp.astype(xp.reshape(out, (heads, tokens * head_dim)), storage)

    def raw_launch(self, params: AttentionParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_attention

        p = params
        launch = plan_attention(
            p.tokens, p.kv_len, p.heads, p.kv_heads, p.head_dim, p.causal, limit=limit
        )
        inputs = (Input("q"), Input("k"), Input("v"))
        return RawLaunch.kernel(launch, *inputs, Filled(p.heads * p.tokens * p.head_dim))

    def fuzz_space(self) -> OpSpace:
        """Query and KV lengths, grouped heads and head widths, causal or not."""
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (
                Dim("kv_len"),
                Dim("tokens"),
                Dim("head_dim", (32, 64)),
                Dim("heads"),
                Dim("kv_heads"),
            ),
            # q and output, k and v, and the [heads, tokens, kv_len] scores in between.
            lambda p: (
                2 * p["tokens"] * p["heads"] * p["head_dim"]
                + 2 * p["kv_len"] * p["kv_heads"] * p["head_dim"]
                + p["heads"] * p["tokens"] * p["kv_len"]
            ),
            {"causal": (True, False)},
            fix=_grouped_and_causal,
        )


def _grouped_and_causal(values: dict[str, Any]) -> dict[str, Any]:
    # kv_heads must divide heads: keep kv_heads <= heads and round heads down to a multiple.
    kv_heads = min(values["kv_heads"], values["heads"])
    values["kv_heads"] = kv_heads
    values["heads"] -= values["heads"] % kv_heads
    if values["causal"]:
        values["tokens"] = min(values["tokens"], values["kv_len"])
    return values
