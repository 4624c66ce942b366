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

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from diffcheck.gpu_plan import Launch, plan_gemm, plan_silu_mul
from diffcheck.precision import PrecisionName

from ._runtime import WgpuRuntime, checked

__all__ = ["WgpuCommandContext", "WgpuCommandDevice"]

_STORAGE_DTYPES: Final[dict[str, np.dtype[Any]]] = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
}
# WebGPU buffer sizes and copy sizes are multiples of 4 bytes; f16 buffers are padded to it.
_ALIGN: Final = 4


class WgpuCommandDevice:
    """Buffers and contexts on one wgpu device (the :class:`~diffcheck.programs.CommandDevice`).

    Parameters
    ----------
    runtime
        The shared adapter, device and pipelines.
    max_workgroups_per_dimension
        The grid limit launches are split under; defaults to the device's limit. A smaller
        value exercises grid splitting with small shapes (tests).
    storage
        What the data buffers hold: ``"f32"``, or ``"f16"`` on a device with the
        ``shader-f16`` feature (kernels then load f16, compute in f32, store f16).

    Raises
    ------
    ValueError
        For a limit outside the device's, or f16 storage on a device without ``shader-f16``.
    """

    def __init__(
        self,
        runtime: WgpuRuntime,
        *,
        max_workgroups_per_dimension: int | None = None,
        storage: PrecisionName = "f32",
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
        if storage not in _STORAGE_DTYPES:
            raise ValueError(f"storage {storage!r}, but wgpu kernels store f32 or f16")
        if storage == "f16" and not runtime.has_f16:
            raise ValueError(f"f16 storage on wgpu, but {runtime.f16_refusal}; use f32")
        self.runtime = runtime
        self.limit = limit
        self.storage: PrecisionName = storage
        #: The storage the buffers really hold (read by diffcheck for the report).
        self.input_storage = self.output_storage = storage
        self._dtype: np.dtype[Any] = _STORAGE_DTYPES[storage]
        # Element counts of padded buffers, by buffer identity, so reads drop the padding.
        self._counts: dict[int, int] = {}

    def new_context(self) -> WgpuCommandContext:
        """A fresh context with its own command encoder."""
        return WgpuCommandContext(self)

    def _buffer(self, data: npt.NDArray[Any], label: str, count: int | None = None) -> Any:
        import wgpu

        padded = data
        if data.nbytes % _ALIGN:
            padded = np.concatenate(
                [data, np.zeros(-data.nbytes % _ALIGN // data.itemsize, data.dtype)]
            )
        if padded.nbytes > self.runtime.max_binding_bytes:
            raise ValueError(
                f"a {label} buffer of {padded.nbytes} bytes exceeds this device's storage binding "
                f"limit of {self.runtime.max_binding_bytes} bytes; use a smaller shape"
            )
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        with checked(f"create {label} buffer"):
            buffer = self.runtime.device.create_buffer_with_data(
                label=label, data=padded, usage=usage
            )
        self._counts[id(buffer)] = data.size
        return buffer

    def upload(self, host: npt.NDArray[np.float32]) -> Any:
        """A storage buffer holding ``host`` in the device's storage type (f16: rounded to nearest)."""
        flat = np.ascontiguousarray(host, dtype=np.float32).reshape(-1)
        return self._buffer(flat.astype(self._dtype), "input")

    def upload_words(self, words: npt.NDArray[np.uint32]) -> Any:
        """A storage buffer of u32 words (kernel tables), whatever the storage type."""
        return self._buffer(np.ascontiguousarray(words, dtype=np.uint32).reshape(-1), "table")

    def filled(self, count: int, value: float) -> Any:
        """A storage buffer of ``count`` elements, each ``value`` (the lifecycle's sentinels)."""
        return self._buffer(np.full(count, value, dtype=self._dtype), "sentinel")

    def element_bytes(self) -> int:
        """Bytes per stored element."""
        return int(self._dtype.itemsize)

    def read(self, buffer: Any) -> npt.NDArray[np.float32]:
        """The buffer's contents widened to f32, after all work submitted before the read."""
        with checked("read back"):
            data = self.runtime.device.queue.read_buffer(buffer)
        values = np.frombuffer(data, dtype=self._dtype)
        count = self._counts.get(id(buffer), values.size)
        widened: npt.NDArray[np.float32] = values[:count].astype(np.float32)
        return widened


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

    def dispatch(self, launch: Launch, buffers: tuple[Any, ...]) -> None:
        """Record one compute pass of ``launch`` with ``buffers`` bound in order, then its params."""
        import wgpu

        encoder = self._recording()
        pipeline = self._runtime.pipeline(launch.kernel, self._device.storage)
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
        self.dispatch(plan_gemm(m, n, k, limit=self._device.limit), (a, b, out))

    def copy(self, src: Any, dst: Any, count: int) -> None:
        """Record a buffer-to-buffer copy of ``count`` stored elements."""
        encoder = self._recording()
        size = count * self._device.element_bytes()
        with checked("record copy"):
            # Rounded up to WebGPU's copy alignment; the buffers are padded to match.
            encoder.copy_buffer_to_buffer(src, 0, dst, 0, size + -size % _ALIGN)

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        """Record dst[t, j] = silu(src[t, j]) · src[t, intermediate + j]."""
        self.dispatch(plan_silu_mul(tokens, intermediate, limit=self._device.limit), (src, dst))

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
