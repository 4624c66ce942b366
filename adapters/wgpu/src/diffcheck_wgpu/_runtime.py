"""The process-wide wgpu runtime: adapter and device (one per backend variant), pipelines, checks.

wgpu is imported here lazily, inside :func:`open_runtime`, never at module import.

Checked completion in wgpu-py 0.32
----------------------------------
WebGPU's ``pushErrorScope``/``popErrorScope`` are not exposed by wgpu-py 0.32 (the device
has no ``push_error_scope``). Instead wgpu-py captures the driver's error callback around
every native call and raises ``GPUValidationError`` / ``GPUOutOfMemoryError`` /
``GPUInternalError`` from the call that caused it, with the driver's message. Pushing scopes
through the raw C API would move those errors to the pop; an encoder error would then no
longer stop ``finish()``, and wgpu-native treats any validation error inside
``wgpuQueueSubmit`` as fatal (it aborts the process, observed with wgpu-native in wgpu-py
0.32.0). So diffcheck keeps wgpu-py's synchronous errors and adds what they miss: errors and device
loss that arrive outside any call, which wgpu-py only logs (``logging.getLogger("wgpu")`` at
ERROR). :class:`ErrorLog` collects those, and :func:`checked` turns both kinds into
:class:`WgpuExecutionError` before any data is read.

Waiting for the queue: ``GPUQueue.on_submitted_work_done_sync`` raises ``TypeError`` on
wgpu-py 0.32.0 (a callback declared with the wrong arity: pygfx/wgpu-py#834), so
:meth:`WgpuRuntime.wait_idle` uses a fence built from public API instead: copy four bytes
into a mappable buffer after the submitted work and map it, which completes only after
every earlier submission on the (in-order) queue.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Final

from diffcheck.gpu_plan import Kernel, check_kernel_source
from diffcheck.precision import PrecisionName

from ._kernels import source_of

__all__ = [
    "BACKEND_TYPES",
    "SHADER_F16",
    "ErrorLog",
    "NoAdapterError",
    "WgpuExecutionError",
    "WgpuRuntime",
    "adapter_line",
    "checked",
    "f16_source",
    "open_runtime",
]

#: Device suffixes (``wgpu:<suffix>``) and the wgpu backend type each selects.
BACKEND_TYPES: Final = {"vulkan": "Vulkan", "metal": "Metal", "d3d12": "D3D12", "opengl": "OpenGL"}
#: Adapter types in order of preference when a backend type offers several adapters.
_ADAPTER_PREFERENCE: Final = ("DiscreteGPU", "IntegratedGPU", "VirtualGPU", "CPU")
_FENCE_BYTES: Final = 4
#: The WebGPU feature that allows f16 in shaders (storage buffers included).
SHADER_F16: Final = "shader-f16"
# Every kernel declares its storage type on this line; the f16 build replaces it.
_STORAGE_F32: Final = "alias S = f32;"


def f16_source(source: str, *, origin: str) -> str:
    """The f16-storage build of a WGSL kernel: ``enable f16;`` and ``alias S = f16;``.

    Arithmetic stays f32: the kernels widen every load with ``f32(...)`` and narrow only the
    final store with ``S(...)``.

    Raises
    ------
    ValueError
        When the source does not declare its storage type as ``alias S = f32;``.
    """
    if _STORAGE_F32 not in source:
        raise ValueError(f"{origin} has no '{_STORAGE_F32}' line, so it has no f16 build")
    return "enable f16;\n" + source.replace(_STORAGE_F32, "alias S = f16;")


class WgpuExecutionError(RuntimeError):
    """A wgpu call, submission or completion failed; the message carries the driver's text."""


class NoAdapterError(RuntimeError):
    """wgpu found no adapter for the requested backend (the probe's ``unavailable`` reason)."""


class ErrorLog(logging.Handler):
    """Collects what wgpu-py logs at ERROR level: uncaptured driver errors and device loss.

    wgpu-py repeats an identical message at most ten times and then hides it; a run that
    keeps producing the same asynchronous error therefore still fails on its first report.
    """

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self._messages: list[str] = []
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._guard:
            self._messages.append(record.getMessage())

    def take(self) -> list[str]:
        """The messages logged since the last call, oldest first."""
        with self._guard:
            messages, self._messages = self._messages, []
        return messages


_ERROR_LOG = ErrorLog()


@contextmanager
def checked(what: str) -> Iterator[None]:
    """Run wgpu calls; raise :class:`WgpuExecutionError` for any error they or the driver report.

    Parameters
    ----------
    what
        The step, for the message (``"queue submit"``, ``"read back"``).
    """
    import wgpu

    try:
        yield
    except wgpu.GPUError as error:
        message = f"wgpu {what} failed: {type(error).__name__}: {error}"
        # Drain what was logged meanwhile, so it is reported here and not by the next check.
        logged = _ERROR_LOG.take()
        raise WgpuExecutionError(" | ".join([message, *logged])) from error
    logged = _ERROR_LOG.take()
    if logged:
        raise WgpuExecutionError(f"wgpu {what}: the driver reported: " + " | ".join(logged))


def adapter_line(info: Any, version: str) -> str:
    """One line naming what runs the kernels, e.g. ``llvmpipe (...) via OpenGL (CPU adapter), wgpu 0.32.0``."""
    return f"{info['device']} via {info['backend_type']} ({info['adapter_type']} adapter), wgpu {version}"


@dataclass
class WgpuRuntime:
    """An adapter, its device and the compiled pipelines, shared by every command device."""

    adapter: Any
    device: Any
    #: The probe's detail line.
    line: str
    #: WGSL texts used instead of the kernels' own or shipped ones, by kernel name (tests
    #: compile faulty variants).
    sources: Mapping[str, str] = field(default_factory=dict)
    _pipelines: dict[tuple[str, PrecisionName], Any] = field(default_factory=dict)
    _fence: tuple[Any, Any] | None = None

    def with_sources(self, sources: Mapping[str, str]) -> WgpuRuntime:
        """This adapter and device with some kernels (by name) compiled from ``sources`` instead."""
        return replace(self, sources=dict(sources), _pipelines={}, _fence=None)

    @property
    def has_f16(self) -> bool:
        """Whether the device was created with the ``shader-f16`` feature."""
        return SHADER_F16 in self.device.features

    @property
    def f16_refusal(self) -> str:
        """Why this device does not run f16 storage (meaningful when ``has_f16`` is False)."""
        return f"adapter {self.adapter.info['device']!r} lacks the {SHADER_F16} feature"

    @property
    def where(self) -> str:
        """``<device name> via <backend type>``, for execution paths."""
        info = self.adapter.info
        return f"{info['device']} via {info['backend_type']}"

    @property
    def max_workgroups_per_dimension(self) -> int:
        return int(self.device.limits["max-compute-workgroups-per-dimension"])

    @property
    def max_binding_bytes(self) -> int:
        return int(self.device.limits["max-storage-buffer-binding-size"])

    def pipeline(self, kernel: Kernel, storage: PrecisionName = "f32") -> Any:
        """The compute pipeline of ``kernel`` for ``storage`` (f32 or f16), compiled on first use."""
        pipeline = self._pipelines.get((kernel.name, storage))
        if pipeline is None:
            try:
                own, origin = source_of(kernel)
            except KeyError as missing:
                raise WgpuExecutionError(missing.args[0]) from None
            source, entry = self.sources.get(kernel.name) or own.text, own.entry
            check_kernel_source(kernel, source, origin=origin)
            if storage == "f16":
                source = f16_source(source, origin=origin)
            with checked(f"compile {origin} ({storage} storage)"):
                module = self.device.create_shader_module(label=origin, code=source)
                pipeline = self.device.create_compute_pipeline(
                    label=entry, layout="auto", compute={"module": module, "entry_point": entry}
                )
            self._pipelines[(kernel.name, storage)] = pipeline
        return pipeline

    def wait_idle(self) -> None:
        """Block until every submission so far has completed (see the module notes)."""
        import wgpu

        if self._fence is None:
            usage = wgpu.BufferUsage
            source = self.device.create_buffer(size=_FENCE_BYTES, usage=usage.COPY_SRC)
            target = self.device.create_buffer(
                size=_FENCE_BYTES, usage=usage.COPY_DST | usage.MAP_READ
            )
            self._fence = (source, target)
        source, target = self._fence
        encoder = self.device.create_command_encoder(label="diffcheck fence")
        encoder.copy_buffer_to_buffer(source, 0, target, 0, _FENCE_BYTES)
        self.device.queue.submit([encoder.finish()])
        target.map_sync(wgpu.MapMode.READ)
        target.unmap()


def _select_adapter(wgpu: Any, backend: str | None) -> Any:
    if backend is None:
        try:
            return wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except RuntimeError as error:
            raise NoAdapterError(f"wgpu found no GPU adapter: {error}") from error
    wanted = BACKEND_TYPES[backend]
    adapters = list(wgpu.gpu.enumerate_adapters_sync())
    matching = [a for a in adapters if a.info["backend_type"] == wanted]
    if not matching:
        found = ", ".join(a.summary for a in adapters) or "none"
        raise NoAdapterError(f"wgpu found no {wanted} adapter (adapters found: {found})")

    def rank(adapter: Any) -> int:
        kind = adapter.info["adapter_type"]
        return (
            _ADAPTER_PREFERENCE.index(kind)
            if kind in _ADAPTER_PREFERENCE
            else len(_ADAPTER_PREFERENCE)
        )

    return min(matching, key=rank)


@functools.cache
def open_runtime(backend: str | None = None) -> WgpuRuntime:
    """The runtime for ``backend`` (a :data:`BACKEND_TYPES` key, or None for the default adapter).

    Created once per process and backend; a failure is not cached, so a later probe retries.

    Raises
    ------
    ImportError
        When wgpu is not installed.
    NoAdapterError
        When no adapter matches.
    """
    import wgpu

    adapter = _select_adapter(wgpu, backend)
    if adapter is None:  # older wgpu-py returned None instead of raising
        raise NoAdapterError("wgpu found no GPU adapter")
    # Ask for the adapter's own buffer limits: the defaults (128 MiB bindings) are lower
    # than what most adapters allow, and large shapes would fail for no hardware reason.
    limits = {
        name: adapter.limits[name]
        for name in ("max-storage-buffer-binding-size", "max-buffer-size")
        if name in adapter.limits
    }
    # f16 storage needs shader-f16 on the device; ask for it wherever the adapter offers it.
    features = [SHADER_F16] if SHADER_F16 in adapter.features else []
    with checked("request device"):
        device = adapter.request_device_sync(
            label="diffcheck", required_features=features, required_limits=limits
        )
    logger = logging.getLogger("wgpu")
    if _ERROR_LOG not in logger.handlers:
        logger.addHandler(_ERROR_LOG)
    return WgpuRuntime(adapter, device, adapter_line(adapter.info, wgpu.__version__))
