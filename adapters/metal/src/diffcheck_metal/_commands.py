"""Metal command contexts: the :mod:`diffcheck.programs` protocols over MTLCommandBuffers.

A :class:`MetalCommandContext` records compute and blit encoders into one command buffer;
``submit`` commits it, ``wait`` waits for everything the context committed and checks each
buffer's status and error (checked completion), and ``release`` commits whatever is still
recorded without waiting, as a dropped context does. ``read`` on the device first waits for
(and checks) every committed command buffer, so shared-storage contents are never read
while the GPU may still write them.

Not run on the development machine (see :mod:`diffcheck_metal._runtime`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from diffcheck.gpu_plan import (
    MAX_WORKGROUPS_PER_DIMENSION,
    Launch,
    plan_gemm,
    plan_silu_mul,
)

from ._runtime import MetalExecutionError, MetalRuntime, check_completed

__all__ = ["MetalCommandContext", "MetalCommandDevice"]

_F32 = 4


class MetalCommandDevice:
    """Shared-storage buffers and contexts on one Metal device (the ``CommandDevice``).

    Parameters
    ----------
    runtime
        The device, queue and pipelines.
    max_workgroups_per_dimension
        The grid limit launches are split under. Metal's own limit is far larger; the
        WebGPU value is the default so both backends launch the same grids.
    """

    #: The storage the buffers really hold (read by diffcheck for the report).
    input_storage = "f32"
    output_storage = "f32"

    def __init__(
        self, runtime: MetalRuntime, *, max_workgroups_per_dimension: int | None = None
    ) -> None:
        self.runtime = runtime
        self.limit = max_workgroups_per_dimension or MAX_WORKGROUPS_PER_DIMENSION
        # Committed command buffers not yet waited on, from every context of this device.
        self.in_flight: list[Any] = []

    def new_context(self) -> MetalCommandContext:
        """A fresh context; its command buffer is created on first use."""
        return MetalCommandContext(self)

    def _buffer(self, data: npt.NDArray[Any], label: str) -> Any:
        metal = self.runtime.metal
        with self.runtime.pool():
            buffer = self.runtime.device.newBufferWithBytes_length_options_(
                data.tobytes(), data.nbytes, metal.MTLResourceStorageModeShared
            )
        if buffer is None:
            raise MetalExecutionError(
                f"Metal could not allocate a {label} buffer of {data.nbytes} bytes"
            )
        return buffer

    def upload(self, host: npt.NDArray[np.float32]) -> Any:
        """A shared-storage buffer holding ``host`` as f32."""
        return self._buffer(np.ascontiguousarray(host, dtype=np.float32).reshape(-1), "input")

    def upload_words(self, words: npt.NDArray[np.uint32]) -> Any:
        """A shared-storage buffer of u32 words (kernel tables)."""
        return self._buffer(np.ascontiguousarray(words, dtype=np.uint32).reshape(-1), "table")

    def filled(self, count: int, value: float) -> Any:
        """A shared-storage buffer of ``count`` f32 elements, each ``value``."""
        return self._buffer(np.full(count, value, dtype=np.float32), "sentinel")

    def settle(self) -> None:
        """Wait for every committed command buffer and check each one's completion."""
        while self.in_flight:
            command_buffer = self.in_flight.pop(0)
            command_buffer.waitUntilCompleted()
            check_completed(command_buffer, "read back")

    def read(self, buffer: Any) -> npt.NDArray[np.float32]:
        """The buffer's f32 contents, once all committed work has completed without error."""
        self.settle()
        length = int(buffer.length())
        view = buffer.contents().as_buffer(length)
        return np.frombuffer(view, dtype=np.float32).copy()


class MetalCommandContext:
    """One command buffer's worth of recorded work (the ``CommandContext``)."""

    def __init__(self, device: MetalCommandDevice) -> None:
        self._device = device
        self._runtime = device.runtime
        self._recording: Any = None
        self._committed: list[Any] = []
        self._released = False

    def _command_buffer(self) -> Any:
        if self._released:
            raise RuntimeError("this Metal command context was released; create a new one")
        if self._recording is None:
            self._recording = self._runtime.queue.commandBuffer()
            if self._recording is None:
                raise MetalExecutionError("Metal command queue gave no command buffer")
        return self._recording

    def dispatch(self, launch: Launch, buffers: tuple[Any, ...]) -> None:
        """Record one compute encoder of ``launch``: ``buffers`` at indices 0.., then its params."""
        pipeline = self._runtime.pipeline(launch)
        params = launch.params_bytes()
        with self._runtime.pool():
            encoder = self._command_buffer().computeCommandEncoder()
            encoder.setComputePipelineState_(pipeline)
            for index, buffer in enumerate(buffers):
                encoder.setBuffer_offset_atIndex_(buffer, 0, index)
            # The parameter block follows the buffers, as in each kernel's signature.
            encoder.setBytes_length_atIndex_(params, len(params), len(buffers))
            encoder.dispatchThreadgroups_threadsPerThreadgroup_(
                launch.grid.as_tuple(), (launch.threads[0], launch.threads[1], 1)
            )
            encoder.endEncoding()

    def gemm(self, a: Any, b: Any, out: Any, m: int, n: int, k: int) -> None:
        """Record out[m, n] = a[m, k] · b[n, k]ᵀ (``gemv_f32`` when m == 1, else ``gemm_f32_v2``)."""
        self.dispatch(plan_gemm(m, n, k, limit=self._device.limit), (a, b, out))

    def copy(self, src: Any, dst: Any, count: int) -> None:
        """Record a blit copy of ``count`` f32 elements."""
        with self._runtime.pool():
            blit = self._command_buffer().blitCommandEncoder()
            blit.copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size_(
                src, 0, dst, 0, count * _F32
            )
            blit.endEncoding()

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        """Record dst[t, j] = silu(src[t, j]) · src[t, intermediate + j]."""
        self.dispatch(plan_silu_mul(tokens, intermediate, limit=self._device.limit), (src, dst))

    def _commit(self) -> None:
        command_buffer, self._recording = self._recording, None
        command_buffer.commit()
        self._committed.append(command_buffer)
        self._device.in_flight.append(command_buffer)

    def submit(self) -> None:
        """Commit the recorded command buffer; the next recording starts a new one."""
        self._command_buffer()
        self._commit()

    def wait(self) -> None:
        """Wait for this context's committed buffers; raise unless each completed without error."""
        if self._released:
            raise RuntimeError("this Metal command context was released; create a new one")
        for command_buffer in self._committed:
            command_buffer.waitUntilCompleted()
            check_completed(command_buffer, "wait")
            self._device.in_flight = [c for c in self._device.in_flight if c is not command_buffer]
        self._committed.clear()

    def release(self) -> None:
        """Drop the context: commit anything still recorded, without waiting (no status is checked here)."""
        if self._recording is not None and not self._released:
            self._commit()
        self._released = True
        self._committed.clear()
