"""diffcheck.gpu_plan for the inference kernels: plans, the RoPE turn table, kernel choice (no GPU)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck import gpu_plan
from diffcheck.gpu_plan import kernel_named, rope_turns
from diffcheck.ops import get_op

U32 = 2**32


def _f32(word: int) -> float:
    value: float = struct.unpack("<f", struct.pack("<I", word))[0]
    return value


def _mul_high(a: int, b: int) -> int:
    """rope.wgsl's mul_high, line for line, in u32 arithmetic."""
    a0, a1, b0, b1 = a & 0xFFFF, a >> 16, b & 0xFFFF, b >> 16
    low = a0 * b0
    mid1 = (a1 * b0 + (low >> 16)) % U32
    mid2 = (a0 * b1 + (mid1 & 0xFFFF)) % U32
    return (a1 * b1 + (mid1 >> 16) + (mid2 >> 16)) % U32


@settings(max_examples=200)
@given(a=st.integers(0, U32 - 1), b=st.integers(0, U32 - 1))
def test_mul_high_is_the_top_word_of_the_product(a: int, b: int) -> None:
    assert _mul_high(a, b) == (a * b) >> 32


@pytest.mark.parametrize("position", [0, 1, 4095, 1_000_003, U32 - 1])
@pytest.mark.parametrize(("base", "head_dim"), [(10000.0, 64), (500000.0, 34)])
def test_the_turn_table_gives_the_angle_modulo_one_turn(
    position: int, base: float, head_dim: int
) -> None:
    words = rope_turns(base, head_dim)
    assert words.dtype == np.uint32
    assert words.size == head_dim
    for i in range(head_dim // 2):
        high, low = int(words[2 * i]), int(words[2 * i + 1])
        # What the kernel computes: the top word of p · turns modulo 2^64.
        phase = (position * high + _mul_high(position, low)) % U32
        angle = (phase - U32 if phase >= U32 // 2 else phase) * (2 * math.pi / U32)
        theta = position * math.exp(i * (-2.0 * math.log(base) / head_dim))
        # float64 theta is itself only good to ~1e-6 rad at p near 2^32.
        assert math.cos(angle) == pytest.approx(math.cos(theta), abs=2e-6)
        assert math.sin(angle) == pytest.approx(math.sin(theta), abs=2e-6)


def test_plans_pack_their_parameters_in_struct_order() -> None:
    softmax = gpu_plan.plan_softmax(3, 5, True, 0.7)
    assert (softmax.kernel, softmax.groups, softmax.threads) == (
        gpu_plan.SOFTMAX_KERNEL,
        3,
        (256, 1),
    )
    assert softmax.words[:3] == (3, 5, 1)
    assert _f32(softmax.words[3]) == np.float32(0.7)
    rope = gpu_plan.plan_rope(4, 3, 64, True, 7)
    assert rope.words == (4, 3, 64, 1, 7, 384, 2)  # 384 pairs, 256 per workgroup
    attention = gpu_plan.plan_attention(4, 8, 6, 2, 48, False)
    assert attention.groups == 24
    assert attention.threads == (gpu_plan.ATTENTION_THREADS, 1)
    assert attention.words[:6] == (4, 8, 6, 2, 48, 0)
    assert attention.words[7] == 24
    assert _f32(attention.words[6]) == np.float32(1 / math.sqrt(48))
    norm = gpu_plan.plan_add_rms_norm(70_000, 8, 1e-6, limit=65535)
    assert norm.grid.as_tuple() == (65535, 2, 1)


@pytest.mark.parametrize(
    ("name", "kernel"),
    [
        ("softmax", "softmax"),
        ("layer-norm", "layer_norm"),
        ("rope", "rope"),
        ("attention", "attention"),
        ("add-rms-norm", "add_rms_norm"),
    ],
)
def test_each_inference_op_runs_one_kernel(name: str, kernel: str) -> None:
    op = get_op(name)
    launch = gpu_plan.raw_launch(op, op.params())
    assert launch.kernels == (kernel_named(kernel),)
    assert set(kernel_named(kernel).constants) >= {"THREADS"}
