"""Running an op on a command device: its raw launch, labels, and upload-record-submit-wait-read.

Nothing here knows an op: every op (diffcheck's own and a plugin's) describes what it runs
through :meth:`diffcheck.ops.Op.raw_launch`, and this module records that description.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from ..launch import (
    MAX_WORKGROUPS_PER_DIMENSION,
    Chain,
    Copy,
    Dispatch,
    Filled,
    Input,
    Kernel,
    Launch,
    RawLaunch,
    Table,
    kernel_named,
)
from ..ops import HostInputs, Op, OpParams
from ..programs import CommandContext, CommandDevice, run_phases

__all__ = [
    "KernelContext",
    "KernelDevice",
    "entrypoint_label",
    "raw_launch",
    "record_chain",
    "run_op",
    "step_names",
]


def raw_launch(
    op: Op[OpParams], params: OpParams, limit: int = MAX_WORKGROUPS_PER_DIMENSION
) -> RawLaunch:
    """What ``op`` runs with ``params`` on a raw-GPU backend (its :meth:`~diffcheck.ops.Op.raw_launch`).

    Raises
    ------
    TypeError
        For an op that has no raw-GPU kernels.
    ValueError
        When the launch dispatches a kernel that is not the one registered under its name
        (a pipeline compiled for one would run for the other).
    """
    launch = op.raw_launch(params, limit)
    if launch is None:
        raise TypeError(
            f"op {op.name!r} has no raw-GPU kernels (its raw_launch returns None for "
            f"{type(params).__name__})"
        )
    for kernel in launch.kernels:
        try:
            registered = kernel_named(kernel.name)
        except KeyError as error:
            raise ValueError(
                f"op {op.name!r} dispatches kernel {kernel.name!r}, which is not registered; "
                "create it with diffcheck.launch.register_kernel"
            ) from error
        if registered != kernel:
            raise ValueError(
                f"op {op.name!r} dispatches a kernel named {kernel.name!r} that differs from "
                "the one registered under that name"
            )
    return launch


def step_names(
    launch: RawLaunch, name_of: Callable[[Kernel], str], copy_name: str
) -> tuple[str, ...]:
    """The backend's name of each step of one chain: its kernels' entry points and its copy."""
    return tuple(
        name_of(step.launch.kernel) if isinstance(step, Dispatch) else copy_name
        for step in launch.steps
    )


def entrypoint_label(names: tuple[str, ...], *, suffix: str = "") -> str:
    """The report's entrypoint label: the backend's step names joined by ``->``.

    Examples
    --------
    >>> entrypoint_label(("gemv_f32", "blit", "silu_mul_split_f32"), suffix="(legacy MetalContext)")
    'gemv_f32 -> blit -> silu_mul_split_f32 (legacy MetalContext)'
    """
    label = " -> ".join(names)
    return f"{label} {suffix}" if suffix else label


class KernelContext(CommandContext, Protocol):
    """A command context that also records any kernel launch."""

    def dispatch(self, launch: Launch, buffers: tuple[Any, ...]) -> None:
        """Record ``launch`` with ``buffers`` bound in order, then its parameter block."""


class KernelDevice(CommandDevice, Protocol):
    """A command device whose contexts run every raw-GPU kernel."""

    #: The most workgroups per grid dimension its launches may use.
    limit: int

    def new_context(self) -> KernelContext:
        """A fresh recording context."""

    def upload_words(self, words: npt.NDArray[np.uint32]) -> Any:
        """A read-only buffer of u32 words (kernel tables, never converted to the storage type)."""


def record_chain(
    device: KernelDevice, context: KernelContext, chain: Chain, inputs: HostInputs
) -> Any:
    """Create the chain's buffers, record its steps on ``context``, and return its output buffer."""
    buffers: dict[str, Any] = {}
    for name, buffer in chain.buffers.items():
        if isinstance(buffer, Input):
            buffers[name] = device.upload(inputs[buffer.name])
        elif isinstance(buffer, Table):
            buffers[name] = device.upload_words(np.array(buffer.words, dtype=np.uint32))
        else:
            assert isinstance(buffer, Filled)
            buffers[name] = device.filled(buffer.count, buffer.value)
    for step in chain.steps:
        if isinstance(step, Dispatch):
            context.dispatch(step.launch, tuple(buffers[name] for name in step.bind))
        else:
            assert isinstance(step, Copy)
            context.copy(buffers[step.src], buffers[step.dst], step.count)
    return buffers[chain.output]


def run_op(
    device: KernelDevice,
    op: Op[OpParams],
    params: OpParams,
    inputs: HostInputs,
    *,
    lifecycle: bool = True,
) -> npt.NDArray[np.float32]:
    """Execute ``op`` on ``device``; return the flat f32 output (its chains' outputs in order).

    A launch marked ``lifecycle`` runs its chains under the four submission phases
    (:func:`~diffcheck.programs.run_phases`), or, with ``lifecycle=False`` (the reference
    role), independently. Every other chain is recorded on a context of its own, submitted,
    waited (checked) and read.

    Raises
    ------
    TypeError
        For an op without raw-GPU kernels.
    """
    launch = raw_launch(op, params, device.limit)
    if launch.lifecycle and lifecycle:

        def record(context: CommandContext, phase: int) -> Any:
            # The contexts are the device's own (KernelContext); run_phases sees the base protocol.
            chain = launch.chains[phase]
            return record_chain(device, cast(KernelContext, context), chain, inputs)

        return run_phases(device, record).reshape(-1)
    outputs = []
    for chain in launch.chains:
        context = device.new_context()
        out = record_chain(device, context, chain, inputs)
        context.submit()
        context.wait()
        outputs.append(np.asarray(device.read(out), dtype=np.float32).reshape(-1))
    return np.concatenate(outputs)
