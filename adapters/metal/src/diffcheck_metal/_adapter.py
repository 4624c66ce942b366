"""The ``metal`` adapter: hand-written MSL kernels and command buffers through PyObjC (macOS only)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

from diffcheck.adapters import Probe
from diffcheck.adapters.raw_kernels import RawKernelAdapter
from diffcheck.ops import Op, OpParams
from diffcheck.precision import PrecisionName

from ._commands import MetalCommandDevice
from ._kernels import COPY_NAME, KERNEL_NAMES
from ._runtime import MetalRuntime, NoDeviceError, open_runtime

__all__ = ["PYOBJC_INSTALL", "MetalAdapter"]

#: What to run when PyObjC's Metal bindings are missing.
PYOBJC_INSTALL = "pip install pyobjc-framework-Metal"


class MetalAdapter(RawKernelAdapter):
    """Metal through PyObjC: MSL compute kernels on f32 shared-storage buffers.

    The system default device only (``metal``); unavailable off macOS, without PyObjC's
    Metal bindings, or without a Metal device, each with its own reason.
    """

    name = "metal"
    description = "Metal (PyObjC): MSL compute kernels, command buffers and blits (macOS)"
    namespace_label = "metal"
    kernel_language = "MSL"
    shading_language = "msl"
    kernel_names = KERNEL_NAMES
    copy_name = COPY_NAME
    # The contract's label for the lifecycle ("gemv_f32 -> blit -> silu_mul_split_f32 (legacy
    # MetalContext)"); the command-buffer sequence is the one the reference tool's context ran.
    lifecycle_suffix = "(legacy MetalContext)"
    precision_hint = "its kernels store f32 only (the contract's Metal precision)"
    notes = (
        "f32 shared-storage buffers only (the contract's Metal precision)",
        "no float64: Metal GPUs have no 64-bit floats",
        "kernels compiled with fast math off",
    )

    def _runtime(self) -> MetalRuntime:
        return open_runtime()

    def _probe(self) -> Probe:
        if _platform() != "darwin":
            return Probe.unavailable("Metal requires macOS")
        try:
            import Metal  # noqa: F401  (only whether it imports)
        except ImportError as error:
            return Probe.unavailable(
                f"PyObjC's Metal bindings are not installed ({error}); run '{PYOBJC_INSTALL}'"
            )
        try:
            runtime = self._runtime()
        except NoDeviceError as error:
            return Probe.unavailable(str(error))
        return Probe.available(runtime.line)

    def open_device(self, precision: PrecisionName = "f32") -> MetalCommandDevice:
        return MetalCommandDevice(self._runtime())

    def execution_path(self, op: Op[OpParams]) -> str:
        probe = self.probe()
        where = self._runtime().name if probe.is_available else f"no Metal device ({probe.reason})"
        return f"{op.execution_path} as Metal command buffers on {where}"

    def execution_scope(self, device: MetalCommandDevice) -> AbstractContextManager[Any]:
        # PyObjC objects created while running are released when the pool drains.
        return device.runtime.pool()

    def executed_path(self, op: Op[Any], kernels: str, device: MetalCommandDevice) -> str:
        return f"Metal command buffers {kernels} on {device.runtime.name}"

    def device_line(self, device: MetalCommandDevice) -> str:
        return device.runtime.line


def _platform() -> str:
    # Read through a function: type checkers fold a literal ``sys.platform`` comparison to
    # the checking machine's platform and would call the macOS branch unreachable on Linux.
    return sys.platform
