"""Command-context programs: the compute/copy/compute lifecycle under four submission phases.

An adapter that records work into command contexts (Metal command buffers, WebGPU command
encoders and queues, CUDA or MLX streams) implements :class:`CommandDevice` and
:class:`CommandContext`; :func:`run_lifecycle` then owns everything that is not a driver
call: which steps are recorded, the submission order of the phases, and the read-back order.
Every adapter therefore runs exactly the same sequence, and a test double over NumPy can
exercise it in CI.

The phases, in order (the reference tool's MetalContext lifecycle):

``initial``
    Record gemm -> copy -> silu-mul on context C, submit, wait (checked), read the output.
``reused_context``
    Record the next chain on the same C after its completed submission, and submit.
``independent_context``
    Record the next chain on a new peer context P and submit; P is waited first, then C,
    so C must keep its own command buffer and bound resources. Read C's output, then P's.
``drop_flush``
    Record the last chain on a new context D, submit, release D without an explicit wait,
    then read the output through the device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .ops.lifecycle import (
    COPIED_SENTINEL,
    OUTPUT_SENTINEL,
    PHASES,
    PRODUCT_SENTINEL,
    ContextLifecycleParams,
)

__all__ = [
    "CommandContext",
    "CommandDevice",
    "SegmentBuffers",
    "record_segment",
    "run_lifecycle",
    "run_phases",
]


@runtime_checkable
class CommandContext(Protocol):
    """One recording context: work is recorded, then submitted, then waited on."""

    def gemm(self, a: Any, b: Any, out: Any, m: int, n: int, k: int) -> None:
        """Record out[m, n] = a[m, k] · b[n, k]ᵀ."""

    def copy(self, src: Any, dst: Any, count: int) -> None:
        """Record a buffer-to-buffer copy of ``count`` elements."""

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        """Record dst[t, j] = silu(src[t, j]) · src[t, intermediate + j]."""

    def submit(self) -> None:
        """Submit everything recorded since the last submission."""

    def wait(self) -> None:
        """Block until the submitted work completes; raise with the driver's error if it failed."""

    def release(self) -> None:
        """Drop the context without an explicit wait (the driver flushes what it holds)."""


@runtime_checkable
class CommandDevice(Protocol):
    """The device behind the contexts: owns buffers and reads them back.

    A device may also expose ``input_storage`` and ``output_storage`` attributes (short dtype
    names read off its real buffers), which the report records instead of the request, and a
    one-line ``detail`` of what it ran on.
    """

    def new_context(self) -> CommandContext:
        """A fresh recording context."""

    def upload(self, host: npt.NDArray[np.float32]) -> Any:
        """A device buffer holding ``host`` (converted to the storage precision)."""

    def filled(self, count: int, value: float) -> Any:
        """A device buffer of ``count`` elements, each ``value``."""

    def read(self, buffer: Any) -> npt.NDArray[np.float32]:
        """The buffer's contents as float32 host values (after any pending work completes)."""


class SegmentBuffers:
    """The device buffers of one recorded chain."""

    def __init__(
        self, device: CommandDevice, params: ContextLifecycleParams, a: Any, b: Any
    ) -> None:
        width = 2 * params.intermediate
        self.a = device.upload(a)
        self.b = device.upload(b)
        self.product = device.filled(params.tokens * width, PRODUCT_SENTINEL)
        self.copied = device.filled(params.tokens * width, COPIED_SENTINEL)
        self.output = device.filled(params.tokens * params.intermediate, OUTPUT_SENTINEL)


def record_segment(
    device: CommandDevice,
    context: CommandContext,
    params: ContextLifecycleParams,
    inputs: dict[str, npt.NDArray[np.float32]],
    phase: int,
) -> SegmentBuffers:
    """Upload one phase's inputs and record gemm -> copy -> silu-mul on ``context``."""
    width = 2 * params.intermediate
    buffers = SegmentBuffers(device, params, inputs[f"a{phase}"], inputs[f"b{phase}"])
    context.gemm(buffers.a, buffers.b, buffers.product, params.tokens, width, params.k)
    context.copy(buffers.product, buffers.copied, params.tokens * width)
    context.silu_mul(buffers.copied, buffers.output, params.tokens, params.intermediate)
    return buffers


def run_phases(
    device: CommandDevice, record: Callable[[CommandContext, int], Any]
) -> npt.NDArray[np.float32]:
    """Run the four phases in the contract's order; return outputs stacked [4, n].

    ``record(context, phase)`` records one phase's chain on ``context`` and returns the
    buffer to read back; this function owns only the submission, wait, release and read
    order, so every recorder (the lifecycle's context methods here, an op's raw launch in
    :mod:`diffcheck.gpu_plan`) runs exactly the same phases.
    """
    outputs: list[npt.NDArray[np.float32]] = [np.empty(0, np.float32)] * len(PHASES)

    shared = device.new_context()
    initial = record(shared, 0)
    shared.submit()
    shared.wait()
    outputs[0] = device.read(initial)

    reused = record(shared, 1)
    shared.submit()

    peer = device.new_context()
    independent = record(peer, 2)
    peer.submit()
    peer.wait()
    shared.wait()
    outputs[1] = device.read(reused)
    outputs[2] = device.read(independent)

    dropped = device.new_context()
    flushed = record(dropped, 3)
    dropped.submit()
    dropped.release()
    del dropped
    outputs[3] = device.read(flushed)

    return np.stack([np.asarray(o, dtype=np.float32).reshape(-1) for o in outputs])


def run_lifecycle(
    device: CommandDevice,
    params: ContextLifecycleParams,
    inputs: dict[str, npt.NDArray[np.float32]],
) -> npt.NDArray[np.float32]:
    """The gemm -> copy -> silu-mul chain under the four phases; outputs stacked [4, tokens·intermediate]."""

    def record(context: CommandContext, phase: int) -> Any:
        return record_segment(device, context, params, inputs, phase).output

    return run_phases(device, record)
