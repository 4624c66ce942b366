"""``mlx``, ``mlx:cpu`` and ``mlx:gpu``: MLX (``mlx.core``) as a diffcheck backend."""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from diffcheck.adapters import (
    Adapter,
    Capabilities,
    Execution,
    KnownApiDivergence,
    KnownDivergence,
    Probe,
    Role,
)
from diffcheck.ops import ContextLifecycle, HostInputs, Op, OpParams
from diffcheck.precision import PRECISIONS, PrecisionName

from ._probe import probe_mlx
from ._streams import MlxCommandDevice

if TYPE_CHECKING:
    import mlx.core as mx

__all__ = ["TF32_DIVERGENCE", "MlxAdapter", "tf32_enabled"]

# Ops whose definitions multiply matrices (subject to MLX_ENABLE_TF32 on a GPU).
_MATMUL_OPS = frozenset({"gemm", "context-lifecycle", "attention"})


def tf32_enabled() -> bool:
    """Whether MLX may run GPU float32 matmuls as TF32 (``MLX_ENABLE_TF32`` is not ``"0"``)."""
    return os.environ.get("MLX_ENABLE_TF32") != "0"


#: GPU float32 matmuls run as TF32 by default; measured in docs/gpu-evidence.md. The model
#: is the floor's TF32 twin: a failure is known only when the candidate's output is within
#: the precision floor of the twin's (gemm, whose ~7e-8 the f32 bucket let through, and
#: attention, whose two matmuls run as TF32 too, now fail the floor and are listed: an
#: H100 measured both at 8e5-8e6x the float32 floor, matched by the twin).
TF32_DIVERGENCE = KnownDivergence(
    ops=("gemm", "context-lifecycle", "attention"),
    precisions=("f32",),
    devices=("gpu",),
    reason=(
        "GPU float32 matmuls run as TF32 tensor-core math by default (MLX_ENABLE_TF32=1): "
        "gemm, the lifecycle and attention measure NMSE 7e-8 to 1.4e-7 on an H200 and an "
        "H100, 1e5-1e7x the float32 floor; MLX_ENABLE_TF32=0 restores full float32"
    ),
    upstream="https://ml-explore.github.io/mlx/build/html/usage/environment_variables.html",
    max_nmse=1.4e-6,
    measured_nmse=1.4e-7,
    bound_source=(
        "10x the worst f32 lifecycle NMSE measured with TF32 on an H200 (1.4e-7, "
        "docs/gpu-evidence.md)"
    ),
    active=tf32_enabled,
    twin="tf32 operands",
)


class MlxAdapter(Adapter):
    """MLX on its CPU or GPU device (Metal on macOS, CUDA on Linux).

    Every op runs through the ``mlx.core`` Array API namespace with its work bound to the
    device's stream, and is evaluated before it is timed or read. The lifecycle program
    runs on MLX streams (:class:`~diffcheck_mlx.MlxCommandDevice`). ``mlx`` alone means
    MLX's default device (the GPU where one is available).

    Parameters
    ----------
    device
        ``"cpu"``, ``"gpu"`` or None for MLX's default device.
    """

    name = "mlx"
    devices = ("cpu", "gpu")
    description = "MLX (mlx.core) on the CPU, or the GPU through Metal (macOS) or CUDA (Linux)"
    namespace_label = "mlx.core"

    def _probe(self) -> Probe:
        return probe_mlx(self.device)

    def namespace(self) -> Any:
        import mlx.core

        return mlx.core

    def to_device(self, host: Any) -> Any:
        """``host`` on MLX in its own dtype: float64 stays float64 on the CPU.

        ``mx.asarray`` narrows a float64 NumPy array to float32 (MLX's default float); MLX
        computes float64 on its CPU device only, so there it is asked for explicitly.
        """
        import mlx.core as mx
        import numpy as np

        array = np.asarray(host)
        if array.dtype == np.float64 and not self.is_gpu():
            return mx.array(array, dtype=mx.float64)
        return mx.asarray(array)

    def device_object(self) -> mx.Device:
        """The MLX device this adapter runs on (MLX's default device for plain ``mlx``)."""
        import mlx.core as mx

        if self.device is None:
            return mx.default_device()
        return mx.Device(mx.gpu if self.device == "gpu" else mx.cpu)

    def computing(self) -> AbstractContextManager[Any]:
        """Every MLX op made inside runs on this adapter's device (``mx.stream``).

        MLX ops run on the process's default device unless a stream says otherwise, and an
        op's device is fixed when it is made: the scope must cover the call and the reads.
        """
        import mlx.core as mx

        return mx.stream(self.device_object())

    def is_gpu(self) -> bool:
        """Whether this adapter runs on MLX's GPU device."""
        import mlx.core as mx

        return bool(self.device_object().type == mx.gpu)

    def capabilities(self) -> Capabilities:
        gpu = self.is_gpu()
        notes = ["bf16 and f16 outputs are widened to float32 by MLX before host transfer"]
        if gpu:
            notes.insert(
                0,
                "no float64 on the GPU (MLX's Metal and CUDA backends have none): a reference "
                "that accumulates in float64 must run on numpy or mlx:cpu",
            )
            notes.insert(
                1,
                "float32 matmuls may use TF32 tensor cores unless MLX_ENABLE_TF32=0",
            )
        # MLX's CPU backend computes float64, so mlx:cpu can accumulate a reference GEMM wide.
        return Capabilities(
            precisions=PRECISIONS, float64=not gpu, command_contexts=True, notes=tuple(notes)
        )

    def known_divergences(self) -> tuple[KnownDivergence, ...]:
        """:data:`TF32_DIVERGENCE`: GPU float32 matmuls, while ``MLX_ENABLE_TF32`` is not 0.

        ``mlx:gpu`` matches it by its device suffix. Plain ``mlx`` runs on MLX's default
        device, which is known only once MLX is loaded: for it the divergence applies only
        when MLX is loaded and its default device is the GPU. A sweep parent never imports
        MLX, so it leaves a plain ``mlx`` failure unexcused rather than guess; name
        ``mlx:gpu`` in a matrix.
        """
        if self.device is not None:
            return (TF32_DIVERGENCE,)
        return (replace(TF32_DIVERGENCE, devices=(), active=self._default_device_uses_tf32),)

    def known_api_divergences(self) -> tuple[KnownApiDivergence, ...]:
        """What the API search finds on MLX (``diffcheck fuzz --api``), with the reasons.

        Measured on the CPU; the GPU runs the same functions through other kernels, so only
        the CPU variant declares them.
        """
        from ._api_divergences import MLX_API_DIVERGENCES

        return MLX_API_DIVERGENCES if self.device == "cpu" else ()

    def _default_device_uses_tf32(self) -> bool:
        # Never import MLX to find out: a label or a classification is no reason to load it.
        return tf32_enabled() and "mlx.core" in sys.modules and self.is_gpu()

    def synchronize(self, array: Any) -> None:
        import mlx.core as mx

        # MLX is lazy: evaluate here so errors and timing belong to the op, not the read.
        mx.eval(array)

    def command_device(self, precision: PrecisionName) -> MlxCommandDevice:
        """Buffers and streams on this device for the lifecycle program."""
        xp = self.namespace()
        return MlxCommandDevice(self.device_object(), self.storage_dtype(xp, precision))

    def _base_entrypoint(self, op: Op[OpParams], params: OpParams, precision: PrecisionName) -> str:
        if isinstance(op, ContextLifecycle):
            return (
                f"mlx.core: gemm -> copy -> silu_mul recorded on MLX streams of "
                f"{self.device_object()} (mx.new_stream per context, mx.async_eval submits, "
                "mx.synchronize waits)"
            )
        return super().kernel_entrypoint(op, params, precision)

    def kernel_entrypoint(
        self, op: Op[OpParams], params: OpParams, precision: PrecisionName
    ) -> str:
        label = self._base_entrypoint(op, params, precision)
        note = self.matmul_precision_note(op, precision)
        return f"{label}; {note}" if note else label

    def matmul_precision_note(self, op: Op[OpParams], precision: PrecisionName) -> str:
        """Say when float32 matmuls may run as TF32, so a failure on the GPU explains itself.

        MLX lets GPU float32 matmul-family ops use reduced-precision TF32 tensor-core math
        unless ``MLX_ENABLE_TF32=0`` (default 1). Measured on an H200: gemm 64x32x32 at f32
        gives NMSE ~7e-8 with it (full float32 gives ~1e-14), within a hair of 1e-7.
        """
        if precision != "f32" or op.name not in _MATMUL_OPS or self.device == "cpu":
            return ""
        # Plain ``mlx`` runs on MLX's default device; once MLX is loaded (at execution) that
        # device is known, and a label is not a reason to import MLX before then.
        if self.device is None and "mlx.core" in sys.modules and not self.is_gpu():
            return ""
        setting = os.environ.get("MLX_ENABLE_TF32")
        if setting == "0":
            return "float32 matmuls in full float32 (MLX_ENABLE_TF32=0)"
        where = "" if self.device == "gpu" else " when the default device is a GPU"
        shown = (
            f"MLX_ENABLE_TF32={setting}"
            if setting is not None
            else "MLX_ENABLE_TF32 unset, default 1"
        )
        return (
            f"float32 matmuls may run as TF32 on GPU tensor cores{where} ({shown}); "
            "set MLX_ENABLE_TF32=0 for full float32"
        )

    def execution_path(self, op: Op[OpParams]) -> str:
        if isinstance(op, ContextLifecycle):
            return (
                f"{op.execution_path} via {self.spec} on MLX streams: initial and reused_context "
                "on one stream, independent_context on a new stream waited first, drop_flush on a "
                "stream released before its output is read"
            )
        return super().execution_path(op)

    def execute(
        self,
        op: Op[OpParams],
        params: OpParams,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Role = "candidate",
    ) -> Execution:
        """Run ``op`` with every MLX op bound to this device's stream.

        A lifecycle candidate runs on MLX streams, and its storage names are read from the
        arrays it uploaded and read back; everything else is the namespace definition.
        """
        # The lifecycle's contexts make their own streams on this device; everything else
        # runs on the device's default stream. The base class labels a reference lifecycle
        # as four independent chains itself.
        with self.computing():
            return super().execute(op, params, inputs, precision, role=role)
