"""WebGPU command contexts: the :mod:`diffcheck.programs` protocols over wgpu command encoders.

A :class:`WgpuCommandContext` records compute passes and buffer copies into one command
encoder; ``submit`` finishes it, submits the command buffer to the device queue and starts
a new encoder. Which kernel runs and on what grid comes from :mod:`diffcheck.gpu_plan`; the
phase order of the lifecycle comes from :func:`diffcheck.programs.run_lifecycle`.

What WebGPU makes of the lifecycle's phases: a device has one in-order queue, so every
context submits to the same queue, and ``wait`` (of any context) waits for all work
submitted so far. ``read`` is itself a queue operation (a copy into a mappable buffer, then
a map), ordered after every earlier submission: a read never observes unfinished work. A
missing ``wait`` therefore cannot expose stale data on WebGPU; what it skips is the error
check at that point (``read`` checks too). Work recorded on a context but never submitted,
by contrast, never runs, and a released context's pending recording is dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from diffcheck.gpu_plan import Launch, plan_gemm, plan_rms_norm, plan_silu_mul

from ._runtime import WgpuRuntime, checked

__all__ = ["WgpuCommandContext", "WgpuCommandDevice"]

_F32 = 4


class WgpuCommandDevice:
    """Buffers and contexts on one wgpu device (the :class:`~diffcheck.programs.CommandDevice`).

    Parameters
    ----------
    runtime
        The shared adapter, device and pipelines.
    max_workgroups_per_dimension
        The grid limit launches are split under; defaults to the device's limit. A smaller
        value exercises grid splitting with small shapes (tests).
    """

    #: The storage the buffers really hold (read by diffcheck for the report).
    input_storage = "f32"
    output_storage = "f32"

    def __init__(
        self, runtime: WgpuRuntime, *, max_workgroups_per_dimension: int | None = None
    ) -> None:
        device_limit = runtime.max_workgroups_per_dimension
        limit = (
            device_limit if max_workgroups_per_dimension is None else max_workgroups_per_dimension
        )
        if not 1 <= limit <= device_limit:
            raise ValueError(
                f"max_workgroups_per_dimension={limit}, but it must be between 1 and the "
                f"device's limit {device_limit}"
            )
        self.runtime = runtime
        self.limit = limit

    def new_context(self) -> WgpuCommandContext:
        """A fresh context with its own command encoder."""
        return WgpuCommandContext(self)

    def _buffer(self, data: npt.NDArray[np.float32], label: str) -> Any:
        import wgpu

        if data.nbytes > self.runtime.max_binding_bytes:
            raise ValueError(
                f"a {label} buffer of {data.nbytes} bytes exceeds this device's storage binding "
                f"limit of {self.runtime.max_binding_bytes} bytes; use a smaller shape"
            )
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        with checked(f"create {label} buffer"):
            return self.runtime.device.create_buffer_with_data(label=label, data=data, usage=usage)

    def upload(self, host: npt.NDArray[np.float32]) -> Any:
        """A storage buffer holding ``host`` as f32."""
        return self._buffer(np.ascontiguousarray(host, dtype=np.float32).reshape(-1), "input")

    def filled(self, count: int, value: float) -> Any:
        """A storage buffer of ``count`` f32 elements, each ``value`` (the lifecycle's sentinels)."""
        return self._buffer(np.full(count, value, dtype=np.float32), "sentinel")

    def read(self, buffer: Any) -> npt.NDArray[np.float32]:
        """The buffer's f32 contents, after all work submitted before the read (queue order)."""
        with checked("read back"):
            data = self.runtime.device.queue.read_buffer(buffer)
        return np.frombuffer(data, dtype=np.float32).copy()


class WgpuCommandContext:
    """One command encoder's worth of recorded work (the :class:`~diffcheck.programs.CommandContext`)."""

    def __init__(self, device: WgpuCommandDevice) -> None:
        self._device = device
        self._runtime = device.runtime
        self._encoder: Any = None
        self._released = False
        # Bind groups and parameter buffers of work not yet known to be complete.
        self._in_flight: list[Any] = []

    def _recording(self) -> Any:
        if self._released:
            raise RuntimeError("this wgpu command context was released; create a new one")
        if self._encoder is None:
            with checked("create command encoder"):
                self._encoder = self._runtime.device.create_command_encoder(
                    label="diffcheck context"
                )
        return self._encoder

    def _dispatch(self, launch: Launch, buffers: tuple[Any, ...]) -> None:
        import wgpu

        encoder = self._recording()
        pipeline = self._runtime.pipeline(launch.kernel)
        device = self._runtime.device
        with checked(f"record {launch.kernel} pass"):
            params = device.create_buffer_with_data(
                label=f"{launch.kernel} params",
                data=launch.params_bytes(),
                usage=wgpu.BufferUsage.UNIFORM,
            )
            entries = [
                {"binding": slot, "resource": {"buffer": buffer, "offset": 0, "size": buffer.size}}
                for slot, buffer in enumerate((*buffers, params))
            ]
            bind_group = device.create_bind_group(
                layout=pipeline.get_bind_group_layout(0), entries=entries
            )
            compute = encoder.begin_compute_pass(label=str(launch.kernel))
            compute.set_pipeline(pipeline)
            compute.set_bind_group(0, bind_group)
            compute.dispatch_workgroups(*launch.grid.as_tuple())
            compute.end()
        self._in_flight += [params, bind_group]

    def gemm(self, a: Any, b: Any, out: Any, m: int, n: int, k: int) -> None:
        """Record out[m, n] = a[m, k] · b[n, k]ᵀ (GEMV when m == 1)."""
        self._dispatch(plan_gemm(m, n, k, limit=self._device.limit), (a, b, out))

    def copy(self, src: Any, dst: Any, count: int) -> None:
        """Record a buffer-to-buffer copy of ``count`` f32 elements."""
        encoder = self._recording()
        with checked("record copy"):
            encoder.copy_buffer_to_buffer(src, 0, dst, 0, count * _F32)

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        """Record dst[t, j] = silu(src[t, j]) · src[t, intermediate + j]."""
        self._dispatch(plan_silu_mul(tokens, intermediate, limit=self._device.limit), (src, dst))

    def rms_norm(self, x: Any, w: Any, out: Any, tokens: int, dim: int, eps: float) -> None:
        """Record out[t, :] = x[t, :] / sqrt(mean(x[t, :]²) + eps) · w."""
        self._dispatch(plan_rms_norm(tokens, dim, eps, limit=self._device.limit), (x, w, out))

    def submit(self) -> None:
        """Finish the encoder, submit its command buffer, and start a new encoder on next use."""
        encoder = self._recording()
        self._encoder = None
        with checked("queue submit"):
            self._runtime.device.queue.submit([encoder.finish()])

    def wait(self) -> None:
        """Block until the queue has completed all submitted work; raise on any reported error."""
        if self._released:
            raise RuntimeError("this wgpu command context was released; create a new one")
        with checked("wait for the queue"):
            self._runtime.wait_idle()
        self._in_flight.clear()

    def release(self) -> None:
        """Drop the context without waiting; recorded but unsubmitted work is discarded."""
        self._released = True
        self._encoder = None
        self._in_flight.clear()
