"""The MSL kernel sources shipped in this package, and the names reports give them."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

from diffcheck.gpu_plan import Kernel, KernelSource, source_for

__all__ = ["COPY_NAME", "KERNEL_FILES", "KERNEL_NAMES", "kernel_source", "source_of"]

#: Source file and kernel function of each built-in kernel, by kernel name (the contract's Metal names).
KERNEL_FILES: Final = {
    "gemm": ("gemm.metal", "gemm_f32_v2"),
    "gemv": ("gemv.metal", "gemv_f32"),
    "silu_mul": ("silu_mul.metal", "silu_mul_split_f32"),
    "rms_norm": ("rms_norm.metal", "rms_norm_f32"),
    "softmax": ("softmax.metal", "softmax_f32"),
    "layer_norm": ("layer_norm.metal", "layer_norm_f32"),
    "rope": ("rope.metal", "rope_f32"),
    "attention": ("attention.metal", "attention_f32"),
    "add_rms_norm": ("add_rms_norm.metal", "add_rms_norm_f32"),
}
#: The entry point of each shipped kernel, by kernel name (what reports call the step).
KERNEL_NAMES: Final = {name: entry for name, (_, entry) in KERNEL_FILES.items()}
#: What the buffer-to-buffer copy step is called in entrypoint labels (the copy is a blit encoder copy).
COPY_NAME: Final = "blit"


@functools.cache
def kernel_source(filename: str) -> str:
    """The text of ``kernels/<filename>`` from the installed package."""
    files = resources.files("diffcheck_metal")
    return files.joinpath("kernels", filename).read_text(encoding="utf-8")


def source_of(kernel: Kernel) -> tuple[KernelSource, str]:
    """The MSL source this adapter compiles for ``kernel``, and where it came from (for messages).

    The kernel's own source (an op plugin's) first, else the one shipped here under its name
    (read through this module's ``kernel_source``, which tests replace with a faulty text).

    Raises
    ------
    KeyError
        When neither exists.
    """
    return source_for(kernel, "msl", KERNEL_FILES, lambda filename: kernel_source(filename))
