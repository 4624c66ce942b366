"""What an op runs on a raw-GPU backend: its buffers, its kernel launches and copies, its output.

An op describes its raw-GPU execution as data (:meth:`diffcheck.ops.Op.raw_launch` returns a
:class:`RawLaunch`); :mod:`diffcheck.gpu_plan` records it on any command device (wgpu,
Metal) without knowing the op. A launch is one or more :class:`Chain`\\ s; a chain names its
buffers (host inputs uploaded in the storage precision, u32 tables, buffers filled with a
sentinel), records its steps in order (kernel :class:`Dispatch`\\ es and buffer-to-buffer
:class:`Copy`\\ s: the compute/copy/compute sequence of the context lifecycle is one such
chain) and reads one buffer back as its output. The outputs of the chains, in order, are
the op's flattened output.

Chains normally run one after another, each on a context of its own. A launch marked
``lifecycle`` has one chain per submission phase of :func:`diffcheck.programs.run_phases`,
which a candidate runs under those phases (shared, reused, peer and dropped contexts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from .kernels import Kernel
from .plans import Launch

__all__ = [
    "UNWRITTEN",
    "Buffer",
    "Chain",
    "Copy",
    "Dispatch",
    "Filled",
    "Input",
    "RawLaunch",
    "Step",
    "Table",
]

#: What an output buffer holds before its kernel writes it. Not zero: a kernel that writes
#: nothing (or skips a tail) then fails the check instead of passing on zeros.
UNWRITTEN: Final = 13.0


@dataclass(frozen=True)
class Input:
    """The op's host input ``name``, uploaded in the device's storage precision."""

    name: str


@dataclass(frozen=True)
class Table:
    """A read-only buffer of u32 words (a kernel's lookup table; never converted)."""

    words: tuple[int, ...] = field(repr=False)


@dataclass(frozen=True)
class Filled:
    """A buffer of ``count`` elements, each ``value`` (outputs and intermediates)."""

    count: int
    value: float = UNWRITTEN


Buffer = Input | Table | Filled


@dataclass(frozen=True)
class Dispatch:
    """One kernel launch with the named buffers bound in order (its parameter block after them)."""

    launch: Launch
    bind: tuple[str, ...]


@dataclass(frozen=True)
class Copy:
    """A buffer-to-buffer copy of ``count`` stored elements (a blit on Metal, an encoder copy on WebGPU)."""

    src: str
    dst: str
    count: int


Step = Dispatch | Copy


@dataclass(frozen=True)
class Chain:
    """Buffers (created in this order), the steps recorded on one context, and the buffer read back.

    Raises
    ------
    ValueError
        When a step or the output names a buffer the chain does not declare, or a chain has
        no steps.
    """

    buffers: Mapping[str, Buffer]
    steps: tuple[Step, ...]
    output: str

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("a raw-GPU chain needs at least one step")
        named = [self.output]
        for step in self.steps:
            named += step.bind if isinstance(step, Dispatch) else [step.src, step.dst]
        missing = sorted(set(named) - set(self.buffers))
        if missing:
            raise ValueError(
                f"a raw-GPU chain uses buffers {missing} it does not declare "
                f"(declared: {sorted(self.buffers)})"
            )

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        """The kernels this chain dispatches, in order."""
        return tuple(step.launch.kernel for step in self.steps if isinstance(step, Dispatch))


@dataclass(frozen=True)
class RawLaunch:
    """An op's raw-GPU execution: its chains, and whether they are the context lifecycle's phases."""

    chains: tuple[Chain, ...]
    #: A candidate runs the chains under :func:`diffcheck.programs.run_phases` (one per phase).
    lifecycle: bool = False

    def __post_init__(self) -> None:
        if not self.chains:
            raise ValueError("a raw launch needs at least one chain")

    @classmethod
    def kernel(cls, launch: Launch, *bind: Buffer) -> RawLaunch:
        """One kernel with ``bind`` bound in order; the last buffer is its output.

        Examples
        --------
        >>> from diffcheck.launch import plan_silu_mul
        >>> raw = RawLaunch.kernel(plan_silu_mul(2, 3), Input("gate_up"), Filled(6))
        >>> [str(k) for k in raw.kernels]
        ['silu_mul']
        """
        if not bind or not isinstance(bind[-1], Filled):
            raise ValueError("a kernel's last bound buffer is its output: a Filled buffer")
        names = tuple(
            buffer.name if isinstance(buffer, Input) else f"binding{slot}"
            for slot, buffer in enumerate(bind)
        )
        chain = Chain(dict(zip(names, bind, strict=True)), (Dispatch(launch, names),), names[-1])
        return cls((chain,))

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        """Every kernel the launch dispatches, each once, in first-use order."""
        return tuple(dict.fromkeys(k for chain in self.chains for k in chain.kernels))

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps of one chain (every chain of an op records the same sequence of kernels)."""
        return self.chains[0].steps
