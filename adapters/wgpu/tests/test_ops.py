"""Every WGSL kernel against the NumPy reference at the contract's shapes and tolerance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from diffcheck.adapters import Adapter
from diffcheck.differ import diff
from diffcheck.ops import get_op
from diffcheck_wgpu import WgpuAdapter

MAX_NMSE = 1e-7

CASES = [
    ("rms-norm", {"tokens": 4, "dim": 128, "eps": 1e-5}, 42, "rms_norm_f32"),
    ("rms-norm", {"tokens": 3, "dim": 33, "eps": 1e-5}, 7, "rms_norm_f32"),
    # Rows longer than the 256-thread workgroup, so each thread sums several columns.
    ("rms-norm", {"tokens": 2, "dim": 1000, "eps": 1e-6}, 3, "rms_norm_f32"),
    ("gemm", {"m": 64, "n": 32, "k": 32}, 42, "gemm_f32_tiled"),
    ("gemm", {"m": 64, "n": 33, "k": 35}, 7, "gemm_f32_tiled"),
    ("gemm", {"m": 1, "n": 3, "k": 5}, 42, "gemv_f32"),
    ("gemm", {"m": 130, "n": 70, "k": 257}, 11, "gemm_f32_tiled"),
    # GEMV with several workgroups and a k that is not a multiple of the 32 lanes.
    ("gemm", {"m": 1, "n": 70, "k": 257}, 5, "gemv_f32"),
    ("silu-mul", {"tokens": 4, "intermediate": 256}, 42, "silu_mul_split_f32"),
    ("silu-mul", {"tokens": 3, "intermediate": 257}, 7, "silu_mul_split_f32"),
    # The inference ops through the adapter, against the ops' own Array-API definitions (the
    # kernels' tails and boundaries are in test_fused_kernels.py).
    ("softmax", {}, 42, "softmax_f32"),
    ("softmax", {"tokens": 3, "dim": 257, "causal": True, "temperature": 0.5}, 7, "softmax_f32"),
    ("layer-norm", {}, 42, "layer_norm_f32"),
    ("rope", {}, 42, "rope_f32"),
    ("rope", {"layout": "interleaved", "head_dim": 34, "offset": 4_000_000}, 7, "rope_f32"),
    ("attention", {}, 42, "attention_f32"),
    (
        "attention",
        {"tokens": 3, "kv_len": 130, "causal": False, "head_dim": 40},
        7,
        "attention_f32",
    ),
    ("add-rms-norm", {}, 42, "add_rms_norm_f32"),
]


def check(
    adapter: Adapter, reference: Adapter, name: str, values: dict[str, Any], seed: int
) -> tuple[Any, Any]:
    op = get_op(name)
    params = op.params(**values)
    op.validate(params)
    inputs = op.inputs(params, seed)
    expected = reference.execute(op, params, inputs, "f32", role="reference")
    actual = adapter.execute(op, params, inputs, "f32")
    verdict = diff(
        expected.output,
        actual.output,
        max_nmse=MAX_NMSE,
        expected_elements=int(np.prod(op.output_shape(params))),
        segments=op.segments(params) or None,
    )
    return verdict, actual


@pytest.mark.parametrize(("name", "values", "seed", "kernel"), CASES)
def test_kernel_matches_the_reference(
    wgpu_adapter: WgpuAdapter,
    reference: Adapter,
    name: str,
    values: dict[str, Any],
    seed: int,
    kernel: str,
) -> None:
    verdict, actual = check(wgpu_adapter, reference, name, values, seed)
    assert verdict.passed, verdict.reason
    assert actual.kernel_entrypoint == kernel
    assert actual.execution_path.startswith(f"wgpu compute pass {kernel} on ")
    assert (actual.input_storage, actual.output_storage) == ("f32", "f32")


def test_silu_of_large_negative_gates_is_finite(wgpu_adapter: WgpuAdapter) -> None:
    op = get_op("silu-mul")
    params = op.params(tokens=1, intermediate=6)
    gate = np.array([-1000.0, -200.0, -88.0, -80.5, 0.0, 90.0], dtype=np.float32)
    inputs = {"gate_up": np.concatenate([gate, np.ones(6, dtype=np.float32)])}
    output = wgpu_adapter.execute(op, params, inputs, "f32").output
    assert np.isfinite(output).all()
    # silu(g) = g / (1 + e^-g): about g·e^g (negligible) far below zero, g far above it.
    np.testing.assert_allclose(output[:4], 0.0, atol=1e-30)
    assert output[4] == 0.0
    assert output[5] == pytest.approx(90.0)
