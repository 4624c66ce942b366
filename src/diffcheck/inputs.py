"""Deterministic, documented input generation.

``random_vec(n, lo, hi, seed)`` is the one source of inputs for every op. It is diffcheck's
own generator, not bit-identical to the reference tool's Rust ``StdRng`` (the contract allows
this): NumPy's PCG64 bit generator seeded with the u64 ``seed`` draws ``n`` float32 values
uniform in [0, 1) (24 random bits each, ``Generator.random(dtype=float32)``), which are mapped
to ``u * (hi - lo) + lo`` in float32 arithmetic. The same seed gives the same bits on every
platform and NumPy version that keeps PCG64's documented stream.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._numbers import U64_MAX

__all__ = ["offset_seed", "random_vec"]


def offset_seed(seed: int, offset: int) -> int:
    """``seed + offset`` with the reference tool's wrapping u64 addition."""
    return (seed + offset) & U64_MAX


def random_vec(n: int, lo: float, hi: float, seed: int) -> npt.NDArray[np.float32]:
    """``n`` float32 values uniform in [lo, hi), fully determined by ``seed``."""
    generator = np.random.Generator(np.random.PCG64(seed))
    unit = generator.random(n, dtype=np.float32)
    return unit * np.float32(hi - lo) + np.float32(lo)
