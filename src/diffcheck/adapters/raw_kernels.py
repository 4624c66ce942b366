"""The base of adapters that run hand-written GPU kernels instead of an Array API namespace.

Metal (MSL through PyObjC) and WebGPU (WGSL through wgpu) differ only in driver calls; what
they share lives here: the ops they run, the storage precisions they offer (f32 always; a
subclass may add f16 where its device supports it, saying why not elsewhere), the labels,
and ``execute`` (every op goes through :func:`diffcheck.gpu_plan.run_op` on the adapter's
command device). A subclass provides the probe, the command device, the kernel names and
the wording of its execution path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import UnknownOpError
from ..gpu_plan import Kernel, KernelDevice, entrypoint_label, op_kernels, run_op
from ..ops import ContextLifecycle, HostInputs, Op, get_op
from ..precision import PrecisionName
from ._protocol import Adapter, Capabilities, Execution, Role

__all__ = ["KERNEL_OPS", "RawKernelAdapter", "kernel_ops"]

#: The ops every raw-kernel adapter implements.
KERNEL_OPS = frozenset(
    {
        "gemm",
        "rms-norm",
        "silu-mul",
        "context-lifecycle",
        "softmax",
        "layer-norm",
        "rope",
        "attention",
        "add-rms-norm",
    }
)


def kernel_ops() -> frozenset[str]:
    """The :data:`KERNEL_OPS` registered in this installation (an op may come from a plugin)."""
    registered = set()
    for name in KERNEL_OPS:
        try:
            get_op(name)
        except UnknownOpError:
            continue
        registered.add(name)
    return frozenset(registered)


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
        """The device that records this adapter's kernels with ``precision`` storage."""
        self.require_precision(precision)
        return self.open_device(precision)

    def open_device(self, precision: PrecisionName = "f32") -> KernelDevice:
        """A command device on this adapter's GPU (after ``require_precision``)."""
        raise NotImplementedError

    def storage_precisions(self) -> tuple[PrecisionName, ...]:
        """The storage precisions this device's kernels run (f32 unless a subclass adds more)."""
        return ("f32",)

    def precision_refusals(self) -> dict[str, str]:
        """Why each precision missing from :meth:`storage_precisions` is not run here."""
        hint = self.precision_hint or "its kernels store f32 only"
        return {p: hint for p in ("f16", "bf16") if p not in self.storage_precisions()}

    def execution_scope(self, device: Any) -> contextlib.AbstractContextManager[Any]:
        """A context the whole execution runs in (Metal: an autorelease pool)."""
        return contextlib.nullcontext()

    def executed_path(self, op: Op[Any], kernels: str, device: Any) -> str:
        """The report's execution path for one execution."""
        raise NotImplementedError

    def device_line(self, device: Any) -> str:
        """A one-line description of the device (the probe's detail)."""
        return ""

    def require_precision(self, precision: PrecisionName) -> None:
        """Refuse a precision this device does not store, saying why and what to use."""
        offered = self.storage_precisions()
        if precision not in offered:
            why = self.precision_refusals().get(precision, "not offered")
            raise ValueError(
                f"precision {precision!r} on {self.spec}: {why}; "
                f"use --precision {' or '.join(offered)}"
            )

    def namespace(self) -> Any:
        raise TypeError(
            f"{self.spec} runs hand-written {self.kernel_language} kernels and has no Array API "
            "namespace; use it through execute() for the ops listed in its capabilities"
        )

    def capabilities(self) -> Capabilities:
        return Capabilities(
            precisions=self.storage_precisions(),
            float64=False,
            command_contexts=True,
            ops=kernel_ops(),
            notes=self.notes,
            refusals=self.precision_refusals(),
        )

    def kernel_entrypoint(self, op: Op[Any], params: Any, precision: PrecisionName) -> str:
        suffix = self.lifecycle_suffix if isinstance(op, ContextLifecycle) else ""
        if precision != "f32":
            # The entry points keep their names; the build differs in its storage type only.
            suffix = f"{suffix} [{precision} storage, f32 arithmetic]".lstrip()
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
            For a precision this device does not store.
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
        return Execution(
            output,
            getattr(device, "input_storage", precision),
            getattr(device, "output_storage", precision),
            entrypoint,
            path,
            detail=self.device_line(device),
        )
