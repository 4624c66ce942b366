"""The WGSL kernel sources shipped in this package, and the names reports give them."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

from diffcheck.gpu_plan import Kernel, KernelSource, source_for

__all__ = ["COPY_NAME", "KERNEL_FILES", "KERNEL_NAMES", "kernel_source", "source_of"]

#: Source file and entry point of each built-in kernel, by kernel name.
KERNEL_FILES: Final = {
    "gemm": ("gemm.wgsl", "gemm_f32_tiled"),
    "gemv": ("gemv.wgsl", "gemv_f32"),
    "silu_mul": ("silu_mul.wgsl", "silu_mul_split_f32"),
    "rms_norm": ("rms_norm.wgsl", "rms_norm_f32"),
    "softmax": ("softmax.wgsl", "softmax_f32"),
    "layer_norm": ("layer_norm.wgsl", "layer_norm_f32"),
    "rope": ("rope.wgsl", "rope_f32"),
    "attention": ("attention.wgsl", "attention_f32"),
    "add_rms_norm": ("add_rms_norm.wgsl", "add_rms_norm_f32"),
}
#: The entry point of each shipped kernel, by kernel name (what reports call the step).
KERNEL_NAMES: Final = {name: entry for name, (_, entry) in KERNEL_FILES.items()}
#: What the buffer-to-buffer copy step is called in entrypoint labels (the copy is a command-encoder copy).
COPY_NAME: Final = "copy_buffer_to_buffer"


@functools.cache
def kernel_source(filename: str) -> str:
    """The text of ``kernels/<filename>`` from the installed package."""
    return (
        resources.files("diffcheck_wgpu").joinpath("kernels", filename).read_text(encoding="utf-8")
    )


def source_of(kernel: Kernel) -> tuple[KernelSource, str]:
    """The WGSL source this adapter compiles for ``kernel``, and where it came from (for messages).

    The kernel's own source (an op plugin's) first, else the one shipped here under its name
    (read through this module's ``kernel_source``, which tests replace with a faulty text).

    Raises
    ------
    KeyError
        When neither exists.
    """
    return source_for(kernel, "wgsl", KERNEL_FILES, lambda filename: kernel_source(filename))
