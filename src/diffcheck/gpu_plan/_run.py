"""Running an op on a command device: kernel choice, labels, and upload-record-submit-wait-read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from ..launch import (
    Kernel,
    Launch,
    gemm_kernel,
    plan_add_rms_norm,
    plan_attention,
    plan_layer_norm,
    plan_rope,
    plan_softmax,
    rope_turns,
)
from ..ops import ContextLifecycle, Gemm, HostInputs, Op, OpParams, RmsNorm, SiluMul
from ..ops.gemm import GemmParams
from ..ops.lifecycle import OUTPUT_SENTINEL, PHASES, ContextLifecycleParams
from ..ops.rms_norm import RmsNormParams
from ..ops.silu_mul import SiluMulParams
from ..programs import CommandContext, CommandDevice, record_segment, run_lifecycle

__all__ = [
    "FUSED_KERNELS",
    "KernelContext",
    "KernelDevice",
    "entrypoint_label",
    "op_kernels",
    "record_fused",
    "run_independent_chains",
    "run_op",
]

#: The inference ops run by one kernel each, by op name (their params are read by field name,
#: as the op definitions declare them).
FUSED_KERNELS: Final[Mapping[str, Kernel]] = {
    "softmax": Kernel.SOFTMAX,
    "layer-norm": Kernel.LAYER_NORM,
    "rope": Kernel.ROPE,
    "attention": Kernel.ATTENTION,
    "add-rms-norm": Kernel.ADD_RMS_NORM,
}


def op_kernels(op: Op[OpParams], params: OpParams) -> tuple[Kernel, ...]:
    """The steps that execute ``op`` with ``params`` on a raw-GPU backend, in order.

    Raises
    ------
    TypeError
        For an op that has no hand-written kernels.
    """
    if isinstance(op, Gemm) and isinstance(params, GemmParams):
        return (gemm_kernel(params.m),)
    if isinstance(op, RmsNorm) and isinstance(params, RmsNormParams):
        return (Kernel.RMS_NORM,)
    if isinstance(op, SiluMul) and isinstance(params, SiluMulParams):
        return (Kernel.SILU_MUL,)
    if isinstance(op, ContextLifecycle) and isinstance(params, ContextLifecycleParams):
        return (gemm_kernel(params.tokens), Kernel.COPY, Kernel.SILU_MUL)
    if op.name in FUSED_KERNELS:
        return (FUSED_KERNELS[op.name],)
    raise TypeError(f"op {op.name!r} has no raw-GPU kernels (params {type(params).__name__})")


def entrypoint_label(
    kernels: tuple[Kernel, ...], names: Mapping[Kernel, str], *, suffix: str = ""
) -> str:
    """The report's entrypoint label: the backend's kernel names joined by ``->``.

    Examples
    --------
    >>> names = {Kernel.GEMV: "gemv_f32", Kernel.COPY: "blit", Kernel.SILU_MUL: "silu_mul_split_f32"}
    >>> entrypoint_label((Kernel.GEMV, Kernel.COPY, Kernel.SILU_MUL), names, suffix="(legacy MetalContext)")
    'gemv_f32 -> blit -> silu_mul_split_f32 (legacy MetalContext)'
    """
    label = " -> ".join(names[kernel] for kernel in kernels)
    return f"{label} {suffix}" if suffix else label


class KernelContext(CommandContext, Protocol):
    """A command context that also records the standalone kernels."""

    def rms_norm(self, x: Any, w: Any, out: Any, tokens: int, dim: int, eps: float) -> None:
        """Record out[t, :] = x[t, :] / sqrt(mean(x[t, :]²) + eps) · w."""

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


def record_fused(
    device: KernelDevice, context: KernelContext, op: Op[OpParams], p: Any, inputs: HostInputs
) -> Any:
    """Upload the inputs of an inference op, record its kernel, and return its output buffer.

    The output starts as the sentinel (see :func:`run_op`); inputs bind in the order of the
    kernel's bindings, the output after them.
    """
    limit = device.limit
    launch: Launch
    if op.name == "softmax":
        names: tuple[str, ...] = ("x",)
        launch = plan_softmax(p.tokens, p.dim, p.causal, p.temperature, limit=limit)
        count = p.tokens * p.dim
    elif op.name == "layer-norm":
        names = ("x", "weight", "bias")
        launch = plan_layer_norm(p.tokens, p.dim, p.eps, limit=limit)
        count = p.tokens * p.dim
    elif op.name == "add-rms-norm":
        names = ("x", "residual", "weight")
        launch = plan_add_rms_norm(p.tokens, p.dim, p.eps, limit=limit)
        count = 2 * p.tokens * p.dim
    elif op.name == "attention":
        names = ("q", "k", "v")
        launch = plan_attention(
            p.tokens, p.kv_len, p.heads, p.kv_heads, p.head_dim, p.causal, limit=limit
        )
        count = p.heads * p.tokens * p.head_dim
    elif op.name == "rope":
        x = device.upload(inputs["x"])
        turns = device.upload_words(rope_turns(p.base, p.head_dim))
        out = device.filled(p.tokens * p.heads * p.head_dim, OUTPUT_SENTINEL)
        interleaved = p.layout == "interleaved"
        launch = plan_rope(p.tokens, p.heads, p.head_dim, interleaved, p.offset, limit=limit)
        context.dispatch(launch, (x, turns, out))
        return out
    else:
        raise TypeError(f"op {op.name!r} has no raw-GPU kernels")
    buffers = tuple(device.upload(inputs[name]) for name in names)
    out = device.filled(count, OUTPUT_SENTINEL)
    context.dispatch(launch, (*buffers, out))
    return out


def run_op(
    device: KernelDevice,
    op: Op[OpParams],
    params: OpParams,
    inputs: HostInputs,
    *,
    lifecycle: bool = True,
) -> npt.NDArray[np.float32]:
    """Execute ``op`` on ``device`` with a context of its own; return the flat f32 output.

    ``context-lifecycle`` runs its four submission phases (:func:`run_lifecycle`), or, with
    ``lifecycle=False`` (the reference role), its four chains independently. Every other op
    records its kernel, submits, waits (checked) and reads.

    Raises
    ------
    TypeError
        For an op without raw-GPU kernels.
    """
    if isinstance(op, ContextLifecycle) and isinstance(params, ContextLifecycleParams):
        if lifecycle:
            return run_lifecycle(device, params, inputs).reshape(-1)
        return run_independent_chains(device, params, inputs)
    # Outputs start as the lifecycle's output sentinel, so a kernel that writes nothing (or
    # skips a tail) is a numerical failure rather than zeros that might pass.
    context = device.new_context()
    if isinstance(op, Gemm) and isinstance(params, GemmParams):
        a, b = device.upload(inputs["a"]), device.upload(inputs["b"])
        out = device.filled(params.m * params.n, OUTPUT_SENTINEL)
        context.gemm(a, b, out, params.m, params.n, params.k)
    elif isinstance(op, SiluMul) and isinstance(params, SiluMulParams):
        src = device.upload(inputs["gate_up"])
        out = device.filled(params.tokens * params.intermediate, OUTPUT_SENTINEL)
        context.silu_mul(src, out, params.tokens, params.intermediate)
    elif isinstance(op, RmsNorm) and isinstance(params, RmsNormParams):
        x, w = device.upload(inputs["x"]), device.upload(inputs["w"])
        out = device.filled(params.tokens * params.dim, OUTPUT_SENTINEL)
        context.rms_norm(x, w, out, params.tokens, params.dim, params.eps)
    elif op.name in FUSED_KERNELS:
        out = record_fused(device, context, op, params, inputs)
    else:
        raise TypeError(f"op {op.name!r} has no raw-GPU kernels")
    context.submit()
    context.wait()
    return device.read(out)


def run_independent_chains(
    device: CommandDevice, params: ContextLifecycleParams, inputs: HostInputs
) -> npt.NDArray[np.float32]:
    """The lifecycle's four chains, each on a context of its own, submitted and waited in turn."""
    outputs = []
    for phase in range(len(PHASES)):
        context = device.new_context()
        buffers = record_segment(device, context, params, inputs, phase)
        context.submit()
        context.wait()
        outputs.append(np.asarray(device.read(buffers.output), dtype=np.float32).reshape(-1))
    return np.concatenate(outputs)
