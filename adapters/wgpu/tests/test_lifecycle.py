"""The compute/copy/compute lifecycle on wgpu command encoders, with injected faults.

Each fault wraps the real :class:`WgpuCommandContext` and changes one thing a buggy backend
could get wrong; the check must then fail in the phase that exercises it, and pass in the
others. What WebGPU cannot show is tested as such (see ``test_a_missing_wait_is_not_observable``).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from diffcheck.adapters import Adapter
from diffcheck.differ import Verdict, diff
from diffcheck.ops import ContextLifecycleParams, get_op
from diffcheck.ops.lifecycle import PHASE_LABELS
from diffcheck.programs import CommandContext, CommandDevice, run_lifecycle
from diffcheck_wgpu import WgpuAdapter, WgpuCommandDevice, WgpuExecutionError

OP = get_op("context-lifecycle")


class FaultyContext:
    """A real context with one step changed; subclasses override the step they break."""

    def __init__(self, inner: CommandContext) -> None:
        self.inner = inner

    def gemm(self, a: Any, b: Any, out: Any, m: int, n: int, k: int) -> None:
        self.inner.gemm(a, b, out, m, n, k)

    def copy(self, src: Any, dst: Any, count: int) -> None:
        self.inner.copy(src, dst, count)

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        self.inner.silu_mul(src, dst, tokens, intermediate)

    def submit(self) -> None:
        self.inner.submit()

    def wait(self) -> None:
        self.inner.wait()

    def release(self) -> None:
        self.inner.release()


class SkipsCopy(FaultyContext):
    """(a) The copy step is never recorded: SiLU-mul reads the -7 sentinel."""

    def copy(self, src: Any, dst: Any, count: int) -> None:
        pass


class ReusesFirstOutput(FaultyContext):
    """(b) The context keeps the output binding of its first chain (stale bound resources)."""

    first_output: Any = None

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        if self.first_output is None:
            self.first_output = dst
        self.inner.silu_mul(src, self.first_output, tokens, intermediate)


class SubmitsOnWait(FaultyContext):
    """(c) ``submit`` only queues locally and ``wait`` flushes: a released context's work never runs."""

    pending = False

    def submit(self) -> None:
        self.pending = True

    def wait(self) -> None:
        if self.pending:
            self.inner.submit()
            self.pending = False
        self.inner.wait()


class SkipsWait(FaultyContext):
    """``wait`` returns at once, without waiting or checking errors."""

    def wait(self) -> None:
        pass


class FaultyDevice:
    """The real device, handing out contexts wrapped in ``fault``."""

    def __init__(self, inner: WgpuCommandDevice, fault: type[FaultyContext]) -> None:
        self.inner = inner
        self.fault = fault

    def new_context(self) -> CommandContext:
        return self.fault(self.inner.new_context())

    def upload(self, host: npt.NDArray[np.float32]) -> Any:
        return self.inner.upload(host)

    def filled(self, count: int, value: float) -> Any:
        return self.inner.filled(count, value)

    def read(self, buffer: Any) -> npt.NDArray[np.float32]:
        return self.inner.read(buffer)


def judge(
    device: CommandDevice, reference: Adapter, params: ContextLifecycleParams, seed: int = 42
) -> Verdict:
    inputs = OP.inputs(params, seed)
    expected = reference.execute(OP, params, inputs, "f32", role="reference").output
    actual = run_lifecycle(device, params, inputs)
    return diff(expected, actual, max_nmse=1e-7, segments=OP.segments(params))


def failing_labels(verdict: Verdict) -> list[str]:
    return [s.segment.display for s in verdict.segments if s.status == "failed"]


def assert_first_failure(verdict: Verdict, label: str) -> None:
    """The verdict failed numerically, and its reason names ``label`` as the first failing phase."""
    assert not verdict.passed
    first = verdict.first_failing_segment
    assert first is not None
    assert first.segment.display == label
    assert verdict.reason is not None
    assert f"{label}: NMSE " in verdict.reason


@pytest.mark.parametrize("values", [{}, {"tokens": 1}], ids=["defaults", "tokens1"])
def test_lifecycle_matches_the_reference(
    wgpu_adapter: WgpuAdapter, reference: Adapter, values: dict[str, int]
) -> None:
    params = OP.params(**values)
    inputs = OP.inputs(params, 42)
    expected = reference.execute(OP, params, inputs, "f32", role="reference")
    actual = wgpu_adapter.execute(OP, params, inputs, "f32")
    verdict = diff(expected.output, actual.output, max_nmse=1e-7, segments=OP.segments(params))
    assert verdict.passed, verdict.reason
    assert [s.segment.display for s in verdict.segments] == list(PHASE_LABELS)
    gemm = "gemv_f32" if values else "gemm_f32_tiled"
    assert actual.kernel_entrypoint.startswith(
        f"{gemm} -> copy_buffer_to_buffer -> silu_mul_split_f32"
    )


def test_reference_role_runs_independent_chains(
    wgpu_adapter: WgpuAdapter, reference: Adapter
) -> None:
    params = OP.params()
    inputs = OP.inputs(params, 3)
    expected = reference.execute(OP, params, inputs, "f32", role="reference").output
    chains = wgpu_adapter.execute(OP, params, inputs, "f32", role="reference").output
    assert diff(expected, chains, max_nmse=1e-7, segments=OP.segments(params)).passed


def test_a_skipped_copy_fails_every_phase_first_initial(
    wgpu_adapter: WgpuAdapter, reference: Adapter
) -> None:
    device = FaultyDevice(wgpu_adapter.command_device("f32"), SkipsCopy)
    verdict = judge(device, reference, OP.params())
    assert_first_failure(verdict, "Initial")
    assert failing_labels(verdict) == list(PHASE_LABELS)


def test_a_stale_output_binding_fails_only_the_reused_context(
    wgpu_adapter: WgpuAdapter, reference: Adapter
) -> None:
    device = FaultyDevice(wgpu_adapter.command_device("f32"), ReusesFirstOutput)
    verdict = judge(device, reference, OP.params())
    assert_first_failure(verdict, "ReusedContext")
    # The independent and dropped contexts are fresh, so their phases still pass.
    assert failing_labels(verdict) == ["ReusedContext"]


def test_work_left_unsubmitted_at_release_fails_only_drop_flush(
    wgpu_adapter: WgpuAdapter, reference: Adapter
) -> None:
    device = FaultyDevice(wgpu_adapter.command_device("f32"), SubmitsOnWait)
    verdict = judge(device, reference, OP.params(tokens=1))
    assert_first_failure(verdict, "DropFlush")
    assert failing_labels(verdict) == ["DropFlush"]


def test_a_missing_wait_is_not_observable(wgpu_adapter: WgpuAdapter, reference: Adapter) -> None:
    """WebGPU's limit, pinned: reads are queue operations ordered after earlier submissions.

    A context that never waits still reads finished data on wgpu, so the lifecycle passes;
    what the missing wait loses is the error check, which ``read`` repeats. If this starts
    failing, wgpu reads stopped being ordered and the adapter's notes must change.
    """
    device = FaultyDevice(wgpu_adapter.command_device("f32"), SkipsWait)
    verdict = judge(device, reference, OP.params())
    assert verdict.passed, verdict.reason
    assert [s.status for s in verdict.segments] == ["passed"] * len(PHASE_LABELS)


def test_a_validation_error_raises_with_the_driver_message(wgpu_adapter: WgpuAdapter) -> None:
    device = wgpu_adapter.command_device("f32")
    context = device.new_context()
    small, large = device.filled(4, 1.0), device.filled(8, 2.0)
    context.copy(large, small, 8)  # 32 bytes into a 16-byte buffer
    with pytest.raises(
        WgpuExecutionError, match=r"wgpu queue submit failed: GPUValidationError: .*\S"
    ):
        context.submit()


def test_an_error_the_driver_only_logs_fails_the_wait(wgpu_adapter: WgpuAdapter) -> None:
    """Device loss and uncaptured errors reach wgpu-py's logger, not an exception."""
    device = wgpu_adapter.command_device("f32")
    context = device.new_context()
    context.copy(device.filled(4, 1.0), device.filled(4, 2.0), 4)
    context.submit()
    logging.getLogger("wgpu").error("The WGPU device was lost (Unknown):\nsimulated")
    with pytest.raises(WgpuExecutionError, match="device was lost"):
        context.wait()
    # The error is reported once; the next check starts clean.
    context.wait()


def test_a_released_context_refuses_more_work(wgpu_adapter: WgpuAdapter) -> None:
    device = wgpu_adapter.command_device("f32")
    context = device.new_context()
    context.release()
    with pytest.raises(RuntimeError, match="released"):
        context.copy(device.filled(1, 0.0), device.filled(1, 0.0), 1)
