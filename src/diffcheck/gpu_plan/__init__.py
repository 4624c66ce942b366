"""Launch plans for hand-written GPU kernels: which kernel runs, over how many workgroups, on what grid.

The raw-GPU adapters (WebGPU through wgpu, Metal through PyObjC) run the same kernels with
the same tiling. Everything about a launch that is not a driver call lives here, so the
adapters stay thin and this logic is tested without a GPU:

* the kernel chosen per op and shape (``gemv`` when m == 1, the tiled ``gemm`` otherwise;
  one kernel each for softmax, layer-norm, rope, attention and add-rms-norm);
* the tile and workgroup constants every kernel source must declare (checked on load);
* the number of workgroups, split into an (x, y, z) grid under a per-dimension limit
  (WebGPU allows 65535 workgroups per dimension); the kernels linearize the grid back to a
  flat workgroup index and return early past ``groups``;
* the kernel's parameter block, packed as little-endian 32-bit words;
* the entrypoint labels written to reports;
* :func:`run_op`, which runs any op on a :class:`KernelDevice` (upload, record, submit,
  checked wait, read), so adapters implement only the driver calls.

Backend-neutral: nothing here imports a GPU library, and backends name their kernels
through a ``Mapping[Kernel, str]`` they own. The launch arithmetic (kernels, constants,
grids, plans) lives in :mod:`diffcheck.launch`, below the ops, and is re-exported here;
``_run`` (kernel choice, labels, protocols, :func:`run_op`) sits above the ops.
"""

from __future__ import annotations

from ..launch import (
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
    plan_add_rms_norm,
    plan_attention,
    plan_gemm,
    plan_layer_norm,
    plan_rms_norm,
    plan_rope,
    plan_silu_mul,
    plan_softmax,
    rope_turns,
    split_grid,
)
from ._run import (
    FUSED_KERNELS,
    KernelContext,
    KernelDevice,
    entrypoint_label,
    op_kernels,
    record_fused,
    run_independent_chains,
    run_op,
)

__all__ = [
    "ATTENTION_DIMS_PER_THREAD",
    "ATTENTION_THREADS",
    "ELEMENTWISE_THREADS",
    "FUSED_KERNELS",
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
    "KernelContext",
    "KernelDevice",
    "Launch",
    "check_kernel_source",
    "declared_constants",
    "entrypoint_label",
    "gemm_kernel",
    "op_kernels",
    "plan_add_rms_norm",
    "plan_attention",
    "plan_gemm",
    "plan_layer_norm",
    "plan_rms_norm",
    "plan_rope",
    "plan_silu_mul",
    "plan_softmax",
    "record_fused",
    "rope_turns",
    "run_independent_chains",
    "run_op",
    "split_grid",
]
