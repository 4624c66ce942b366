"""The Metal adapter on Linux: the real probe, the shipped MSL, and the PyObjC layer over a NumPy stand-in."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from diffcheck.adapters import Adapter, resolve
from diffcheck.differ import diff
from diffcheck.gpu_plan import check_kernel_source, kernel_named, run_op
from diffcheck.ops import get_op
from diffcheck.programs import run_lifecycle
from diffcheck_metal import (
    PYOBJC_INSTALL,
    MetalAdapter,
    MetalCommandDevice,
    MetalExecutionError,
    open_runtime,
)
from diffcheck_metal._kernels import KERNEL_FILES, KERNEL_NAMES, kernel_source

MAX_NMSE = 1e-7


@pytest.mark.skipif(sys.platform == "darwin", reason="the real probe answers differently on macOS")
def test_probe_off_macos_is_unavailable() -> None:
    probe = resolve("metal").probe()
    assert (probe.status, probe.reason) == ("unavailable", "Metal requires macOS")


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the check can really run")
@pytest.mark.parametrize("op", ["metal-context", "gemm"])
def test_required_metal_off_macos_is_a_not_run_report_and_exit_1(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], op: str
) -> None:
    import json

    from diffcheck.cli import main

    report = tmp_path / "metal.json"
    code = main(["run", "--require-backend", "metal", "--op", op, "--report", str(report)])
    assert code == 1
    assert "Metal requires macOS" in capsys.readouterr().err
    document = json.loads(report.read_text())
    assert document["completed"] is True
    assert document["result"]["status"] == "not_run"
    assert document["result"]["reason"] == "Metal requires macOS"
    assert document["result"]["actual"] is None
    assert "submission_metrics" not in document
    if op == "metal-context":
        assert document["submission_phases"] == [
            "initial",
            "reused_context",
            "independent_context",
            "drop_flush",
        ]


def test_importing_the_adapter_imports_no_pyobjc() -> None:
    code = (
        "import sys, diffcheck_metal, diffcheck.adapters as a; a.resolve('metal').probe(); "
        "assert not {'Metal', 'objc'} & set(sys.modules), 'PyObjC imported'"
    )
    if sys.platform == "darwin":  # there the probe itself imports Metal, as it should
        code = code.replace(".probe()", "")
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("kernel", sorted(KERNEL_FILES))
def test_msl_sources_ship_and_match_the_launch_plan(kernel: str) -> None:
    filename, entry = KERNEL_FILES[kernel]
    source = kernel_source(filename)
    check_kernel_source(kernel_named(kernel), source, origin=filename)
    assert f"kernel void {entry}(" in source
    assert KERNEL_NAMES[kernel] == entry


def test_probe_without_pyobjc_names_the_install_command(
    fake_metal: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "Metal", None)
    probe = MetalAdapter().probe()
    assert probe.status == "unavailable"
    assert probe.reason is not None
    assert f"run '{PYOBJC_INSTALL}'" in probe.reason


def test_probe_without_a_device(fake_metal: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fake_metal, "DEFAULT_DEVICE", None)
    probe = MetalAdapter().probe()
    assert (probe.status, probe.reason) == ("unavailable", "no Metal device is available")


def test_probe_with_a_device_names_it(fake_metal: ModuleType) -> None:
    probe = MetalAdapter().probe()
    assert (probe.status, probe.detail) == ("available", "Fake Metal GPU via Metal, PyObjC fake")
    capabilities = MetalAdapter().capabilities()
    assert (capabilities.precisions, capabilities.float64, capabilities.command_contexts) == (
        ("f32",),
        False,
        True,
    )


CASES = [
    ("rms-norm", {"tokens": 4, "dim": 128, "eps": 1e-5}, "rms_norm_f32"),
    ("rms-norm", {"tokens": 3, "dim": 33, "eps": 1e-5}, "rms_norm_f32"),
    ("gemm", {"m": 64, "n": 32, "k": 32}, "gemm_f32_v2"),
    ("gemm", {"m": 64, "n": 33, "k": 35}, "gemm_f32_v2"),
    ("gemm", {"m": 1, "n": 3, "k": 5}, "gemv_f32"),
    ("gemm", {"m": 130, "n": 70, "k": 257}, "gemm_f32_v2"),
    ("silu-mul", {"tokens": 4, "intermediate": 256}, "silu_mul_split_f32"),
    ("silu-mul", {"tokens": 3, "intermediate": 257}, "silu_mul_split_f32"),
    ("context-lifecycle", {}, "gemm_f32_v2 -> blit -> silu_mul_split_f32 (legacy MetalContext)"),
    (
        "context-lifecycle",
        {"tokens": 1},
        "gemv_f32 -> blit -> silu_mul_split_f32 (legacy MetalContext)",
    ),
]


@pytest.mark.parametrize(("name", "values", "entrypoint"), CASES)
def test_ops_through_the_pyobjc_layer(
    fake_metal: ModuleType, reference: Adapter, name: str, values: dict[str, Any], entrypoint: str
) -> None:
    op = get_op(name)
    params = op.params(**values)
    inputs = op.inputs(params, 42)
    expected = reference.execute(op, params, inputs, "f32", role="reference")
    actual = MetalAdapter().execute(op, params, inputs, "f32")
    verdict = diff(
        expected.output, actual.output, max_nmse=MAX_NMSE, segments=op.segments(params) or None
    )
    assert verdict.passed, verdict.reason
    assert actual.kernel_entrypoint == entrypoint
    assert actual.execution_path.endswith(" on Fake Metal GPU")
    # Every library was compiled with fast math off.
    assert fake_metal.Device.compiled
    assert not any(options.fast_math for options in fake_metal.Device.compiled)


def test_split_grids_cover_the_work(fake_metal: ModuleType, reference: Adapter) -> None:
    device = MetalCommandDevice(open_runtime(), max_workgroups_per_dimension=2)
    for name, values in (
        ("silu-mul", {"tokens": 5, "intermediate": 257}),
        ("gemm", {"m": 1, "n": 60, "k": 9}),
    ):
        op = get_op(name)
        params = op.params(**values)
        inputs = op.inputs(params, 3)
        expected = reference.execute(op, params, inputs, "f32", role="reference").output
        assert diff(expected, run_op(device, op, params, inputs), max_nmse=MAX_NMSE).passed


def test_a_failed_command_buffer_raises_the_driver_description(fake_metal: ModuleType) -> None:
    fake_metal.CommandBuffer.fail_with = "Execution of the command buffer was aborted (IOAF code 2)"
    op = get_op("silu-mul")
    params = op.params()
    with pytest.raises(
        MetalExecutionError, match=r"status Error: Execution of the command buffer was aborted"
    ):
        MetalAdapter().execute(op, params, op.inputs(params, 1), "f32")


class UnsettledReads(MetalCommandDevice):
    """A device that reads shared memory without waiting for committed command buffers."""

    def read(self, buffer: Any) -> npt.NDArray[np.float32]:
        return np.frombuffer(
            buffer.contents().as_buffer(int(buffer.length())), dtype=np.float32
        ).copy()


def test_reading_before_a_dropped_context_completes_fails_drop_flush(
    fake_metal: ModuleType, reference: Adapter
) -> None:
    op = get_op("context-lifecycle")
    params = op.params()
    inputs = op.inputs(params, 42)
    expected = reference.execute(op, params, inputs, "f32", role="reference").output
    actual = run_lifecycle(UnsettledReads(open_runtime()), params, inputs)
    verdict = diff(expected, actual, max_nmse=MAX_NMSE, segments=op.segments(params))
    assert [s.segment.display for s in verdict.segments if s.status == "failed"] == ["DropFlush"]
    assert verdict.reason is not None
    assert "DropFlush: NMSE " in verdict.reason


def test_a_released_context_commits_its_recording_without_waiting(fake_metal: ModuleType) -> None:
    device = MetalCommandDevice(open_runtime())
    context = device.new_context()
    src, dst = device.filled(4, 3.0), device.filled(4, -7.0)
    context.copy(src, dst, 4)
    context.release()
    (committed,) = device.in_flight
    assert committed.status() == 2  # committed, not waited on
    np.testing.assert_array_equal(device.read(dst), np.full(4, 3.0, np.float32))
    with pytest.raises(RuntimeError, match="released"):
        context.copy(src, dst, 4)
