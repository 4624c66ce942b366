"""The base of adapters that run hand-written GPU kernels instead of an Array API namespace.

Metal (MSL through PyObjC) and WebGPU (WGSL through wgpu) differ only in driver calls; what
they share lives here: the ops they run, the storage precisions they offer (f32 always; a
subclass may add f16 where its device supports it, saying why not elsewhere), the labels,
the ops it runs (every registered op whose raw launch dispatches only kernels with a source
in its shading language: the op's own, or one the adapter ships) and ``execute`` (every op
goes through :func:`diffcheck.gpu_plan.run_op` on the adapter's command device). A subclass
provides the probe, the command device, its shipped kernels' names and the wording of its
execution path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, ClassVar

from ..gpu_plan import (
    MAX_WORKGROUPS_PER_DIMENSION,
    Kernel,
    KernelDevice,
    RawLaunch,
    ShadingLanguage,
    entrypoint_label,
    raw_launch,
    run_op,
    step_names,
)
from ..ops import OPS, HostInputs, Op
from ..precision import PrecisionName
from ._protocol import Adapter, Capabilities, Execution, Role

__all__ = ["RawKernelAdapter"]


class RawKernelAdapter(Adapter):
    """An adapter whose ops are hand-written f32 kernels recorded on a command device."""

    #: The shading language, for messages ("WGSL", "MSL").
    kernel_language: ClassVar[str]
    #: Which of a kernel's own sources this adapter compiles (``Kernel.sources`` key).
    shading_language: ClassVar[ShadingLanguage]
    #: The entry point of each kernel whose source this adapter ships, by kernel name.
    kernel_names: ClassVar[Mapping[str, str]]
    #: What the buffer-to-buffer copy step is called in labels.
    copy_name: ClassVar[str]
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

    def kernel_name(self, kernel: Kernel) -> str | None:
        """The entry point this adapter runs for ``kernel``: the op's own source, else a shipped one.

        None when neither exists in this adapter's shading language.
        """
        own = kernel.sources.get(self.shading_language)
        return own.entry if own is not None else self.kernel_names.get(kernel.name)

    def _entry(self, kernel: Kernel) -> str:
        name = self.kernel_name(kernel)
        if name is None:
            raise TypeError(self._missing_source(kernel))
        return name

    def _missing_source(self, kernel: Kernel) -> str:
        return (
            f"kernel {kernel.name!r} has no {self.kernel_language} source: its op gives none "
            f"and {self.name} ships none"
        )

    def raw_ops(self) -> tuple[frozenset[str], dict[str, str]]:
        """The registered ops this adapter runs, and why each other op with kernels is not run.

        An op runs here when its :meth:`~diffcheck.ops.Op.raw_launch` (at its default params)
        dispatches only kernels with a source in this adapter's language.
        """
        ops: set[str] = set()
        refusals: dict[str, str] = {}
        for name, op in OPS.items():
            try:
                launch = op.raw_launch(op.params(), MAX_WORKGROUPS_PER_DIMENSION)
            except Exception as error:  # a plugin's hook: report it instead of failing the probe
                refusals[name] = f"its raw_launch failed at default params: {error}"
                continue
            if launch is None:
                continue
            missing = [k for k in launch.kernels if self.kernel_name(k) is None]
            if missing:
                refusals[name] = self._missing_source(missing[0])
            else:
                ops.add(name)
        return frozenset(ops), refusals

    def capabilities(self) -> Capabilities:
        ops, refusals = self.raw_ops()
        return Capabilities(
            precisions=self.storage_precisions(),
            float64=False,
            command_contexts=True,
            ops=ops,
            notes=self.notes,
            refusals={**refusals, **self.precision_refusals()},
        )

    def _labels(self, launch: RawLaunch) -> tuple[str, ...]:
        return step_names(launch, self._entry, self.copy_name)

    def kernel_entrypoint(self, op: Op[Any], params: Any, precision: PrecisionName) -> str:
        launch = raw_launch(op, params)
        suffix = self.lifecycle_suffix if launch.lifecycle else ""
        if precision != "f32":
            # The entry points keep their names; the build differs in its storage type only.
            suffix = f"{suffix} [{precision} storage, f32 arithmetic]".lstrip()
        return entrypoint_label(self._labels(launch), suffix=suffix)

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
        kernels = entrypoint_label(self._labels(raw_launch(op, params, device.limit)))
        path = self.executed_path(op, kernels, device)
        return Execution(
            output,
            getattr(device, "input_storage", precision),
            getattr(device, "output_storage", precision),
            entrypoint,
            path,
            detail=self.device_line(device),
        )
