"""The ``metal`` adapter: hand-written MSL kernels and command buffers through PyObjC (macOS only)."""

from __future__ import annotations

import sys
from typing import Any

from diffcheck.adapters import Adapter, Capabilities, Execution, Probe, Role
from diffcheck.gpu_plan import entrypoint_label, op_kernels, run_op
from diffcheck.ops import ContextLifecycle, HostInputs, Op, OpParams
from diffcheck.precision import PrecisionName

from ._commands import MetalCommandDevice
from ._kernels import KERNEL_NAMES
from ._runtime import MetalRuntime, NoDeviceError, open_runtime

__all__ = ["PYOBJC_INSTALL", "MetalAdapter"]

#: What to run when PyObjC's Metal bindings are missing.
PYOBJC_INSTALL = "pip install pyobjc-framework-Metal"
_OPS = frozenset({"gemm", "rms-norm", "silu-mul", "context-lifecycle"})
# The contract's label for the lifecycle ("gemv_f32 -> blit -> silu_mul_split_f32 (legacy
# MetalContext)"); the command-buffer sequence is the one the reference tool's context ran.
_LIFECYCLE_SUFFIX = "(legacy MetalContext)"


class MetalAdapter(Adapter):
    """Metal through PyObjC: MSL compute kernels on f32 shared-storage buffers.

    The system default device only (``metal``); unavailable off macOS, without PyObjC's
    Metal bindings, or without a Metal device, each with its own reason.
    """

    name = "metal"
    description = "Metal (PyObjC): MSL compute kernels, command buffers and blits (macOS)"
    namespace_label = "metal"

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

    def namespace(self) -> Any:
        raise TypeError(
            f"{self.spec} runs hand-written MSL kernels and has no Array API namespace; "
            "use it through execute() for the ops listed in its capabilities"
        )

    def capabilities(self) -> Capabilities:
        return Capabilities(
            precisions=("f32",),
            float64=False,
            command_contexts=True,
            ops=_OPS,
            notes=(
                "f32 shared-storage buffers only (the contract's Metal precision)",
                "no float64: Metal GPUs have no 64-bit floats",
                "kernels compiled with fast math off",
            ),
        )

    def command_device(self, precision: PrecisionName) -> MetalCommandDevice:
        if precision != "f32":
            raise ValueError(
                f"precision {precision!r} on {self.spec}, but its kernels store f32 only; "
                "use --precision f32"
            )
        return MetalCommandDevice(self._runtime())

    def kernel_entrypoint(
        self, op: Op[OpParams], params: OpParams, precision: PrecisionName
    ) -> str:
        suffix = _LIFECYCLE_SUFFIX if isinstance(op, ContextLifecycle) else ""
        return entrypoint_label(op_kernels(op, params), KERNEL_NAMES, suffix=suffix)

    def execution_path(self, op: Op[OpParams]) -> str:
        probe = self.probe()
        where = self._runtime().name if probe.is_available else f"no Metal device ({probe.reason})"
        return f"{op.execution_path} as Metal command buffers on {where}"

    def execute(
        self,
        op: Op[OpParams],
        params: OpParams,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Role = "candidate",
    ) -> Execution:
        """Run ``op``'s MSL kernels; the lifecycle runs its submission phases as a candidate.

        Raises
        ------
        ValueError
            For a precision other than f32.
        TypeError
            For an op without MSL kernels.
        diffcheck_metal.MetalExecutionError
            When compilation, allocation or a command buffer fails (before any data is read).
        """
        device = self.command_device(precision)
        entrypoint = self.kernel_entrypoint(op, params, precision)
        runtime = device.runtime
        with runtime.pool():
            output = run_op(device, op, params, inputs, lifecycle=role == "candidate")
        kernels = entrypoint_label(op_kernels(op, params), KERNEL_NAMES)
        path = f"Metal command buffers {kernels} on {runtime.name}"
        return Execution(output, "f32", "f32", entrypoint, path, detail=runtime.line)


def _platform() -> str:
    # Read through a function: type checkers fold a literal ``sys.platform`` comparison to
    # the checking machine's platform and would call the macOS branch unreachable on Linux.
    return sys.platform
