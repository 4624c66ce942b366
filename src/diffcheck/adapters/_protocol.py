"""The adapter protocol: what a backend tells diffcheck and what it does for it.

An adapter is small: identity (``name`` plus device variants), a ``probe`` that never raises,
capabilities, an Array-API namespace, host transfer, the precision it executes with, and
the known upstream divergences it declares (:mod:`diffcheck.adapters.divergences`).
Every op then runs through :meth:`Adapter.execute` with no per-backend code; an adapter may
override ``execute`` for hand-written kernels and offer command contexts
(:meth:`Adapter.command_device`) for the lifecycle program.

Adapters import their backend library lazily, inside ``_probe``/``namespace``, never at
module import, so that importing diffcheck or listing backends imports no optional backend.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from ..differ import to_host
from ..ops import ContextLifecycle, HostInputs, Op, OpParams
from ..ops.lifecycle import ContextLifecycleParams
from ..precision import PRECISIONS, PrecisionName
from ..programs import CommandDevice, run_lifecycle
from ..provenance import Fingerprint, fingerprint_of
from .api_divergences import KnownApiDivergence
from .divergences import KnownDivergence

__all__ = [
    "Adapter",
    "Capabilities",
    "Execution",
    "Probe",
    "ProbeStatus",
    "Role",
    "storage_name",
]

ProbeStatus = Literal["available", "unavailable", "error"]
Role = Literal["reference", "candidate"]


@dataclass(frozen=True)
class Probe:
    """Whether a backend can run here, and if not, why (a reason a person can act on)."""

    status: ProbeStatus
    reason: str | None = None
    #: What was found (library version, device or adapter description).
    detail: str = ""

    @classmethod
    def available(cls, detail: str = "") -> Probe:
        return cls("available", None, detail)

    @classmethod
    def unavailable(cls, reason: str, detail: str = "") -> Probe:
        return cls("unavailable", reason, detail)

    @classmethod
    def error(cls, reason: str, detail: str = "") -> Probe:
        return cls("error", reason, detail)

    @property
    def is_available(self) -> bool:
        return self.status == "available"


@dataclass(frozen=True)
class Capabilities:
    """What a backend device can execute."""

    precisions: tuple[PrecisionName, ...] = PRECISIONS
    float64: bool = True
    command_contexts: bool = False
    #: Ops this backend runs; None means every registered op through its namespace.
    ops: frozenset[str] | None = None
    #: Facts a user should know up front (e.g. "no float64 on the GPU").
    notes: tuple[str, ...] = ()
    #: Why a precision or op left out of ``precisions``/``ops`` is not run here, by its name
    #: (e.g. ``{"f16": "adapter 'llvmpipe' lacks the shader-f16 feature"}``); quoted in the
    #: not_run reason.
    refusals: Mapping[str, str] = field(default_factory=dict)
    #: Whether the same inputs give the same output bits run after run. False for a device
    #: whose reductions are ordered at run time (atomics, split-K): ``replay --rerun`` then
    #: requires the re-run's verdict, not its bits, to reproduce the stored one.
    deterministic: bool = True


@dataclass(frozen=True)
class Execution:
    """One op's output as float32 host values, with what actually executed it."""

    output: npt.NDArray[np.float32]
    input_storage: str
    output_storage: str
    kernel_entrypoint: str
    execution_path: str
    detail: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
    #: True when a lifecycle ran as four independent chains (no command contexts).
    independent_chains: bool = False
    #: The library whose arrays the computation returned, read off the result before it was
    #: brought to the host (:func:`~diffcheck.provenance.fingerprint_of`); None when the
    #: adapter returned host values only (its own kernels), so nothing names the library.
    computed_by: Fingerprint | None = None


def storage_name(dtype: Any) -> str:
    """The short storage name (f32, f16, bf16, f64) of any library's dtype object."""
    text = str(dtype).lower().rsplit(".", 1)[-1]
    for name, short in (
        ("bfloat16", "bf16"),
        ("float16", "f16"),
        ("float32", "f32"),
        ("float64", "f64"),
    ):
        if name in text:
            return short
    return text


class Adapter(abc.ABC):
    """Base of every backend adapter; one instance per device variant.

    Subclasses set ``name`` (the library's own name), ``devices`` (the suffixes after
    ``name:``, empty when the backend has no device choice) and implement ``_probe`` and
    ``namespace``. Everything else has a working default for Array-API libraries.
    """

    name: ClassVar[str]
    devices: ClassVar[tuple[str, ...]] = ()
    #: A one-line description for ``diffcheck backends``.
    description: ClassVar[str] = ""
    #: Label of the namespace in entrypoint strings (the module users would import).
    namespace_label: str = ""

    def __init__(self, device: str | None = None) -> None:
        self.device = device

    @property
    def spec(self) -> str:
        """The backend name as users write it: ``name`` or ``name:device``."""
        return f"{self.name}:{self.device}" if self.device else self.name

    # -- what an adapter implements ------------------------------------------------------

    @abc.abstractmethod
    def _probe(self) -> Probe:
        """Find out whether this backend device can run; may raise (``probe`` catches it)."""

    @abc.abstractmethod
    def namespace(self) -> Any:
        """The Array API namespace (``xp``) that executes on this device."""

    def capabilities(self) -> Capabilities:
        """What this device can execute; called only after a successful probe."""
        return Capabilities()

    def computing(self) -> AbstractContextManager[None]:
        """A context in which work through :meth:`namespace` runs on this adapter's device.

        Everything diffcheck computes through the namespace (``compare`` in both modes, the
        API search, :meth:`execute`) runs inside it, host transfers included. The default
        binds nothing: a library whose arrays carry their device needs no scope. A library
        with a process-wide default device (MLX) binds its work to the named device here,
        so ``mlx:cpu`` on a machine with a GPU computes on the CPU.
        """
        return nullcontext()

    def to_device(self, host: npt.NDArray[np.float32]) -> Any:
        """Move a float32 host array onto this device."""
        return self.namespace().asarray(host)

    def to_host(self, array: Any) -> npt.NDArray[Any]:
        """A flat host view of a device array (a copy only when the library needs one)."""
        return to_host(array)

    def host_float32(self, array: Any) -> npt.NDArray[np.float32]:
        """``array`` computed, widened to float32 on the device (exact) and brought to the host, flat."""
        self.synchronize(array)
        xp = self.namespace()
        # astype copies even to the same dtype: 400 MB of needless copying at 10^8 elements.
        widened = array if array.dtype == xp.float32 else xp.astype(array, xp.float32)
        self.synchronize(widened)
        return np.array(self.to_host(widened), dtype=np.float32, copy=None).reshape(-1)

    @contextlib.contextmanager
    def host_float32_staged(self, array: Any) -> Iterator[npt.NDArray[np.float32]]:
        """:meth:`host_float32`, for a caller that reads the values only inside the block.

        An adapter may then copy into a reused page-locked buffer (one device-to-host copy
        at full bus speed, instead of a fresh pageable allocation that the copy must first
        fault in: 7 ms against 335 ms for 400 MB on an H200 host); the view is valid only
        until the block ends. By default it is :meth:`host_float32`.
        """
        yield self.host_float32(array)

    def synchronize(self, array: Any) -> None:
        """Block until ``array`` is computed, so errors and timing belong to the op."""
        return

    def storage_dtype(self, xp: Any, precision: PrecisionName) -> Any:
        """The namespace dtype that stores ``precision``."""
        attribute = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[precision]
        dtype = getattr(xp, attribute, None)
        if dtype is None:
            raise TypeError(f"{self.spec} has no {attribute} dtype")
        return dtype

    def command_device(self, precision: PrecisionName) -> CommandDevice | None:
        """A device that records command contexts for the lifecycle program, or None."""
        return None

    def identity(self) -> tuple[str, str | None]:
        """What computes: the library and the device, for :func:`~diffcheck.adapters.same_backend`.

        The library is the namespace the adapter computes through (``namespace_label``, with
        an ``array_api_compat.`` prefix dropped, so the compat wrapper of NumPy is NumPy),
        or ``name`` when it has none. The device is the suffix; for the plain name it is the
        adapter's only device when it has exactly one (``numpy`` is ``numpy:cpu``), else
        None: the library picks it at run time. An adapter that wraps another delegates.

        Returns
        -------
        tuple[str, str | None]
            ``(library, device)``; it imports nothing.
        """
        library = (self.namespace_label or self.name).removeprefix("array_api_compat.")
        devices = type(self).devices
        device = self.device or (devices[0] if len(devices) == 1 else None)
        return library, device

    def known_divergences(self) -> tuple[KnownDivergence, ...]:
        """Known upstream divergences of this device variant; none by default.

        Data, not a looser tolerance: a matching check still fails in its report; a sweep
        counts a measured failure that matches as ``known`` and a matching pass as a known
        divergence not seen, and the conformance kit marks matching cases xfail. It is asked
        of the instance, so the plain name (``device`` None) can declare what applies to its
        default device. It must not import the backend library, and must not raise.

        Returns
        -------
        tuple[KnownDivergence, ...]
            The declared divergences, each with its reason and upstream reference.
        """
        return ()

    def known_api_divergences(self) -> tuple[KnownApiDivergence, ...]:
        """Known divergences of this backend's API functions (``diffcheck fuzz --api``); none.

        A finding of the API search that one of them matches (function, kind, input
        dtypes) is marked ``known``; a declared one the search did not meet is listed as
        no longer reproducing. Like :meth:`known_divergences`, it must not import the
        backend library and must not raise.

        Returns
        -------
        tuple[KnownApiDivergence, ...]
            The declared divergences, each with its reason and upstream reference.
        """
        return ()

    def kernel_entrypoint(self, op: Op[Any], params: OpParams, precision: PrecisionName) -> str:
        """The label of what executes ``op`` (a kernel name, or the namespace definition)."""
        if isinstance(op, ContextLifecycle) and not self.has_command_contexts:
            return self._chain_labels()[0]
        return f"{self.namespace_label or self.name}: {op.report_name} (array-api definition)"

    def execution_path(self, op: Op[Any]) -> str:
        """How ``op`` reaches this backend (written to the report)."""
        if isinstance(op, ContextLifecycle) and not self.has_command_contexts:
            return self._chain_labels()[1]
        return f"{op.execution_path} via {self.spec}"

    def _chain_labels(self) -> tuple[str, str]:
        """(entrypoint, path) of the lifecycle run as four chains through the namespace."""
        label = self.namespace_label or self.name
        return (
            f"{label}: gemm -> copy -> silu_mul, four independent chains (no command contexts)",
            f"gemm -> copy -> silu_mul as four independent chains via {self.spec} "
            "(no command contexts)",
        )

    @property
    def has_command_contexts(self) -> bool:
        """Whether this adapter class records command contexts (without probing the device)."""
        return type(self).command_device is not Adapter.command_device

    # -- what diffcheck calls --------------------------------------------------------------

    def probe(self) -> Probe:
        """Probe the backend; never raises (an exception becomes an ``error`` probe)."""
        try:
            return self._probe()
        except BaseException as error:  # a probe must never take the runner down
            if isinstance(error, KeyboardInterrupt):
                raise
            return Probe.error(f"{type(error).__name__}: {error}")

    def execute(
        self,
        op: Op[Any],
        params: OpParams,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Role = "candidate",
    ) -> Execution:
        """Run ``op`` on this device from float32 host inputs; return float32 host output.

        The reference role accumulates in float64 where the op asks for it and the device
        has float64 (the reference tool's CPU GEMM); a candidate accumulates in float32.
        """
        is_lifecycle = isinstance(op, ContextLifecycle)
        if is_lifecycle and role == "candidate":
            device = self.command_device(precision)
            if device is not None:
                assert isinstance(params, ContextLifecycleParams)
                output = run_lifecycle(device, params, inputs)
                # A device may report the storage it really used (read off its buffers) and
                # what it ran on (``detail``).
                return Execution(
                    output.reshape(-1),
                    getattr(device, "input_storage", precision),
                    getattr(device, "output_storage", precision),
                    self.kernel_entrypoint(op, params, precision),
                    self.execution_path(op),
                    detail=getattr(device, "detail", ""),
                )
        # The namespace path: a lifecycle here is four independent chains whatever the adapter
        # offers (the reference role never records command contexts).
        entrypoint, path = (
            self._chain_labels()
            if is_lifecycle
            else (self.kernel_entrypoint(op, params, precision), self.execution_path(op))
        )
        xp = self.namespace()
        storage = self.storage_dtype(xp, precision)
        arrays = {key: xp.astype(self.to_device(value), storage) for key, value in inputs.items()}
        wide = (
            role == "reference" and op.wide_reference_accumulation and self.capabilities().float64
        )
        result = op.compute(xp, arrays, params, accumulate=xp.float64 if wide else xp.float32)
        output = self.host_float32(result)
        first = next(iter(arrays.values()))
        return Execution(
            output,
            storage_name(first.dtype),
            storage_name(result.dtype),
            entrypoint,
            path,
            independent_chains=is_lifecycle,
            computed_by=fingerprint_of(result, namespace=xp),
        )
