"""The MSL kernel sources shipped in this package, and the names reports give them."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

from diffcheck.gpu_plan import Kernel

__all__ = ["KERNEL_FILES", "KERNEL_NAMES", "kernel_source"]

#: Source file and kernel function of each kernel (the contract's Metal names).
KERNEL_FILES: Final = {
    Kernel.GEMM: ("gemm.metal", "gemm_f32_v2"),
    Kernel.GEMV: ("gemv.metal", "gemv_f32"),
    Kernel.SILU_MUL: ("silu_mul.metal", "silu_mul_split_f32"),
    Kernel.RMS_NORM: ("rms_norm.metal", "rms_norm_f32"),
    Kernel.SOFTMAX: ("softmax.metal", "softmax_f32"),
    Kernel.LAYER_NORM: ("layer_norm.metal", "layer_norm_f32"),
    Kernel.ROPE: ("rope.metal", "rope_f32"),
    Kernel.ATTENTION: ("attention.metal", "attention_f32"),
    Kernel.ADD_RMS_NORM: ("add_rms_norm.metal", "add_rms_norm_f32"),
}
#: What each step is called in entrypoint labels (the copy is a blit encoder copy).
KERNEL_NAMES: Final = {
    **{kernel: entry for kernel, (_, entry) in KERNEL_FILES.items()},
    Kernel.COPY: "blit",
}


@functools.cache
def kernel_source(filename: str) -> str:
    """The text of ``kernels/<filename>`` from the installed package."""
    files = resources.files("diffcheck_metal")
    return files.joinpath("kernels", filename).read_text(encoding="utf-8")
