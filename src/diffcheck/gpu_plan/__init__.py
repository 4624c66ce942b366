"""Launch plans for hand-written GPU kernels: which kernel runs, over how many workgroups, on what grid.

The raw-GPU adapters (WebGPU through wgpu, Metal through PyObjC) run the same kernels with
the same tiling. Everything about a launch that is not a driver call lives here, so the
adapters stay thin and this logic is tested without a GPU:

* the kernels, an open registry keyed by name (:class:`Kernel`: diffcheck's own and any an
  op plugin registers with its WGSL and MSL sources), and the constants every kernel
  source must declare (checked on load);
* what each op runs: the op describes it (:meth:`diffcheck.ops.Op.raw_launch` returns a
  :class:`RawLaunch` of buffers, kernel dispatches and copies; ``gemv`` when m == 1, the
  tiled ``gemm`` otherwise), so no op is named here;
* the number of workgroups, split into an (x, y, z) grid under a per-dimension limit
  (WebGPU allows 65535 workgroups per dimension); the kernels linearize the grid back to a
  flat workgroup index and return early past ``groups``;
* the kernel's parameter block, packed as little-endian 32-bit words;
* the entrypoint labels written to reports;
* :func:`run_op`, which runs any op's raw launch on a :class:`KernelDevice` (upload,
  record, submit, checked wait, read), so adapters implement only the driver calls.

Backend-neutral: nothing here imports a GPU library; each backend names a kernel by the entry
point of its source (shipped with the adapter, or the op's own). The launch arithmetic
(kernels, constants, grids, plans, raw launches) lives in :mod:`diffcheck.launch`, below the
ops, and is re-exported here; ``_run`` (labels, protocols, :func:`run_op`) sits above the ops.
"""

from __future__ import annotations

# The launch arithmetic is part of this package's public API: re-export all of it.
from .. import launch as _launch
from ..launch import *  # noqa: F403
from ._run import (
    KernelContext,
    KernelDevice,
    entrypoint_label,
    raw_launch,
    record_chain,
    run_op,
    step_names,
)

__all__ = [
    *_launch.__all__,
    "KernelContext",
    "KernelDevice",
    "entrypoint_label",
    "raw_launch",
    "record_chain",
    "run_op",
    "step_names",
]
