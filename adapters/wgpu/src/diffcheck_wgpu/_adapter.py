"""The ``wgpu`` adapter: hand-written WGSL kernels and command encoders on a WebGPU device."""

from __future__ import annotations

from typing import Any, ClassVar

from diffcheck.adapters import Adapter, Capabilities, Execution, Probe, Role
from diffcheck.gpu_plan import entrypoint_label, op_kernels, run_op
from diffcheck.ops import ContextLifecycle, HostInputs, Op, OpParams
from diffcheck.precision import PrecisionName

from ._commands import WgpuCommandDevice
from ._kernels import KERNEL_NAMES
from ._runtime import BACKEND_TYPES, NoAdapterError, WgpuRuntime, open_runtime

__all__ = ["WgpuAdapter"]

_OPS = frozenset({"gemm", "rms-norm", "silu-mul", "context-lifecycle"})
_LIFECYCLE_SUFFIX = "(wgpu command encoders, one queue)"


class WgpuAdapter(Adapter):
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

    def namespace(self) -> Any:
        raise TypeError(
            f"{self.spec} runs hand-written WGSL kernels and has no Array API namespace; "
            "use it through execute() for the ops listed in its capabilities"
        )

    def capabilities(self) -> Capabilities:
        return Capabilities(
            precisions=("f32",),
            float64=False,
            command_contexts=True,
            ops=_OPS,
            notes=(
                "f32 storage only: f16 needs the WebGPU 'shader-f16' feature, not implemented",
                "no float64: WGSL has no 64-bit floats",
                "one in-order queue per device: a wait covers all submitted work, and reads "
                "are ordered after earlier submissions, so a missing wait cannot expose stale data",
            ),
        )

    def command_device(self, precision: PrecisionName) -> WgpuCommandDevice:
        _require_f32(self.spec, precision)
        return WgpuCommandDevice(self._runtime(), max_workgroups_per_dimension=self._max_workgroups)

    def kernel_entrypoint(
        self, op: Op[OpParams], params: OpParams, precision: PrecisionName
    ) -> str:
        suffix = _LIFECYCLE_SUFFIX if isinstance(op, ContextLifecycle) else ""
        return entrypoint_label(op_kernels(op, params), KERNEL_NAMES, suffix=suffix)

    def execution_path(self, op: Op[OpParams]) -> str:
        # Without params the GEMM kernel (tiled or GEMV) is not known; execute() reports the
        # exact kernels that ran.
        return f"{op.execution_path} as wgpu compute passes on {self._where()}"

    def _where(self) -> str:
        probe = self.probe()
        return self._runtime().where if probe.is_available else f"no wgpu adapter ({probe.reason})"

    def execute(
        self,
        op: Op[OpParams],
        params: OpParams,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Role = "candidate",
    ) -> Execution:
        """Run ``op``'s WGSL kernels; the lifecycle runs its submission phases as a candidate.

        Raises
        ------
        ValueError
            For a precision other than f32.
        TypeError
            For an op without WGSL kernels.
        diffcheck_wgpu.WgpuExecutionError
            When wgpu or the driver reports an error (before any data is read).
        """
        device = self.command_device(precision)
        entrypoint = self.kernel_entrypoint(op, params, precision)
        output = run_op(device, op, params, inputs, lifecycle=role == "candidate")
        runtime = device.runtime
        kind = "command encoders" if isinstance(op, ContextLifecycle) else "compute pass"
        kernels = entrypoint_label(op_kernels(op, params), KERNEL_NAMES)
        path = f"wgpu {kind} {kernels} on {runtime.where}"
        return Execution(output, "f32", "f32", entrypoint, path, detail=runtime.line)


def _require_f32(spec: str, precision: PrecisionName) -> None:
    if precision != "f32":
        raise ValueError(
            f"precision {precision!r} on {spec}, but its kernels store f32 only "
            "(f16 needs the 'shader-f16' feature, not implemented); use --precision f32"
        )
