"""Test doubles: a NumPy-backed adapter with injectable faults, and a host command device.

Every fault is a way a real backend goes wrong; each test that uses one asserts the check
fails with the right status and reason, so no comparison path is left that cannot fail.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from diffcheck.adapters import Capabilities, Execution, Probe
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.ops import HostInputs, Op
from diffcheck.precision import PrecisionName
from diffcheck.programs import CommandContext

FAULTS = (
    "none",
    "scale_segment",
    "skip_copy",
    "nan",
    "truncate",
    "raise",
    "empty",
    "reuse_output",
    "no_wait",
)


class HostBuffer:
    """A mutable float32 host buffer standing in for device memory."""

    def __init__(self, values: npt.NDArray[np.float32]) -> None:
        self.values = np.array(values, dtype=np.float32)


class HostContext:
    """Records steps as closures; ``wait`` runs what was submitted (like a queue)."""

    def __init__(self, device: HostDevice) -> None:
        self.device = device
        self.recorded: list[Callable[[], None]] = []
        self.submitted: list[Callable[[], None]] = []

    def gemm(self, a: HostBuffer, b: HostBuffer, out: HostBuffer, m: int, n: int, k: int) -> None:
        def step() -> None:
            product = (
                a.values.reshape(m, k).astype(np.float64)
                @ b.values.reshape(n, k).astype(np.float64).T
            )
            out.values[:] = product.astype(np.float32).reshape(-1)

        self.recorded.append(step)

    def copy(self, src: HostBuffer, dst: HostBuffer, count: int) -> None:
        if self.device.fault == "skip_copy":
            return
        self.recorded.append(lambda: dst.values.__setitem__(slice(0, count), src.values[:count]))

    def silu_mul(self, src: HostBuffer, dst: HostBuffer, tokens: int, intermediate: int) -> None:
        self.device.silu_targets.append(dst)
        if self.device.fault == "reuse_output" and len(self.device.silu_targets) == 2:
            # The second phase writes into the first phase's output buffer.
            dst = self.device.silu_targets[0]

        def step() -> None:
            rows = src.values.reshape(tokens, 2 * intermediate)
            gate, up = rows[:, :intermediate], rows[:, intermediate:]
            dst.values[:] = (gate / (np.float32(1) + np.exp(-gate)) * up).reshape(-1)

        self.recorded.append(step)

    def submit(self) -> None:
        self.submitted += self.recorded
        self.recorded = []

    def wait(self) -> None:
        if self.device.fault == "no_wait":
            return
        for step in self.submitted:
            step()
        self.submitted = []

    def release(self) -> None:
        self.wait()  # a dropped context flushes, as Metal's and wgpu's do


class HostDevice:
    """A CommandDevice over host memory, with the lifecycle faults a driver can show."""

    def __init__(self, fault: str = "none") -> None:
        self.fault = fault
        self.silu_targets: list[HostBuffer] = []

    def new_context(self) -> CommandContext:
        return HostContext(self)

    def upload(self, host: npt.NDArray[np.float32]) -> HostBuffer:
        return HostBuffer(host)

    def filled(self, count: int, value: float) -> HostBuffer:
        return HostBuffer(np.full(count, value, dtype=np.float32))

    def read(self, buffer: HostBuffer) -> npt.NDArray[np.float32]:
        return buffer.values.copy()


class FakeAdapter(NumpyAdapter):
    """NumPy as a candidate, with one injectable fault and a controllable probe."""

    name = "fake"
    devices = ()

    def __init__(
        self,
        fault: str = "none",
        *,
        probe: Probe | None = None,
        contexts: bool = True,
        on_execute: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(None)
        assert fault in FAULTS, fault
        self.fault = fault
        self._probe_result = probe or Probe.available("fake over numpy")
        self.contexts = contexts
        self.on_execute = on_execute
        self.executed = 0

    def _probe(self) -> Probe:
        return self._probe_result

    def capabilities(self) -> Capabilities:
        return Capabilities(
            precisions=("f32", "f16"), float64=False, command_contexts=self.contexts
        )

    def command_device(self, precision: PrecisionName) -> HostDevice | None:
        return HostDevice(self.fault) if self.contexts else None

    def execute(
        self,
        op: Op[Any],
        params: Any,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Any = "candidate",
    ) -> Execution:
        self.executed += 1
        if self.on_execute is not None:
            self.on_execute()
        if self.fault == "raise":
            raise RuntimeError("device lost during dispatch")
        run = super().execute(op, params, inputs, precision, role=role)
        output = run.output.copy()
        if self.fault == "scale_segment":
            # Scale only the last quarter: small, localized, and diluted in the aggregate.
            output[3 * output.size // 4 :] *= np.float32(1.001)
        elif self.fault == "nan":
            output[output.size // 2] = np.float32("nan")
        elif self.fault == "truncate":
            output = output[:-1]
        elif self.fault == "empty":
            output = output[:0]
        return dataclasses.replace(run, output=output)


class NumpyUnderAnotherName(NumpyAdapter):
    """NumPy registered as ``fastlib``: its name and identity differ from the reference's, so
    the name-based self-test check lets it through; its arrays are still ``numpy.ndarray``."""

    name = "fastlib"
    namespace_label = "fastlib"
    description = "NumPy under another name"


class _WrapNamespace:
    """NumPy's namespace under the module name ``wraplib``, with a sum of its own: it
    accumulates in float64, so the one-sum probe differs from NumPy's."""

    __name__ = "wraplib"

    def __getattr__(self, name: str) -> Any:
        import array_api_compat.numpy as xp

        return getattr(xp, name)

    def sum(self, x: Any, **kwargs: Any) -> Any:
        import array_api_compat.numpy as xp

        return xp.asarray(xp.sum(xp.astype(x, xp.float64), **kwargs), dtype=x.dtype)


class WrapLib(NumpyAdapter):
    """A plugin computing with NumPy behind a namespace named ``wraplib`` whose ``sum``
    accumulates in float64: one sum says independent, exp and matmul are NumPy's bits."""

    name = "wraplib"
    namespace_label = "wraplib"
    description = "NumPy behind another namespace, with a float64 sum"

    def namespace(self) -> Any:
        return _WrapNamespace()


class JitterLib(NumpyAdapter):
    """A backend whose output bits change run to run (an atomic reduction's order), and which
    says so: ``Capabilities.deterministic`` is False. Each run nudges one element by a few
    float32 ULPs, far inside any tolerance."""

    name = "jitterlib"
    namespace_label = "jitterlib"
    description = "NumPy with run-to-run jitter, declared non-deterministic"
    runs = 0

    def capabilities(self) -> Capabilities:
        return Capabilities(deterministic=False)

    def execute(
        self,
        op: Op[Any],
        params: Any,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Any = "candidate",
    ) -> Execution:
        run = super().execute(op, params, inputs, precision, role=role)
        type(self).runs += 1
        output = run.output.copy()
        output[0] = np.nextafter(output[0], np.float32(np.inf) * (type(self).runs % 2 * 2 - 1))
        return dataclasses.replace(run, output=output)


class RegisteredChainsFake(FakeAdapter):
    """The backend ``fakechains``: a fake without command contexts (lifecycles as chains)."""

    name = "fakechains"
    namespace_label = "fakechains"

    def __init__(self, device: str | None = None, fault: str = "none") -> None:
        super().__init__(fault, contexts=False)


def _registered(fault: str) -> type[FakeAdapter]:
    """The fake with ``fault`` as the backend ``fake<fault>`` (``fake`` for none)."""

    class Registered(FakeAdapter):
        name = fake_name(fault)
        namespace_label = fake_name(fault)

        def __init__(self, device: str | None = None) -> None:
            super().__init__(fault)

    Registered.__name__ = Registered.__qualname__ = f"Registered_{fault}"
    return Registered


def fake_name(fault: str, contexts: bool = True) -> str:
    """The backend name of a fake with ``fault`` (``fakechains``: no command contexts)."""
    if not contexts:
        return "fakechains"
    return "fake" if fault == "none" else f"fake{fault.replace('_', '')}"


#: Every fault as a backend of its own (tests/conftest.py registers them by these names).
REGISTERED = {fake_name(fault): f"fakes:Registered_{fault}" for fault in FAULTS}
for _fault in FAULTS:
    globals()[f"Registered_{_fault}"] = _registered(_fault)
REGISTERED["fakechains"] = "fakes:RegisteredChainsFake"
REGISTERED["wraplib"] = "fakes:WrapLib"


def named_for(check: Any, candidate: Any) -> Any:
    """``check`` naming the registered fake it runs on when ``candidate`` is a
    :class:`FakeAdapter` (see :func:`fake_name`): a report names what computed it."""
    if not isinstance(candidate, FakeAdapter):
        return check
    name = fake_name(candidate.fault, candidate.contexts)
    return dataclasses.replace(check, require_backend=name)
