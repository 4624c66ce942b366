"""The base of adapters that run hand-written GPU kernels instead of an Array API namespace.

Metal (MSL through PyObjC) and WebGPU (WGSL through wgpu) differ only in driver calls; what
they share lives here: the ops they run, f32-only storage, the labels, and ``execute``
(every op goes through :func:`diffcheck.gpu_plan.run_op` on the adapter's command device).
A subclass provides the probe, the command device, the kernel names and the wording of its
execution path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, ClassVar

from ..gpu_plan import Kernel, KernelDevice, entrypoint_label, op_kernels, run_op
from ..ops import ContextLifecycle, HostInputs, Op
from ..precision import PrecisionName
from ._protocol import Adapter, Capabilities, Execution, Role

__all__ = ["KERNEL_OPS", "RawKernelAdapter"]

#: The ops every raw-kernel adapter implements.
KERNEL_OPS = frozenset({"gemm", "rms-norm", "silu-mul", "context-lifecycle"})


class RawKernelAdapter(Adapter):
    """An adapter whose ops are hand-written f32 kernels recorded on a command device."""

    #: The shading language, for messages ("WGSL", "MSL").
    kernel_language: ClassVar[str]
    #: The name each kernel (and the copy step) has in this adapter's sources and labels.
    kernel_names: ClassVar[Mapping[Kernel, str]]
    #: Appended to the lifecycle's entrypoint label (what kind of context records it).
    lifecycle_suffix: ClassVar[str]
    #: Backend facts for ``Capabilities.notes``.
    notes: ClassVar[tuple[str, ...]] = ()
    #: Why another precision is refused (appended to the message).
    precision_hint: ClassVar[str] = ""

    def command_device(self, precision: PrecisionName) -> KernelDevice:
        """The device that records this adapter's kernels (f32 only)."""
        self.require_f32(precision)
        return self.open_device()

    def open_device(self) -> KernelDevice:
        """A command device on this adapter's GPU (after ``require_f32``)."""
        raise NotImplementedError

    def execution_scope(self, device: Any) -> contextlib.AbstractContextManager[Any]:
        """A context the whole execution runs in (Metal: an autorelease pool)."""
        return contextlib.nullcontext()

    def executed_path(self, op: Op[Any], kernels: str, device: Any) -> str:
        """The report's execution path for one execution."""
        raise NotImplementedError

    def device_line(self, device: Any) -> str:
        """A one-line description of the device (the probe's detail)."""
        return ""

    def require_f32(self, precision: PrecisionName) -> None:
        """Refuse any precision but f32, saying why and what to use."""
        if precision != "f32":
            hint = f" ({self.precision_hint})" if self.precision_hint else ""
            raise ValueError(
                f"precision {precision!r} on {self.spec}, but its kernels store f32 only{hint}; "
                "use --precision f32"
            )

    def namespace(self) -> Any:
        raise TypeError(
            f"{self.spec} runs hand-written {self.kernel_language} kernels and has no Array API "
            "namespace; use it through execute() for the ops listed in its capabilities"
        )

    def capabilities(self) -> Capabilities:
        return Capabilities(
            precisions=("f32",),
            float64=False,
            command_contexts=True,
            ops=KERNEL_OPS,
            notes=self.notes,
        )

    def kernel_entrypoint(self, op: Op[Any], params: Any, precision: PrecisionName) -> str:
        suffix = self.lifecycle_suffix if isinstance(op, ContextLifecycle) else ""
        return entrypoint_label(op_kernels(op, params), self.kernel_names, suffix=suffix)

    def execute(
        self,
        op: Op[Any],
        params: Any,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Role = "candidate",
    ) -> Execution:
        """Run ``op``'s kernels; the lifecycle runs its submission phases as a candidate.

        Raises
        ------
        ValueError
            For a precision other than f32.
        TypeError
            For an op without kernels.
        Exception
            The adapter's own error when the driver reports one (before any data is read).
        """
        device = self.command_device(precision)
        entrypoint = self.kernel_entrypoint(op, params, precision)
        with self.execution_scope(device):
            output = run_op(device, op, params, inputs, lifecycle=role == "candidate")
        kernels = entrypoint_label(op_kernels(op, params), self.kernel_names)
        path = self.executed_path(op, kernels, device)
        return Execution(output, "f32", "f32", entrypoint, path, detail=self.device_line(device))
