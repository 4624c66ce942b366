"""The thin PyObjC layer's shared half: the Metal device, its command queue, compiled pipelines, checks.

Not run on the development machine: this was written on Linux, where neither Metal nor
PyObjC exists, against the PyObjC Metal bindings' documented calling conventions
(selectors with ``_`` for ``:``, NSError out-parameters returned as the second element of a
tuple when passed as None, MTLSize accepted as a 3-tuple, shared buffers read through
``contents().as_buffer(length)``). The Linux tests run it only against a NumPy stand-in of
those bindings (tests/fake_metal.py); what they cannot show is that the MSL compiles and
that the real driver behaves as assumed. The launch arithmetic (kernel choice, grids,
parameter blocks, labels) is shared with the wgpu adapter through :mod:`diffcheck.gpu_plan`
and exercised on real hardware there.

PyObjC is imported lazily, inside :func:`open_runtime`, never at module import.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from diffcheck.gpu_plan import Launch, check_kernel_source

from ._kernels import source_of

__all__ = [
    "MTL_COMMAND_BUFFER_STATUS_COMPLETED",
    "MetalExecutionError",
    "MetalRuntime",
    "NoDeviceError",
    "check_completed",
    "open_runtime",
]

#: ``MTLCommandBufferStatusCompleted``: the only status that lets data be read.
MTL_COMMAND_BUFFER_STATUS_COMPLETED: Final = 4
_STATUS_NAMES: Final = {
    0: "NotEnqueued",
    1: "Enqueued",
    2: "Committed",
    3: "Scheduled",
    4: "Completed",
    5: "Error",
}


class MetalExecutionError(RuntimeError):
    """A Metal compile, allocation or command buffer failed; the message carries the driver's text."""


class NoDeviceError(RuntimeError):
    """``MTLCreateSystemDefaultDevice()`` returned no device."""


def _describe(error: Any) -> str:
    """An NSError's localizedDescription, or ``"no error object"``."""
    if error is None:
        return "no error object"
    return str(error.localizedDescription())


def check_completed(command_buffer: Any, what: str) -> None:
    """Raise unless a waited command buffer completed without error (checked completion).

    Call after ``waitUntilCompleted()``: ``status()`` must be Completed (4) and ``error()``
    None; otherwise the error's localizedDescription is raised.

    Raises
    ------
    MetalExecutionError
        Naming ``what``, the status and the driver's description.
    """
    status = int(command_buffer.status())
    error = command_buffer.error()
    if status != MTL_COMMAND_BUFFER_STATUS_COMPLETED or error is not None:
        name = _STATUS_NAMES.get(status, str(status))
        raise MetalExecutionError(f"Metal {what}: command buffer status {name}: {_describe(error)}")


@dataclass
class MetalRuntime:
    """The system default Metal device, one command queue, and pipelines compiled on first use."""

    metal: Any
    objc: Any
    device: Any
    queue: Any
    #: Compiled pipelines by kernel name (names are unique: diffcheck.launch's registry).
    _pipelines: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.device.name())

    @property
    def line(self) -> str:
        """The probe's detail line."""
        return f"{self.name} via Metal, PyObjC {self.objc.__version__}"

    @contextmanager
    def pool(self) -> Iterator[None]:
        """An autorelease pool, so temporary Objective-C objects do not pile up between calls."""
        with self.objc.autorelease_pool():
            yield

    def pipeline(self, launch: Launch) -> Any:
        """The compute pipeline state of ``launch.kernel``, compiled on first use.

        Fast math is off: its approximate exp, division and square root would move results
        by more than the differential check allows.
        """
        pipeline = self._pipelines.get(launch.kernel.name)
        if pipeline is None:
            try:
                own, filename = source_of(launch.kernel)
            except KeyError as missing:
                raise MetalExecutionError(missing.args[0]) from None
            source, entry = own.text, own.entry
            check_kernel_source(launch.kernel, source, origin=filename)
            with self.pool():
                options = self.metal.MTLCompileOptions.alloc().init()
                options.setFastMathEnabled_(False)
                library, error = self.device.newLibraryWithSource_options_error_(
                    source, options, None
                )
                if library is None:
                    raise MetalExecutionError(
                        f"Metal could not compile {filename}: {_describe(error)}"
                    )
                function = library.newFunctionWithName_(entry)
                if function is None:
                    raise MetalExecutionError(f"{filename} has no kernel function {entry!r}")
                pipeline, error = self.device.newComputePipelineStateWithFunction_error_(
                    function, None
                )
                if pipeline is None:
                    raise MetalExecutionError(f"Metal could not build {entry}: {_describe(error)}")
            self._pipelines[launch.kernel.name] = pipeline
        threads = launch.threads[0] * launch.threads[1]
        if int(pipeline.maxTotalThreadsPerThreadgroup()) < threads:
            raise MetalExecutionError(
                f"{launch.kernel} needs {threads} threads per threadgroup, but this device allows "
                f"{pipeline.maxTotalThreadsPerThreadgroup()} for it"
            )
        return pipeline


@functools.cache
def open_runtime() -> MetalRuntime:
    """The process-wide runtime on the system default device (macOS with PyObjC only).

    A failure is not cached, so a later probe retries.

    Raises
    ------
    ImportError
        When PyObjC's Metal bindings are not installed.
    NoDeviceError
        When there is no Metal device.
    """
    import Metal
    import objc

    device = Metal.MTLCreateSystemDefaultDevice()
    if device is None:
        raise NoDeviceError("no Metal device is available")
    queue = device.newCommandQueue()
    if queue is None:
        raise MetalExecutionError(f"Metal device {device.name()} gave no command queue")
    return MetalRuntime(Metal, objc, device, queue)
