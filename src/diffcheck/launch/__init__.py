"""Launch geometry of the hand-written GPU kernels: pure arithmetic, no GPU library, no op.

Which kernels exist (:class:`Kernel`, an open registry keyed by name: diffcheck's own and
any an op plugin registers), what an op runs on a raw-GPU backend (:class:`RawLaunch`: its
buffers, kernel dispatches and copies), the tile and workgroup constants every kernel source
must declare (checked on load), the number of workgroups split into an (x, y, z) grid under a
per-dimension limit (WebGPU allows 65535 workgroups per dimension; the kernels linearize the
grid back to a flat workgroup index and return early past ``groups``), and each kernel's
parameter block packed as little-endian 32-bit words.

It sits below :mod:`diffcheck.ops`: an op reads its kernels' tiles here to mark the shape
edges its fuzz space draws, and :mod:`diffcheck.gpu_plan` (above the ops) runs an op's
launches on a device. The modules: ``plans`` (kernels, constants, grids, the GEMM/SiLU/RMSNorm
plans) and ``fused`` (the inference kernels' plans and the RoPE turn table).
"""

from __future__ import annotations

from .fused import (
    plan_add_rms_norm,
    plan_attention,
    plan_layer_norm,
    plan_rope,
    plan_softmax,
    rope_turn_words,
    rope_turns,
)
from .kernels import (
    SHADING_LANGUAGES,
    Kernel,
    KernelSource,
    ShadingLanguage,
    check_kernel_source,
    declared_constants,
    kernel_named,
    register_kernel,
    registered_kernels,
    source_for,
)
from .plans import (
    ADD_RMS_NORM_KERNEL,
    ATTENTION_DIMS_PER_THREAD,
    ATTENTION_KERNEL,
    ATTENTION_THREADS,
    BUILTIN_KERNELS,
    ELEMENTWISE_THREADS,
    GEMM_KERNEL,
    GEMM_THREADS,
    GEMM_TILE_K,
    GEMM_TILE_M,
    GEMM_TILE_N,
    GEMV_KERNEL,
    GEMV_LANES,
    GEMV_ROWS,
    LAYER_NORM_KERNEL,
    MAX_WORKGROUPS_PER_DIMENSION,
    RMS_NORM_KERNEL,
    RMS_NORM_THREADS,
    ROPE_KERNEL,
    ROPE_THREADS,
    ROW_THREADS,
    SILU_MUL_KERNEL,
    SOFTMAX_KERNEL,
    Grid,
    Launch,
    gemm_kernel,
    plan_gemm,
    plan_rms_norm,
    plan_silu_mul,
    split_grid,
)
from .raw import (
    UNWRITTEN,
    Buffer,
    Chain,
    Copy,
    Dispatch,
    Filled,
    Input,
    RawLaunch,
    Step,
    Table,
)

__all__ = [
    "ADD_RMS_NORM_KERNEL",
    "ATTENTION_DIMS_PER_THREAD",
    "ATTENTION_KERNEL",
    "ATTENTION_THREADS",
    "BUILTIN_KERNELS",
    "ELEMENTWISE_THREADS",
    "GEMM_KERNEL",
    "GEMM_THREADS",
    "GEMM_TILE_K",
    "GEMM_TILE_M",
    "GEMM_TILE_N",
    "GEMV_KERNEL",
    "GEMV_LANES",
    "GEMV_ROWS",
    "LAYER_NORM_KERNEL",
    "MAX_WORKGROUPS_PER_DIMENSION",
    "RMS_NORM_KERNEL",
    "RMS_NORM_THREADS",
    "ROPE_KERNEL",
    "ROPE_THREADS",
    "ROW_THREADS",
    "SHADING_LANGUAGES",
    "SILU_MUL_KERNEL",
    "SOFTMAX_KERNEL",
    "UNWRITTEN",
    "Buffer",
    "Chain",
    "Copy",
    "Dispatch",
    "Filled",
    "Grid",
    "Input",
    "Kernel",
    "KernelSource",
    "Launch",
    "RawLaunch",
    "ShadingLanguage",
    "Step",
    "Table",
    "check_kernel_source",
    "declared_constants",
    "gemm_kernel",
    "kernel_named",
    "plan_add_rms_norm",
    "plan_attention",
    "plan_gemm",
    "plan_layer_norm",
    "plan_rms_norm",
    "plan_rope",
    "plan_silu_mul",
    "plan_softmax",
    "register_kernel",
    "registered_kernels",
    "rope_turn_words",
    "rope_turns",
    "source_for",
    "split_grid",
]
