"""Launch geometry of the hand-written GPU kernels: pure arithmetic, no GPU library, no op.

Which kernels exist (:class:`Kernel`), the tile and workgroup constants every kernel source
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
    rope_turns,
)
from .plans import (
    ATTENTION_DIMS_PER_THREAD,
    ATTENTION_THREADS,
    ELEMENTWISE_THREADS,
    GEMM_THREADS,
    GEMM_TILE_K,
    GEMM_TILE_M,
    GEMM_TILE_N,
    GEMV_LANES,
    GEMV_ROWS,
    KERNEL_CONSTANTS,
    MAX_WORKGROUPS_PER_DIMENSION,
    RMS_NORM_THREADS,
    ROPE_THREADS,
    ROW_THREADS,
    Grid,
    Kernel,
    Launch,
    check_kernel_source,
    declared_constants,
    gemm_kernel,
    plan_gemm,
    plan_rms_norm,
    plan_silu_mul,
    split_grid,
)

__all__ = [
    "ATTENTION_DIMS_PER_THREAD",
    "ATTENTION_THREADS",
    "ELEMENTWISE_THREADS",
    "GEMM_THREADS",
    "GEMM_TILE_K",
    "GEMM_TILE_M",
    "GEMM_TILE_N",
    "GEMV_LANES",
    "GEMV_ROWS",
    "KERNEL_CONSTANTS",
    "MAX_WORKGROUPS_PER_DIMENSION",
    "RMS_NORM_THREADS",
    "ROPE_THREADS",
    "ROW_THREADS",
    "Grid",
    "Kernel",
    "Launch",
    "check_kernel_source",
    "declared_constants",
    "gemm_kernel",
    "plan_add_rms_norm",
    "plan_attention",
    "plan_gemm",
    "plan_layer_norm",
    "plan_rms_norm",
    "plan_rope",
    "plan_silu_mul",
    "plan_softmax",
    "rope_turns",
    "split_grid",
]
