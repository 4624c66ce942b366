"""The compute/copy/compute lifecycle on MLX streams.

MLX has no command buffers: work is recorded lazily as array graphs, each op bound to the
stream that was current when it was built, and runs when evaluated. A command context is
therefore one ``mx.new_stream(device)``; recording builds the step's graph on that stream,
``submit`` hands it to the stream with ``mx.async_eval``, and ``wait`` synchronizes the
stream. MLX arrays are immutable, so a buffer is a handle whose array each step replaces.
:func:`diffcheck.programs.run_lifecycle` owns the phase order; nothing here decides it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from diffcheck.adapters import storage_name
from diffcheck.differ import to_host
from diffcheck.ops.silu_mul import silu_mul

if TYPE_CHECKING:
    import mlx.core as mx

__all__ = ["MlxBuffer", "MlxCommandContext", "MlxCommandDevice", "host_float32"]


class MlxBuffer:
    """A mutable handle on an immutable MLX array; each recorded step replaces ``array``."""

    __slots__ = ("array",)

    def __init__(self, array: mx.array) -> None:
        self.array = array


def host_float32(array: mx.array, device: mx.Device) -> npt.NDArray[np.float32]:
    """The float32 host values of ``array``, widened on ``device`` (exact for f16 and bf16).

    NumPy has no bfloat16 and MLX's buffer protocol and DLPack refuse it, so the widening
    happens in MLX; the host array then shares MLX's memory where it can (DLPack on the CPU).
    """
    import mlx.core as mx

    with mx.stream(device):
        wide = array.astype(mx.float32)
    mx.eval(wide)
    return np.asarray(to_host(wide), dtype=np.float32)


class MlxCommandContext:
    """One MLX stream that records gemm -> copy -> silu-mul and submits with ``async_eval``.

    Parameters
    ----------
    stream
        The stream every recorded step is bound to (a new one per context).
    """

    def __init__(self, stream: mx.Stream) -> None:
        self.stream: mx.Stream | None = stream
        self._recorded: list[mx.array] = []
        self._submitted: list[mx.array] = []

    def _current(self) -> mx.Stream:
        if self.stream is None:
            raise RuntimeError("this MLX command context was released; record on a new context")
        return self.stream

    def _record(self, buffer: MlxBuffer, array: mx.array) -> None:
        buffer.array = array
        self._recorded.append(array)

    def gemm(self, a: MlxBuffer, b: MlxBuffer, out: MlxBuffer, m: int, n: int, k: int) -> None:
        """Record out[m, n] = a[m, k] · b[n, k]ᵀ, accumulated in float32, stored as ``out``."""
        import mlx.core as mx

        with mx.stream(self._current()):
            left = mx.reshape(a.array, (m, k)).astype(mx.float32)
            right = mx.reshape(b.array, (n, k)).astype(mx.float32)
            product = mx.matmul(left, mx.transpose(right))
            self._record(out, mx.reshape(product, (m * n,)).astype(out.array.dtype))

    def copy(self, src: MlxBuffer, dst: MlxBuffer, count: int) -> None:
        """Record a copy of the first ``count`` elements of ``src`` over those of ``dst``."""
        import mlx.core as mx

        with mx.stream(self._current()):
            head = mx.reshape(src.array, (-1,))[:count].astype(dst.array.dtype)
            # A real copy node on this stream, also when the slice is the whole array.
            self._record(dst, mx.concatenate([head, dst.array[count:]]))

    def silu_mul(self, src: MlxBuffer, dst: MlxBuffer, tokens: int, intermediate: int) -> None:
        """Record dst[t, j] = silu(src[t, j]) · src[t, intermediate + j], in float32."""
        import mlx.core as mx

        with mx.stream(self._current()):
            rows = mx.reshape(src.array, (tokens, 2 * intermediate)).astype(mx.float32)
            out = silu_mul(mx, rows, tokens, intermediate)
            self._record(dst, mx.reshape(out, (tokens * intermediate,)).astype(dst.array.dtype))

    def submit(self) -> None:
        """Hand everything recorded since the last submission to the stream (no wait)."""
        import mlx.core as mx

        self._current()
        if self._recorded:
            # mlx's stubs leave async_eval unannotated.
            mx.async_eval(*self._recorded)  # type: ignore[no-untyped-call]
        self._submitted.extend(self._recorded)
        self._recorded.clear()

    def wait(self) -> None:
        """Block until this stream's submitted work completes; MLX raises a failure here."""
        import mlx.core as mx

        mx.synchronize(self._current())
        if self._submitted:
            mx.eval(*self._submitted)
        self._submitted.clear()

    def release(self) -> None:
        """Drop the stream object without waiting; the arrays keep their pending work."""
        self.stream = None
        self._recorded.clear()
        self._submitted.clear()


class MlxCommandDevice:
    """MLX buffers on one device in one storage dtype, with a new stream per context.

    Parameters
    ----------
    device
        The MLX device (``mx.Device``) the streams and buffers belong to.
    storage
        The MLX dtype buffers are stored in (float32, float16 or bfloat16).

    Attributes
    ----------
    input_storage, output_storage
        Storage names read from the uploaded and read-back arrays (empty until then).
    streams
        The text of every stream created, in order (strings, so no stream is kept alive).
    """

    def __init__(self, device: mx.Device, storage: mx.Dtype) -> None:
        self.device = device
        self.storage = storage
        self.input_storage = ""
        self.output_storage = ""
        self.streams: list[str] = []

    @property
    def detail(self) -> str:
        """The streams the lifecycle created (the report's execution detail)."""
        return f"streams: {', '.join(self.streams)}"

    def new_context(self) -> MlxCommandContext:
        """A context on a new stream of this device."""
        import mlx.core as mx

        stream = mx.new_stream(self.device)
        self.streams.append(str(stream))
        return MlxCommandContext(stream)

    def upload(self, host: npt.NDArray[np.float32]) -> MlxBuffer:
        """A buffer holding ``host`` in the storage dtype, materialized now (like an upload)."""
        import mlx.core as mx

        with mx.stream(self.device):
            array = mx.array(np.ascontiguousarray(host, dtype=np.float32)).astype(self.storage)
        mx.eval(array)
        self.input_storage = storage_name(array.dtype)
        return MlxBuffer(array)

    def filled(self, count: int, value: float) -> MlxBuffer:
        """A buffer of ``count`` elements, each ``value`` (the lifecycle's sentinels)."""
        import mlx.core as mx

        with mx.stream(self.device):
            array = mx.full((count,), value, dtype=self.storage)
        mx.eval(array)
        return MlxBuffer(array)

    def read(self, buffer: MlxBuffer) -> npt.NDArray[np.float32]:
        """The buffer's float32 host values, after the work that produced them completes."""
        self.output_storage = storage_name(buffer.array.dtype)
        return host_float32(buffer.array, self.device)
