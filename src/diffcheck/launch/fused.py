"""Launch plans of the inference kernels: softmax, layer-norm, RoPE, attention, add-rms-norm.

Each plan takes the op's parameters as plain values (validated by the op) and returns the
:class:`~diffcheck.launch.Launch` both raw-GPU backends record. Row kernels run one
workgroup per row; RoPE one thread per rotated pair; attention one workgroup per
(head, query). Flags are 0/1 words and float parameters are f32 bits, in the order of each
kernel's ``Params`` struct.

RoPE angles at large positions: ``theta = p · base^(-2i/d)`` reaches 2³² radians, where an
f32 angle has no correct digit left. The kernel therefore never forms theta. The host gives
it, per pair index, the frequency as a fraction of a turn in 64-bit fixed point
(:func:`rope_turns`, exact from the float64 frequency the reference uses); the kernel
multiplies the integer position into it with wrapping u32 arithmetic, which is the angle
modulo one turn to 2⁻³² of a turn, and only then converts a value in [-π, π) to f32.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Final

import numpy as np
import numpy.typing as npt

from .kernels import Kernel
from .plans import (
    ADD_RMS_NORM_KERNEL,
    ATTENTION_KERNEL,
    ATTENTION_THREADS,
    LAYER_NORM_KERNEL,
    MAX_WORKGROUPS_PER_DIMENSION,
    ROPE_KERNEL,
    ROPE_THREADS,
    ROW_THREADS,
    SOFTMAX_KERNEL,
    Launch,
    _ceil_div,
    _f32_word,
    _words,
    split_grid,
)

__all__ = [
    "plan_add_rms_norm",
    "plan_attention",
    "plan_layer_norm",
    "plan_rope",
    "plan_softmax",
    "rope_turn_words",
    "rope_turns",
]

# 2π to 40 significant digits: its error is far below 2⁻⁹⁶ of the quotient's turns.
_TWO_PI: Final = Fraction("6.283185307179586476925286766559005768394")
_TURN: Final = 2**64


def _row_launch(kernel: Kernel, tokens: int, limit: int, *words: int) -> Launch:
    return Launch(kernel, tokens, (ROW_THREADS, 1), split_grid(tokens, limit), _words(*words))


def plan_softmax(
    tokens: int,
    dim: int,
    causal: bool,
    temperature: float,
    *,
    limit: int = MAX_WORKGROUPS_PER_DIMENSION,
) -> Launch:
    """Softmax over rows: parameters ``(tokens, dim, causal, temperature as f32 bits)``."""
    return _row_launch(
        SOFTMAX_KERNEL, tokens, limit, tokens, dim, int(causal), _f32_word(temperature)
    )


def plan_layer_norm(
    tokens: int, dim: int, eps: float, *, limit: int = MAX_WORKGROUPS_PER_DIMENSION
) -> Launch:
    """LayerNorm with weight and bias: parameters ``(tokens, dim, eps as f32 bits)``."""
    return _row_launch(LAYER_NORM_KERNEL, tokens, limit, tokens, dim, _f32_word(eps))


def plan_add_rms_norm(
    tokens: int, dim: int, eps: float, *, limit: int = MAX_WORKGROUPS_PER_DIMENSION
) -> Launch:
    """Residual add then RMSNorm, both written: parameters ``(tokens, dim, eps as f32 bits)``."""
    return _row_launch(ADD_RMS_NORM_KERNEL, tokens, limit, tokens, dim, _f32_word(eps))


def plan_rope(
    tokens: int,
    heads: int,
    head_dim: int,
    interleaved: bool,
    offset: int,
    *,
    limit: int = MAX_WORKGROUPS_PER_DIMENSION,
) -> Launch:
    """RoPE, one thread per pair: ``(tokens, heads, head_dim, interleaved, offset, pairs, groups)``."""
    pairs = tokens * heads * (head_dim // 2)
    groups = _ceil_div(pairs, ROPE_THREADS)
    return Launch(
        ROPE_KERNEL,
        groups,
        (ROPE_THREADS, 1),
        split_grid(groups, limit),
        _words(tokens, heads, head_dim, int(interleaved), offset, pairs, groups),
    )


def plan_attention(
    tokens: int,
    kv_len: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    causal: bool,
    *,
    limit: int = MAX_WORKGROUPS_PER_DIMENSION,
) -> Launch:
    """Attention, one workgroup per (head, query), numbered ``head * tokens + query``.

    Parameters ``(tokens, kv_len, heads, kv_heads, head_dim, causal, scale as f32 bits,
    groups)``; scale is ``1 / sqrt(head_dim)`` rounded once to f32.
    """
    groups = heads * tokens
    scale = 1.0 / math.sqrt(head_dim)
    return Launch(
        ATTENTION_KERNEL,
        groups,
        (ATTENTION_THREADS, 1),
        split_grid(groups, limit),
        _words(tokens, kv_len, heads, kv_heads, head_dim, int(causal), _f32_word(scale), groups),
    )


@functools.cache
def _turns(base: float, head_dim: int) -> tuple[int, ...]:
    words: list[int] = []
    for i in range(head_dim // 2):
        # The reference's float64 frequency (its formula), then its exact value in turns.
        frequency = math.exp(i * (-2.0 * math.log(base) / head_dim))
        turns = Fraction(frequency) / _TWO_PI
        fixed = round((turns - math.floor(turns)) * _TURN) % _TURN
        words += [fixed >> 32, fixed & 0xFFFFFFFF]
    return tuple(words)


def rope_turn_words(base: float, head_dim: int) -> tuple[int, ...]:
    """:func:`rope_turns` as plain words (the table a RoPE launch uploads)."""
    return _turns(float(np.float32(base)), head_dim)


def rope_turns(base: float, head_dim: int) -> npt.NDArray[np.uint32]:
    """Per pair index i, ``base^(-2i/head_dim) / 2π`` modulo 1 in 64-bit fixed point.

    Two u32 words per pair (high, then low); the kernel's phase for position p is the top 32
    bits of ``p · word`` modulo 2⁶⁴, in units of 2⁻³² of a turn. ``base`` is taken as the
    f32 value the op stores, widened to float64 as the reference does.
    """
    return np.array(rope_turn_words(base, head_dim), dtype=np.uint32)
