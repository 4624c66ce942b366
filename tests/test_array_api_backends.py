"""Any array-api-compat library as a backend, with no adapter code: array-api-strict and torch."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from diffcheck.adapters import resolve
from diffcheck.adapters.array_api import ArrayApiAdapter
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report.replay import load_report, replay
from diffcheck.runner import run_check
from diffcheck.testing import perturb

OPS = ("gemm", "rms-norm", "silu-mul", "context-lifecycle")


def _run_cli(tmp_path: Path, backend: str, op: str, *extra: str) -> tuple[int, dict[str, Any]]:
    report = tmp_path / f"{backend.replace(':', '-')}-{op}-{'-'.join(extra) or 'f32'}.json"
    code = main(["run", "--require-backend", backend, "--op", op, "--report", str(report), *extra])
    return code, json.loads(report.read_text())


def _storage(document: dict[str, Any]) -> tuple[str, str]:
    executed = document["executed_precision"]
    return executed["backend_input_storage"], executed["backend_output_storage"]


# -- array-api-strict ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def strict() -> Any:
    return pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")


@pytest.mark.parametrize("op", OPS)
def test_array_api_strict_passes_every_op_through_the_cli(
    strict: Any, tmp_path: Path, op: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document = _run_cli(tmp_path, "array_api_strict", op)
    assert code == 0, capsys.readouterr().err
    assert document["result"]["status"] == "passed"
    assert _storage(document) == ("f32", "f32")
    assert document["configured_precision"]["kernel_entrypoint"].startswith("array_api_strict:")
    assert replay(load_report(next(tmp_path.iterdir()))).agrees


def test_array_api_strict_f16_is_not_run_with_the_reason(
    strict: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document = _run_cli(tmp_path, "array_api_strict", "gemm", "--precision", "f16")
    assert code == 1
    assert document["result"]["status"] == "not_run"
    assert "does not execute precision f16 (it executes: f32)" in document["result"]["reason"]
    assert "does not execute precision f16" in capsys.readouterr().err


def test_a_device_the_library_does_not_list_is_not_run_with_the_devices_it_has(
    strict: Any, tmp_path: Path
) -> None:
    code, document = _run_cli(tmp_path, "array_api_strict:gpu", "silu-mul")
    assert code == 1
    assert document["result"]["status"] == "not_run"
    reason = document["result"]["reason"]
    assert reason.startswith("array_api_strict has no device 'gpu' here (it lists: CPU_DEVICE")
    assert "no_float64" in reason


@pytest.mark.parametrize(
    ("spec", "device"),
    [("array_api_strict:cpu", "CPU_DEVICE"), ("array_api_strict:device1", "device1")],
)
def test_devices_are_named_as_the_library_names_them(strict: Any, spec: str, device: str) -> None:
    adapter = resolve(spec)
    assert adapter.probe().is_available
    array = adapter.to_device(__import__("numpy").ones(3, "float32"))
    assert repr(array.device) == f"array_api_strict.Device('{device}')"


def test_a_device_without_float64_is_detected_and_still_runs_gemm(strict: Any) -> None:
    adapter = resolve("array_api_strict:no_float64")
    assert adapter.probe().is_available
    capabilities = adapter.capabilities()
    assert capabilities.float64 is False
    assert capabilities.notes == ("no float64 on this device",)
    # A candidate accumulates in float32, so a device without float64 runs the GEMM contract.
    document = run_check(make_check("array_api_strict:no_float64", "gemm", m=64, n=33, k=35))
    assert document.result is not None
    assert document.result.status == "passed", document.result.reason


def test_a_wrong_array_api_result_fails(strict: Any) -> None:
    check = make_check("array_api_strict", "rms-norm", tokens=3, dim=33)
    document = run_check(check, candidate=perturb(resolve("array_api_strict"), "scale_segment"))
    assert document.result is not None
    assert document.result.status == "failed"
    assert "not below tolerance" in (document.result.reason or "")


def test_an_uninstalled_library_is_unavailable_with_how_to_install_it() -> None:
    adapter = ArrayApiAdapter("ndonnx")
    probe = adapter.probe()
    if probe.is_available:
        pytest.skip("ndonnx is installed here")
    assert probe.status == "unavailable"
    assert probe.reason == (
        "ndonnx is not installed; install it (pip install ndonnx) to use it as a backend"
    )


def test_resolving_and_listing_import_no_backend_library() -> None:
    code = (
        "import sys\n"
        "from diffcheck.adapters import resolve, known_backends\n"
        "known_backends(); resolve('torch:cuda'); resolve('array_api_strict')\n"
        "loaded = [m for m in ('torch', 'array_api_strict', 'jax', 'cupy') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- torch --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip(
        "torch", reason="torch is not installed; pip install torch==2.13.0 (the CPU wheel)"
    )


@pytest.mark.parametrize("precision", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("op", OPS)
def test_torch_cpu_passes_every_op_at_every_precision(
    torch: Any, tmp_path: Path, op: str, precision: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document = _run_cli(tmp_path, "torch:cpu", op, "--precision", precision)
    assert code == 0, capsys.readouterr().err
    assert document["result"]["status"] == "passed"
    assert _storage(document) == (precision, precision)
    assert document["environment"]["candidate_detail"].startswith("torch 2.")


def test_torch_probe_raises_no_warning_and_finds_every_precision(torch: Any) -> None:
    with warnings.catch_warnings():
        # torch warns about deprecated device types while devices are listed; that must not
        # reach a user who runs with warnings as errors.
        warnings.simplefilter("error")
        adapter = resolve("torch:cpu")
        assert adapter.probe().is_available
        capabilities = adapter.capabilities()
    assert capabilities.precisions == ("f32", "f16", "bf16")
    assert capabilities.float64 is True


def test_torch_cuda_without_a_gpu_is_not_run(torch: Any, tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device; torch:cuda runs here")
    code, document = _run_cli(tmp_path, "torch:cuda", "gemm")
    assert code == 1
    assert document["result"]["status"] == "not_run"
    assert document["result"]["reason"].startswith("torch has no device 'cuda' here (it lists: cpu")


def test_torch_outputs_come_back_through_dlpack_and_a_wrong_one_fails(torch: Any) -> None:
    adapter = resolve("torch:cpu")
    host = adapter.to_host(torch.arange(6, dtype=torch.float32).reshape(2, 3).T)
    assert host.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    check = make_check("torch:cpu", "context-lifecycle", precision="bf16")
    document = run_check(check, candidate=perturb(adapter, "skipped_step"))
    assert document.result is not None
    assert document.result.status == "failed"
    assert document.segments is not None
    assert [s.status for s in document.segments] == ["passed", "passed", "passed", "failed"]
