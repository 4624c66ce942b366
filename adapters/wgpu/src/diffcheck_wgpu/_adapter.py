"""The ``wgpu`` adapter: hand-written WGSL kernels and command encoders on a WebGPU device."""

from __future__ import annotations

from typing import Any, ClassVar

from diffcheck.adapters import Probe
from diffcheck.adapters.raw_kernels import RawKernelAdapter
from diffcheck.ops import ContextLifecycle, Op, OpParams
from diffcheck.precision import PrecisionName

from ._commands import WgpuCommandDevice
from ._kernels import COPY_NAME, KERNEL_NAMES
from ._runtime import BACKEND_TYPES, NoAdapterError, WgpuRuntime, open_runtime

__all__ = ["WgpuAdapter"]


class WgpuAdapter(RawKernelAdapter):
    """WebGPU through wgpu-py: WGSL compute kernels on f32 storage buffers.

    ``wgpu`` takes wgpu's default high-performance adapter; ``wgpu:vulkan``, ``wgpu:metal``,
    ``wgpu:d3d12`` and ``wgpu:opengl`` take an adapter of that backend type. On a Linux
    machine without a GPU, Mesa's llvmpipe through OpenGL runs the same kernels on the CPU.

    Parameters
    ----------
    device
        The backend-type suffix, or None for the default adapter.
    max_workgroups_per_dimension
        Split launch grids under this limit instead of the device's (tests use a small one).
    """

    name = "wgpu"
    devices: ClassVar[tuple[str, ...]] = tuple(BACKEND_TYPES)
    description = "WebGPU (wgpu-py): WGSL compute kernels and command encoders"
    namespace_label = "wgpu"
    kernel_language = "WGSL"
    shading_language = "wgsl"
    kernel_names = KERNEL_NAMES
    copy_name = COPY_NAME
    lifecycle_suffix = "(wgpu command encoders, one queue)"
    notes = (
        "f16 storage (f32 arithmetic) only where the adapter offers the 'shader-f16' feature",
        "no float64: WGSL has no 64-bit floats",
        "one in-order queue per device: a wait covers all submitted work, and reads "
        "are ordered after earlier submissions, so a missing wait cannot expose stale data",
    )

    def __init__(
        self, device: str | None = None, *, max_workgroups_per_dimension: int | None = None
    ) -> None:
        super().__init__(device)
        self._max_workgroups = max_workgroups_per_dimension

    def _runtime(self) -> WgpuRuntime:
        return open_runtime(self.device)

    def _probe(self) -> Probe:
        try:
            import wgpu  # noqa: F401  (only whether it imports)
        except ImportError as error:
            return Probe.unavailable(f"wgpu is not installed ({error}); run 'pip install wgpu'")
        try:
            runtime = self._runtime()
        except NoAdapterError as error:
            return Probe.unavailable(str(error))
        return Probe.available(runtime.line)

    def open_device(self, precision: PrecisionName = "f32") -> WgpuCommandDevice:
        return WgpuCommandDevice(
            self._runtime(), max_workgroups_per_dimension=self._max_workgroups, storage=precision
        )

    def storage_precisions(self) -> tuple[PrecisionName, ...]:
        # Asked after a successful probe (capabilities) or before a run; a device without
        # shader-f16 stores f32 only, and precision_refusals says why.
        return ("f32", "f16") if self._runtime().has_f16 else ("f32",)

    def precision_refusals(self) -> dict[str, str]:
        runtime = self._runtime()
        refusals = {"bf16": "WGSL has no bf16 type"}
        if not runtime.has_f16:
            refusals["f16"] = runtime.f16_refusal
        return refusals

    def execution_path(self, op: Op[OpParams]) -> str:
        # Without params the GEMM kernel (tiled or GEMV) is not known; execute() reports the
        # exact kernels that ran.
        return f"{op.execution_path} as wgpu compute passes on {self._where()}"

    def _where(self) -> str:
        probe = self.probe()
        return self._runtime().where if probe.is_available else f"no wgpu adapter ({probe.reason})"

    def executed_path(self, op: Op[Any], kernels: str, device: WgpuCommandDevice) -> str:
        kind = "command encoders" if isinstance(op, ContextLifecycle) else "compute pass"
        return f"wgpu {kind} {kernels} on {device.runtime.where}"

    def device_line(self, device: WgpuCommandDevice) -> str:
        return device.runtime.line
