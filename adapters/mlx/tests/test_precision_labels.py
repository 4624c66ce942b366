"""The GPU's float32 matmul precision is written into the report's labels."""

from __future__ import annotations

import sys

import pytest
from diffcheck.ops import get_op

from diffcheck_mlx import MlxAdapter


@pytest.mark.parametrize("op_name", ["gemm", "context-lifecycle"])
def test_gpu_f32_matmul_labels_name_tf32_until_it_is_disabled(
    monkeypatch: pytest.MonkeyPatch, op_name: str
) -> None:
    op = get_op(op_name)
    params = op.params()
    monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    label = MlxAdapter("gpu").kernel_entrypoint(op, params, "f32")
    assert "TF32" in label
    assert "MLX_ENABLE_TF32 unset, default 1" in label
    monkeypatch.setenv("MLX_ENABLE_TF32", "0")
    assert "full float32 (MLX_ENABLE_TF32=0)" in MlxAdapter("gpu").kernel_entrypoint(
        op, params, "f32"
    )


def test_cpu_and_non_matmul_and_half_precision_labels_carry_no_tf32_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    gemm, silu = get_op("gemm"), get_op("silu-mul")
    assert "TF32" not in MlxAdapter("cpu").kernel_entrypoint(gemm, gemm.params(), "f32")
    assert "TF32" not in MlxAdapter("gpu").kernel_entrypoint(silu, silu.params(), "f32")
    assert "TF32" not in MlxAdapter("gpu").kernel_entrypoint(gemm, gemm.params(), "f16")
    # Before MLX is loaded, plain ``mlx`` cannot know its default device: the note is hedged.
    monkeypatch.delitem(sys.modules, "mlx.core", raising=False)
    assert "default device is a GPU" in MlxAdapter().kernel_entrypoint(gemm, gemm.params(), "f32")


def test_plain_mlx_drops_the_note_once_its_default_device_is_known_to_be_the_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mx = pytest.importorskip("mlx.core", reason="mlx is not installed")
    monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    gemm = get_op("gemm")
    label = MlxAdapter().kernel_entrypoint(gemm, gemm.params(), "f32")
    assert ("TF32" in label) == (mx.default_device().type == mx.gpu)
