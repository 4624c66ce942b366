"""The TF32 divergence MLX declares: which checks it matches, and only while TF32 is on.

No GPU is needed: the device and the environment are monkeypatched; MLX is never imported.
"""

from __future__ import annotations

import sys
import tomllib
import types

import pytest
from diffcheck.adapters import KnownDivergence, matching_divergence, resolve
from diffcheck.sweep.known import classify
from diffcheck.sweep.matrix import parse_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.summary import FloorNote, SummaryRow

from diffcheck_mlx import TF32_DIVERGENCE, MlxAdapter


def known(adapter: MlxAdapter, op: str, precision: str = "f32") -> KnownDivergence | None:
    return matching_divergence(
        adapter.known_divergences(), adapter.device, op, precision, failure=None
    )


@pytest.mark.parametrize("setting", [None, "1"])
@pytest.mark.parametrize("op", ["context-lifecycle"])
def test_mlx_gpu_f32_lifecycle_matches_while_tf32_is_on(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, op: str
) -> None:
    if setting is None:
        monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    else:
        monkeypatch.setenv("MLX_ENABLE_TF32", setting)
    assert known(MlxAdapter("gpu"), op) is TF32_DIVERGENCE
    monkeypatch.setenv("MLX_ENABLE_TF32", "0")
    assert known(MlxAdapter("gpu"), op) is None


def test_other_ops_precisions_and_the_cpu_do_not_match(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    assert known(MlxAdapter("gpu"), "silu-mul") is None
    assert known(MlxAdapter("gpu"), "rms-norm") is None
    # gemm is a TF32 matmul too: the precision floor fails it, so it is declared.
    assert known(MlxAdapter("gpu"), "gemm") is TF32_DIVERGENCE
    assert known(MlxAdapter("gpu"), "context-lifecycle", "f16") is None
    assert known(MlxAdapter("gpu"), "context-lifecycle", "bf16") is None
    assert known(MlxAdapter("cpu"), "context-lifecycle") is None


@pytest.mark.parametrize(
    ("loaded", "default_is_gpu", "setting", "expected"),
    [
        (True, True, None, True),
        (True, True, "0", False),
        (True, False, None, False),
        # Before MLX is loaded its default device is unknown: nothing is excused on a guess.
        (False, True, None, False),
    ],
)
def test_plain_mlx_matches_only_once_its_default_device_is_known_to_be_the_gpu(
    monkeypatch: pytest.MonkeyPatch,
    loaded: bool,
    default_is_gpu: bool,
    setting: str | None,
    expected: bool,
) -> None:
    if loaded:
        monkeypatch.setitem(sys.modules, "mlx.core", types.ModuleType("mlx.core"))
    else:
        monkeypatch.delitem(sys.modules, "mlx.core", raising=False)
    monkeypatch.setattr(MlxAdapter, "is_gpu", lambda self: default_is_gpu)
    if setting is None:
        monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    else:
        monkeypatch.setenv("MLX_ENABLE_TF32", setting)
    found = known(MlxAdapter(), "context-lifecycle")
    assert (found is not None) is expected
    if found is not None:
        assert (found.reason, found.upstream) == (TF32_DIVERGENCE.reason, TF32_DIVERGENCE.upstream)


def test_the_declaration_says_why_where_and_how_far() -> None:
    assert TF32_DIVERGENCE.max_nmse == 1.4e-6
    assert "1.4e-7" in TF32_DIVERGENCE.bound_source
    assert TF32_DIVERGENCE.reason.startswith("GPU float32 matmuls run as TF32 tensor-core math")
    assert "MLX_ENABLE_TF32=0 restores full float32" in TF32_DIVERGENCE.reason
    assert TF32_DIVERGENCE.upstream == (
        "https://ml-explore.github.io/mlx/build/html/usage/environment_variables.html"
    )
    assert resolve("mlx:gpu").known_divergences() == (TF32_DIVERGENCE,)


_MATRIX = """
schema_version = 1
[[pairs]]
candidate = "mlx:gpu"
[ops.context-lifecycle]
shapes = [{ tokens = 3, intermediate = 33, k = 35 }]
"""


def test_a_sweep_counts_a_measured_mlx_gpu_tf32_failure_as_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MLX_ENABLE_TF32", raising=False)
    (planned,) = plan_matrix(parse_matrix(tomllib.loads(_MATRIX))).checks
    assert planned.pair.known_divergences == (TF32_DIVERGENCE,)
    row = SummaryRow(
        id=planned.id,
        reference="numpy",
        candidate="mlx:gpu",
        required=False,
        op="context-lifecycle",
        shape=planned.shape,
        params=planned.params,
        precision="f32",
        seed=42,
        status="failed",
        reason="NMSE 1.37e-07 is not below tolerance 1e-07",
        not_independent=None,
        nmse=1.37e-7,
        tolerance=1e-7,
        ratio=1.37,
        segments=[],
        report=f"{planned.id}.json",
        elapsed_ms=1.0,
        worker_wall_s=1.0,
        worker="exit 0",
        parent_action=None,
        resumed=False,
        # The report's precision floor: the candidate is within the floor of the TF32 twin.
        floor=FloorNote(
            floor_nmse=2e-14,
            derived_tolerance=2e-11,
            candidate_nmse=1.37e-7,
            ratio=6.85e6,
            status="failed",
            match="tf32 operands",
            models=["tf32 operands"],
        ),
        known_divergence=None,
    )
    assert classify(row, planned.pair.known_divergences).outcome == "known"
    # A failure the TF32 twin does not model (within its ceiling) is not TF32.
    other = row.model_copy(update={"floor": row.floor.model_copy(update={"models": []})})
    assert classify(other, planned.pair.known_divergences).outcome == "failed"
    # The bound: the 13.0 sentinel left in drop_flush (NMSE ~2.8e3) is a real bug, not TF32.
    sentinel = row.model_copy(
        update={"reason": "NMSE 2840.5 is not below tolerance 0.0000001", "nmse": 2840.5}
    )
    assert classify(sentinel, planned.pair.known_divergences).outcome == "failed"
    monkeypatch.setenv("MLX_ENABLE_TF32", "0")
    assert classify(row, planned.pair.known_divergences).outcome == "failed"
