"""Any library that array-api-compat supports, as a backend with no adapter code.

``torch``, ``torch:cpu``, ``torch:cuda``, ``jax``, ``cupy``, ``dask``, ``array_api_strict``
and friends resolve here when no registered adapter claims the name.

The device suffix names one of the library's own devices, as its
``__array_namespace_info__().devices()`` lists them: ``torch:cuda`` matches
``device(type='cuda', index=0)``, ``array_api_strict:no_float64`` matches
``Device('no_float64')``. A suffix the library does not list makes the backend unavailable
(with the devices it does list), never an error, so ``torch:cuda`` on a CPU-only machine is
``not_run``. What each device can store (f16, bf16, float64) is found by allocating a
one-element array of that dtype there, so nothing here guesses from a library's name.

The few per-library facts that the Array API does not cover (how to wait for queued GPU work,
jax's 64-bit switch) live in :data:`_SYNCHRONIZERS` and :data:`_PREPARERS`, keyed by
library, so the core never names a backend.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..differ import on_device
from ..precision import PRECISIONS, PrecisionName
from ._protocol import Adapter, Capabilities, Probe

__all__ = ["ARRAY_API_LIBRARIES", "ArrayApiAdapter"]

#: Backend name -> (module to import, module whose namespace array-api-compat wraps).
ARRAY_API_LIBRARIES: dict[str, tuple[str, str]] = {
    "torch": ("torch", "array_api_compat.torch"),
    "cupy": ("cupy", "array_api_compat.cupy"),
    "jax": ("jax.numpy", "jax.numpy"),
    "dask": ("dask.array", "array_api_compat.dask.array"),
    "array_api_strict": ("array_api_strict", "array_api_strict"),
    "sparse": ("sparse", "sparse"),
    "ndonnx": ("ndonnx", "ndonnx"),
}

_DTYPE_NAMES: dict[PrecisionName, str] = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
_QUOTED = re.compile(r"'([^']*)'")


def _sync_torch(array: Any) -> None:
    import torch

    kind = array.device.type
    if kind == "cuda":
        torch.cuda.synchronize(array.device)
    elif kind == "mps":
        torch.mps.synchronize()


def _sync_cupy(array: Any) -> None:
    # Imported by name: cupy has no type stubs and is absent from most machines.
    cupy = importlib.import_module("cupy")
    cupy.cuda.get_current_stream().synchronize()


def _sync_jax(array: Any) -> None:
    array.block_until_ready()


def _prepare_jax() -> None:
    # Without x64, jax silently truncates every float64/int64 that diffcheck asks for (the
    # float64 probe, an op's int64 positions) to 32 bits and warns each time. With it, jax
    # holds the dtypes the checks name; float32 inputs stay float32. A process-wide switch:
    # it holds for the rest of the process that uses jax as a backend.
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)


class _PinnedStage:
    """A page-locked host buffer for one library's device-to-host copies, grown and reused.

    Allocating and page-locking hundreds of megabytes costs more than the copy itself, so a
    process keeps one buffer per library, as large as the largest output staged so far.
    The lock holds it for one :meth:`ArrayApiAdapter.host_float32_staged` block at a time.
    """

    def __init__(self, copy: Callable[[Any, Any], npt.NDArray[np.float32]]) -> None:
        self.copy = copy
        self.lock = threading.Lock()
        self.buffer: Any = None


def _stage_torch(flat: Any, stage: _PinnedStage) -> npt.NDArray[np.float32]:
    torch = importlib.import_module("torch")
    n = flat.numel()
    if stage.buffer is None or stage.buffer.numel() < n:
        stage.buffer = None  # free the old pinned block before taking a larger one
        stage.buffer = torch.empty(max(n, 1), dtype=torch.float32, pin_memory=True)
    view = stage.buffer[:n]
    view.copy_(flat)  # a blocking copy: done when it returns
    result: npt.NDArray[np.float32] = view.numpy()
    return result


def _stage_cupy(flat: Any, stage: _PinnedStage) -> npt.NDArray[np.float32]:
    cupy = importlib.import_module("cupy")
    n = int(flat.size)
    if stage.buffer is None or stage.buffer.size < n:
        stage.buffer = None
        memory = cupy.cuda.alloc_pinned_memory(max(n, 1) * 4)
        stage.buffer = np.frombuffer(memory, np.float32, max(n, 1))  # keeps memory alive
    view: npt.NDArray[np.float32] = stage.buffer[:n]
    flat.get(out=view)  # blocking by default
    return view


#: Libraries whose device outputs are staged through page-locked memory (CUDA devices).
_STAGES: dict[str, _PinnedStage] = {
    "torch": _PinnedStage(_stage_torch),
    "cupy": _PinnedStage(_stage_cupy),
}


#: How to block until an array's queued work is done, for libraries that queue it. Eager CPU
#: libraries (NumPy, array-api-strict) need nothing, and dask computes on host transfer.
_SYNCHRONIZERS: dict[str, Callable[[Any], None]] = {
    "torch": _sync_torch,
    "cupy": _sync_cupy,
    "jax": _sync_jax,
}


#: What a library needs set before its namespace serves diffcheck's dtypes.
_PREPARERS: dict[str, Callable[[], None]] = {
    "jax": _prepare_jax,
}


def _device_keys(device: Any) -> set[str]:
    """Every spelling a user may give for ``device`` after ``library:`` (lower case)."""
    text = str(device)
    keys = {text, text.split(":")[0]}
    keys.update(_QUOTED.findall(repr(device)))
    kind = getattr(device, "type", None)
    if isinstance(kind, str):
        keys.add(kind)
    lowered = {key.lower() for key in keys if key}
    # array-api-strict calls its host device CPU_DEVICE; let "cpu" name it.
    return lowered | {key.removesuffix("_device") for key in lowered}


def _device_label(device: Any) -> str:
    """A device's short name (``cuda:0``, ``no_float64``) for messages."""
    quoted = _QUOTED.findall(repr(device))
    return (
        quoted[-1]
        if quoted and "(" in repr(device) and "type=" not in repr(device)
        else str(device)
    )


def _quietly(call: Callable[[], Any]) -> Any:
    # Enumerating torch devices allocates on every device type torch knows and warns about
    # deprecated ones (mkldnn); that noise is not the user's and must not fail a -W error run.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


class ArrayApiAdapter(Adapter):
    """A generic adapter over an array-api-compat namespace.

    Parameters
    ----------
    library
        A key of :data:`ARRAY_API_LIBRARIES` (``torch``, ``array_api_strict``...).
    device
        One of the library's devices, by its own name (``cpu``, ``cuda``, ``mps``), or None
        for the library's default device.
    """

    name: ClassVar[str] = "array-api"
    description = "any array-api-compat library, addressed by its own name"

    def __init__(self, library: str, device: str | None = None) -> None:
        super().__init__(device)
        self.library = library
        self.module_name, self.namespace_module = ARRAY_API_LIBRARIES[library]
        self.namespace_label = self.namespace_module
        self._device: Any = None
        self._capabilities: Capabilities | None = None

    @property
    def spec(self) -> str:
        return f"{self.library}:{self.device}" if self.device else self.library

    def _probe(self) -> Probe:
        root = self.module_name.split(".")[0]
        if importlib.util.find_spec(root) is None:
            return Probe.unavailable(
                f"{root} is not installed; install it (pip install {root.replace('_', '-')}) "
                "to use it as a backend"
            )
        module = importlib.import_module(root)
        version = getattr(module, "__version__", "unknown version")
        xp = self.namespace()
        found = self._find_device(xp)
        if isinstance(found, Probe):
            return found
        self._device = found
        # Allocating proves the device works (a driver can list a device it cannot use).
        if found is None:
            xp.asarray([0.0])
        else:
            xp.asarray([0.0], device=found)
        where = f" on {found}" if found is not None else ""
        return Probe.available(f"{root} {version}{where}")

    def _find_device(self, xp: Any) -> Any:
        """The library's device object named by the suffix, or an unavailable Probe."""
        if self.device is None:
            return None
        info = getattr(xp, "__array_namespace_info__", None)
        if info is None:
            # No way to list devices: hand the name to the library and let allocation judge.
            try:
                xp.asarray([0.0], device=self.device)
            except Exception as error:
                return Probe.unavailable(
                    f"{self.library} cannot allocate on device {self.device!r}: {error}"
                )
            return self.device
        devices = _quietly(lambda: tuple(info().devices()))
        wanted = self.device.lower()
        for candidate in devices:
            if wanted in _device_keys(candidate):
                return candidate
        listed = ", ".join(_device_label(d) for d in devices) or "none"
        return Probe.unavailable(
            f"{self.library} has no device {self.device!r} here (it lists: {listed})"
        )

    def _device_object(self) -> Any:
        if self.device is not None and self._device is None:
            found = self._find_device(self.namespace())
            if isinstance(found, Probe):
                raise RuntimeError(found.reason)
            self._device = found
        return self._device

    def namespace(self) -> Any:
        prepare = _PREPARERS.get(self.library)
        if prepare is not None:
            prepare()
        return importlib.import_module(self.namespace_module)

    def to_device(self, host: Any) -> Any:
        xp = self.namespace()
        device = self._device_object()
        if device is None:
            return xp.asarray(host)
        return xp.asarray(host, device=device)

    def to_host(self, array: Any) -> npt.NDArray[Any]:
        """A flat host view: zero-copy DLPack on the CPU, a device-to-host copy otherwise."""
        try:
            return np.from_dlpack(array).reshape(-1)
        except (BufferError, TypeError, RuntimeError, ValueError, AttributeError):
            pass
        # A GPU array refuses a CPU DLPack view; array-api-compat knows each library's copy
        # to the host (torch .to("cpu"), cupy .get()). Lazy libraries compute in asarray.
        from array_api_compat import to_device

        try:
            moved = to_device(array, "cpu")
        except (TypeError, ValueError, AttributeError):
            moved = array
        try:
            return np.from_dlpack(moved).reshape(-1)
        except (BufferError, TypeError, RuntimeError, ValueError, AttributeError):
            return np.asarray(moved).reshape(-1)

    def _stores(self, xp: Any, dtype_name: str) -> bool:
        """Whether this device can hold and widen an array of ``dtype_name``."""
        dtype = getattr(xp, dtype_name, None)
        if dtype is None:
            return False
        device = self._device_object()
        try:
            if device is None:
                value = xp.asarray([1.0], dtype=dtype)
            else:
                value = xp.asarray([1.0], dtype=dtype, device=device)
            xp.astype(value, xp.float32)
        except Exception:  # any refusal means "not on this device"; the reason is irrelevant
            return False
        # A library that quietly gives another dtype (narrower) does not store this one.
        return bool(value.dtype == dtype)

    def capabilities(self) -> Capabilities:
        if self._capabilities is None:
            xp = self.namespace()
            precisions = tuple(p for p in PRECISIONS if self._stores(xp, _DTYPE_NAMES[p]))
            float64 = self._stores(xp, "float64")
            notes = () if float64 else ("no float64 on this device",)
            self._capabilities = Capabilities(precisions=precisions, float64=float64, notes=notes)
        return self._capabilities

    @contextlib.contextmanager
    def host_float32_staged(self, array: Any) -> Iterator[npt.NDArray[np.float32]]:
        """A float32 host view through a reused page-locked buffer where the library has one
        (torch and CuPy CUDA arrays); valid only inside the block."""
        stage = _STAGES.get(self.library)
        if stage is None or not on_device(array):
            yield self.host_float32(array)
            return
        xp = self.namespace()
        widened = array if array.dtype == xp.float32 else xp.astype(array, xp.float32)
        flat = xp.reshape(widened, (-1,))
        self.synchronize(flat)
        with stage.lock:
            yield stage.copy(flat, stage)

    def synchronize(self, array: Any) -> None:
        sync = _SYNCHRONIZERS.get(self.library)
        if sync is not None:
            sync(array)
