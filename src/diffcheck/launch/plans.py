"""Launch geometry shared by every hand-written kernel: built-in kernels, constants, grids, parameter blocks."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from .kernels import Kernel, register_kernel

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
    "SILU_MUL_KERNEL",
    "SOFTMAX_KERNEL",
    "Grid",
    "Launch",
    "gemm_kernel",
    "plan_gemm",
    "plan_rms_norm",
    "plan_silu_mul",
    "split_grid",
]


#: Output rows of one GEMM workgroup tile (the contract's 64x32 Metal tile).
GEMM_TILE_M: Final = 64
#: Output columns of one GEMM workgroup tile.
GEMM_TILE_N: Final = 32
#: The reduced dimension loaded into workgroup memory per step.
GEMM_TILE_K: Final = 32
#: GEMM threads per workgroup (x over the tile's columns, y over its rows, 8 rows each).
GEMM_THREADS: Final = (32, 8)
#: GEMV outputs per workgroup (one per thread row) and the lanes that share one dot product.
GEMV_ROWS: Final = 8
GEMV_LANES: Final = 32
#: Threads per workgroup of the element-wise SiLU-mul (one output element each).
ELEMENTWISE_THREADS: Final = 256
#: Threads per RMSNorm workgroup (one workgroup per row, a tree reduction of the squares).
RMS_NORM_THREADS: Final = 256
#: Threads per workgroup of the row kernels (softmax, layer-norm, add-rms-norm): one
#: workgroup per row, each thread loops over a strided slice, a tree reduction combines them.
ROW_THREADS: Final = 256
#: Threads per RoPE workgroup (one rotated pair each).
ROPE_THREADS: Final = 256
#: Threads per attention workgroup (one workgroup per (head, query)): each thread scores
#: one key of a chunk, then owns ``ATTENTION_DIMS_PER_THREAD`` output dimensions of a pass.
ATTENTION_THREADS: Final = 128
ATTENTION_DIMS_PER_THREAD: Final = 4
#: WebGPU's default ``maxComputeWorkgroupsPerDimension``; also used for Metal, where the
#: hardware limit is larger, so both backends launch the same grids.
MAX_WORKGROUPS_PER_DIMENSION: Final = 65535


def _builtin(name: str, **constants: int) -> Kernel:
    return register_kernel(Kernel(name, constants))


# diffcheck's own kernels, with the constants their shipped sources declare (the adapters
# refuse a source whose values differ). Their sources ship with the adapters, by these names.
GEMM_KERNEL: Final = _builtin(
    "gemm",
    TILE_M=GEMM_TILE_M,
    TILE_N=GEMM_TILE_N,
    TILE_K=GEMM_TILE_K,
    THREADS_X=GEMM_THREADS[0],
    THREADS_Y=GEMM_THREADS[1],
)
GEMV_KERNEL: Final = _builtin("gemv", ROWS=GEMV_ROWS, LANES=GEMV_LANES)
SILU_MUL_KERNEL: Final = _builtin("silu_mul", THREADS=ELEMENTWISE_THREADS)
RMS_NORM_KERNEL: Final = _builtin("rms_norm", THREADS=RMS_NORM_THREADS)
SOFTMAX_KERNEL: Final = _builtin("softmax", THREADS=ROW_THREADS)
LAYER_NORM_KERNEL: Final = _builtin("layer_norm", THREADS=ROW_THREADS)
ADD_RMS_NORM_KERNEL: Final = _builtin("add_rms_norm", THREADS=ROW_THREADS)
ROPE_KERNEL: Final = _builtin("rope", THREADS=ROPE_THREADS)
ATTENTION_KERNEL: Final = _builtin(
    "attention", THREADS=ATTENTION_THREADS, DIMS_PER_THREAD=ATTENTION_DIMS_PER_THREAD
)
#: The built-in kernels, in registration order.
BUILTIN_KERNELS: Final = (
    GEMM_KERNEL,
    GEMV_KERNEL,
    SILU_MUL_KERNEL,
    RMS_NORM_KERNEL,
    SOFTMAX_KERNEL,
    LAYER_NORM_KERNEL,
    ADD_RMS_NORM_KERNEL,
    ROPE_KERNEL,
    ATTENTION_KERNEL,
)

_U32_MAX: Final = 2**32 - 1


@dataclass(frozen=True)
class Grid:
    """A 3-D workgroup grid; ``x * y * z`` may exceed the workgroups it covers."""

    x: int
    y: int
    z: int

    @property
    def size(self) -> int:
        """Workgroups launched (the kernel returns early for those past the flat count)."""
        return self.x * self.y * self.z

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.x, self.y, self.z)


def split_grid(workgroups: int, limit: int = MAX_WORKGROUPS_PER_DIMENSION) -> Grid:
    """Lay ``workgroups`` out on a grid with at most ``limit`` workgroups per dimension.

    The kernels recover the flat index as ``(z * groups_y + y) * groups_x + x``. x is filled
    first, then y, then z, so the grid launches fewer than ``x * y`` surplus workgroups.

    Parameters
    ----------
    workgroups
        The flat number of workgroups the launch needs (at least 1).
    limit
        The device's maximum workgroups per grid dimension (at least 1).

    Returns
    -------
    Grid
        The smallest grid of this shape that covers ``workgroups``.

    Raises
    ------
    ValueError
        When ``workgroups`` or ``limit`` is below 1, or ``workgroups`` exceeds ``limit``³.
    """
    if workgroups < 1 or limit < 1:
        raise ValueError(f"workgroups={workgroups}, limit={limit}, but both must be at least 1")
    if workgroups > limit**3:
        raise ValueError(
            f"{workgroups} workgroups do not fit a grid of at most {limit} per dimension "
            f"({limit**3} in all); use a larger tile or a device with a higher limit"
        )
    x = min(workgroups, limit)
    rows = -(-workgroups // x)
    y = min(rows, limit)
    z = -(-rows // y)
    return Grid(x, y, z)


@dataclass(frozen=True)
class Launch:
    """One kernel launch: the kernel, its workgroup size, its grid and its parameter words."""

    kernel: Kernel
    #: The flat workgroup count the kernel covers (its ``groups`` parameter).
    groups: int
    #: Threads per workgroup, (x, y); the kernels use z = 1.
    threads: tuple[int, int]
    grid: Grid
    #: The parameter block as 32-bit words, in the kernel's struct order.
    words: tuple[int, ...]

    def params_bytes(self) -> bytes:
        """The parameter block, little-endian, zero-padded to 16 bytes (WebGPU uniform alignment)."""
        padded = self.words + (0,) * (-len(self.words) % 4)
        return struct.pack(f"<{len(padded)}I", *padded)


def _ceil_div(value: int, step: int) -> int:
    return -(-value // step)


def _words(*values: int) -> tuple[int, ...]:
    for value in values:
        if not 0 <= value <= _U32_MAX:
            raise ValueError(f"kernel parameter {value} does not fit an unsigned 32-bit word")
    return values


def _f32_word(value: float) -> int:
    """The IEEE-754 single-precision bits of ``value`` (the kernels read it as an f32)."""
    word: int = struct.unpack("<I", struct.pack("<f", value))[0]
    return word


def gemm_kernel(m: int) -> Kernel:
    """The GEMM kernel for ``m`` rows: the GEMV kernel for one row, the tiled kernel otherwise."""
    return GEMV_KERNEL if m == 1 else GEMM_KERNEL


def plan_gemm(m: int, n: int, k: int, *, limit: int = MAX_WORKGROUPS_PER_DIMENSION) -> Launch:
    """The launch of C[m, n] = A[m, k] · B[n, k]ᵀ (shape already validated by the op).

    Tiled: parameters ``(m, n, k, tiles_n, groups)``, one workgroup per 64x32 output tile,
    tiles numbered row-major. GEMV (m == 1): parameters ``(n, k, groups)``, one workgroup per
    ``GEMV_ROWS`` outputs.
    """
    if gemm_kernel(m) is GEMV_KERNEL:
        groups = _ceil_div(n, GEMV_ROWS)
        return Launch(
            GEMV_KERNEL,
            groups,
            (GEMV_LANES, GEMV_ROWS),
            split_grid(groups, limit),
            _words(n, k, groups),
        )
    tiles_n = _ceil_div(n, GEMM_TILE_N)
    groups = _ceil_div(m, GEMM_TILE_M) * tiles_n
    return Launch(
        GEMM_KERNEL,
        groups,
        GEMM_THREADS,
        split_grid(groups, limit),
        _words(m, n, k, tiles_n, groups),
    )


def plan_silu_mul(
    tokens: int, intermediate: int, *, limit: int = MAX_WORKGROUPS_PER_DIMENSION
) -> Launch:
    """The launch of the split SiLU-mul: parameters ``(tokens, intermediate, total, groups)``."""
    total = tokens * intermediate
    groups = _ceil_div(total, ELEMENTWISE_THREADS)
    return Launch(
        SILU_MUL_KERNEL,
        groups,
        (ELEMENTWISE_THREADS, 1),
        split_grid(groups, limit),
        _words(tokens, intermediate, total, groups),
    )


def plan_rms_norm(
    tokens: int, dim: int, eps: float, *, limit: int = MAX_WORKGROUPS_PER_DIMENSION
) -> Launch:
    """The launch of RMSNorm, one workgroup per row: parameters ``(tokens, dim, eps as f32 bits)``."""
    return Launch(
        RMS_NORM_KERNEL,
        tokens,
        (RMS_NORM_THREADS, 1),
        split_grid(tokens, limit),
        _words(tokens, dim, _f32_word(eps)),
    )
