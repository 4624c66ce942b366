"""Probing: versions and devices in the detail, and reasons a person can act on."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from diffcheck.adapters import Adapter, resolve
from diffcheck.install import plugin_install

import diffcheck_mlx._probe as probe_module
from diffcheck_mlx import MlxAdapter, probe_mlx

mx = pytest.importorskip(
    "mlx.core", reason="mlx is not installed (pip install -e 'adapters/mlx[cpu]')"
)


def test_cpu_probe_names_version_and_devices(mlx_cpu: Adapter) -> None:
    probe = mlx_cpu.probe()

    assert probe.is_available
    assert f"mlx {mx.__version__}" in probe.detail
    assert "cpu" in probe.detail
    assert "gpu" in probe.detail


def test_gpu_probe_says_what_is_missing_and_how_to_get_it() -> None:
    if mx.is_available(mx.gpu):
        pytest.skip("this machine has an MLX GPU; the unavailable reason cannot be observed")
    probe = resolve("mlx:gpu").probe()

    assert probe.status == "unavailable"
    assert probe.reason is not None
    assert probe.reason.startswith("MLX has no GPU device here")
    if sys.platform.startswith("linux"):
        assert plugin_install("adapters/mlx", "cuda") in probe.reason
    elif sys.platform == "darwin":
        assert "Metal" in probe.reason
    assert f"mlx {mx.__version__}" in probe.detail


def test_gpu_reason_flags_clashing_linux_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    if mx.is_available(mx.gpu):
        pytest.skip("this machine has an MLX GPU; the unavailable reason cannot be observed")
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(
        probe_module, "installed_builds", lambda: {"mlx-cpu": "0.32.4", "mlx-cuda-13": "0.32.4"}
    )
    probe = probe_mlx("gpu")

    assert probe.reason is not None
    assert (
        "the CUDA build (mlx-cuda-13) is installed but found no usable NVIDIA GPU" in probe.reason
    )
    assert "uninstall them all, then install one" in probe.reason


def test_missing_mlx_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "mlx" else real(name, *a),
    )
    probe = MlxAdapter("cpu").probe()

    assert probe.status == "unavailable"
    assert probe.reason is not None
    assert plugin_install("adapters/mlx", "cpu") in probe.reason


def test_mlx_without_its_library_build_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    # What a Linux install of plain mlx (no cpu/cuda extra) looks like: mlx.core cannot load.
    monkeypatch.setitem(sys.modules, "mlx.core", None)
    probe = MlxAdapter("cpu").probe()

    assert probe.status == "unavailable"
    assert probe.reason is not None
    assert "mlx.core cannot load" in probe.reason


def test_gpu_has_no_float64_and_says_so() -> None:
    capabilities = MlxAdapter("gpu").capabilities()

    assert not capabilities.float64
    assert any("no float64 on the GPU" in note for note in capabilities.notes)
    assert capabilities.precisions == ("f32", "f16", "bf16")


def test_cpu_float64_is_real(mlx_cpu: Adapter) -> None:
    # The capability claim rests on MLX's CPU computing float64, not storing it only.
    with mx.stream(mx.cpu):
        third = mx.array([1.0], dtype=mx.float64) / 3.0
    mx.eval(third)

    assert mlx_cpu.capabilities().float64
    assert third.dtype == mx.float64
    assert third.item() == 1.0 / 3.0


def test_a_device_that_fails_to_run_is_a_probe_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_eval(*arrays: object) -> None:
        raise RuntimeError("CUDA driver version is insufficient")

    monkeypatch.setattr(mx, "eval", broken_eval)
    probe = MlxAdapter("cpu").probe()

    assert probe.status == "error"
    assert probe.reason is not None
    assert "could not run a one-element op" in probe.reason
    assert "CUDA driver version is insufficient" in probe.reason
