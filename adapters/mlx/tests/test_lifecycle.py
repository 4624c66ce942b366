"""The lifecycle program on MLX streams: what the streams do, and that a dropped step fails."""

from __future__ import annotations

import math

import numpy as np
import pytest
from diffcheck.adapters import Adapter
from diffcheck.differ import diff
from diffcheck.ops import ContextLifecycle, ContextLifecycleParams
from diffcheck.ops.lifecycle import COPIED_SENTINEL, PHASES
from diffcheck.programs import CommandContext, CommandDevice, run_lifecycle

from diffcheck_mlx import MlxBuffer, MlxCommandContext, MlxCommandDevice

mx = pytest.importorskip(
    "mlx.core", reason="mlx is not installed (pip install -e 'adapters/mlx[cpu]')"
)

OP = ContextLifecycle()


def _device() -> MlxCommandDevice:
    return MlxCommandDevice(mx.Device(mx.cpu), mx.float32)


def test_command_objects_satisfy_the_protocols(mlx_cpu: Adapter) -> None:
    device = _device()

    assert isinstance(device, CommandDevice)
    assert isinstance(device.new_context(), CommandContext)
    assert mlx_cpu.has_command_contexts
    assert mlx_cpu.capabilities().command_contexts


def test_each_context_records_on_its_own_new_stream(mlx_cpu: Adapter) -> None:
    device = _device()
    first, second = device.new_context(), device.new_context()

    assert first.stream is not None
    assert second.stream is not None
    assert first.stream != second.stream
    assert first.stream != mx.default_stream(mx.cpu)
    assert device.streams == [str(first.stream), str(second.stream)]


def test_a_recorded_step_replaces_the_handles_array(mlx_cpu: Adapter) -> None:
    device = _device()
    context = device.new_context()
    src = device.upload(np.arange(6, dtype=np.float32))
    dst = device.filled(6, COPIED_SENTINEL)
    before = dst.array

    context.copy(src, dst, 6)
    context.submit()
    context.wait()

    # The handle now holds the copy; the sentinel array it replaced is unchanged.
    np.testing.assert_array_equal(device.read(dst), np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(before), np.full(6, COPIED_SENTINEL, np.float32))


def test_a_released_context_refuses_new_work(mlx_cpu: Adapter) -> None:
    device = _device()
    context = device.new_context()
    buffer = device.filled(4, 1.0)

    context.release()

    assert context.stream is None
    with pytest.raises(RuntimeError, match="released"):
        context.copy(buffer, buffer, 4)


def test_lifecycle_reports_mlx_streams(mlx_cpu: Adapter) -> None:
    params = ContextLifecycleParams()
    execution = mlx_cpu.execute(OP, params, OP.inputs(params, 3), "f32")

    assert "MLX streams" in execution.kernel_entrypoint
    assert "MLX streams" in execution.execution_path
    # One stream per context: shared (initial, reused), peer, dropped.
    assert execution.detail.count("Stream(") == 3


class _SkipCopy(MlxCommandContext):
    """A faulty context: it records gemm and silu-mul but never the copy."""

    def copy(self, src: MlxBuffer, dst: MlxBuffer, count: int) -> None:
        return None


class _FaultyDevice(MlxCommandDevice):
    """Hands out a copy-skipping context as its ``faulty``-th context (0-based)."""

    def __init__(self, faulty: int) -> None:
        super().__init__(mx.Device(mx.cpu), mx.float32)
        self.faulty = faulty
        self.made = 0

    def new_context(self) -> MlxCommandContext:
        context = super().new_context()
        index, self.made = self.made, self.made + 1
        if index != self.faulty:
            return context
        assert context.stream is not None
        return _SkipCopy(context.stream)


def _silu_mul_of_sentinel() -> float:
    """What silu-mul makes of a row of copy sentinels: silu(-7) · -7."""
    sentinel = float(COPIED_SENTINEL)
    return sentinel / (1.0 + math.exp(-sentinel)) * sentinel


@pytest.mark.parametrize(
    ("faulty", "failing"),
    [
        (0, {"initial", "reused_context"}),  # the shared context records both
        (1, {"independent_context"}),
        (2, {"drop_flush"}),
    ],
)
def test_a_skipped_copy_fails_its_phases(
    mlx_cpu: Adapter, reference: Adapter, faulty: int, failing: set[str]
) -> None:
    params = ContextLifecycleParams()
    inputs = OP.inputs(params, 11)
    ref = reference.execute(OP, params, inputs, "f32", role="reference")

    actual = run_lifecycle(_FaultyDevice(faulty), params, inputs)
    verdict = diff(
        ref.output,
        actual,
        max_nmse=1e-7,
        expected_elements=OP.validate(params),
        segments=OP.segments(params),
    )

    assert not verdict.passed
    assert {s.segment.name for s in verdict.segments if s.status == "failed"} == failing
    first = verdict.first_failing_segment
    assert first is not None
    assert verdict.reason is not None
    assert f"{first.segment.display}: NMSE" in verdict.reason
    # The failing phases computed silu-mul from the copy buffer's -7 sentinel.
    for phase, name in enumerate(PHASES):
        if name in failing:
            np.testing.assert_allclose(actual[phase], _silu_mul_of_sentinel(), rtol=1e-6)


def test_lifecycle_reference_role_is_labelled_as_the_namespace_definition(
    mlx_cpu: Adapter,
) -> None:
    params = ContextLifecycleParams()
    execution = mlx_cpu.execute(OP, params, OP.inputs(params, 3), "f32", role="reference")

    assert "MLX streams" not in execution.kernel_entrypoint
    assert execution.kernel_entrypoint == (
        "mlx.core: gemm -> copy -> silu_mul, four independent chains (no command contexts)"
    )
    assert execution.output.size == OP.validate(params)
