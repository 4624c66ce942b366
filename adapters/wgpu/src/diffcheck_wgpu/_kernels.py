"""The WGSL kernel sources shipped in this package, and the names reports give them."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

from diffcheck.gpu_plan import Kernel

__all__ = ["KERNEL_FILES", "KERNEL_NAMES", "kernel_source"]

#: Source file and entry point of each kernel.
KERNEL_FILES: Final = {
    Kernel.GEMM: ("gemm.wgsl", "gemm_f32_tiled"),
    Kernel.GEMV: ("gemv.wgsl", "gemv_f32"),
    Kernel.SILU_MUL: ("silu_mul.wgsl", "silu_mul_split_f32"),
    Kernel.RMS_NORM: ("rms_norm.wgsl", "rms_norm_f32"),
    Kernel.SOFTMAX: ("softmax.wgsl", "softmax_f32"),
    Kernel.LAYER_NORM: ("layer_norm.wgsl", "layer_norm_f32"),
    Kernel.ROPE: ("rope.wgsl", "rope_f32"),
    Kernel.ATTENTION: ("attention.wgsl", "attention_f32"),
    Kernel.ADD_RMS_NORM: ("add_rms_norm.wgsl", "add_rms_norm_f32"),
}
#: What each step is called in entrypoint labels (the copy is a command-encoder copy).
KERNEL_NAMES: Final = {
    **{kernel: entry for kernel, (_, entry) in KERNEL_FILES.items()},
    Kernel.COPY: "copy_buffer_to_buffer",
}


@functools.cache
def kernel_source(filename: str) -> str:
    """The text of ``kernels/<filename>`` from the installed package."""
    return (
        resources.files("diffcheck_wgpu").joinpath("kernels", filename).read_text(encoding="utf-8")
    )
