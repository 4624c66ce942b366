"""Storage precisions, their default tolerances, and exact f32 bit storage."""

from __future__ import annotations

from typing import Final, Literal, get_args

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_MAX_NMSE",
    "PRECISIONS",
    "TWIN_NAMES",
    "PrecisionName",
    "TwinName",
    "default_max_nmse",
    "f32_bits",
    "f32_from_bits",
]

PrecisionName = Literal["f32", "f16", "bf16"]
PRECISIONS: Final[tuple[PrecisionName, ...]] = get_args(PrecisionName)

#: The twins of :mod:`diffcheck.floor`: implementations of an op or function at a known
#: precision, run on the host beside every check. The first three are honest at their storage
#: (float32 arithmetic); the others are the downgrades a kernel quietly makes: matmul operands
#: rounded to TF32 (to nearest, or truncated as a tensor core reads raw float32), float16 or
#: bfloat16, and every operation's result rounded to float16 or
#: bfloat16. A known divergence names one as its model (``KnownDivergence.twin``).
TwinName = Literal[
    "float32",
    "float16 storage",
    "bfloat16 storage",
    "tf32 operands",
    "tf32 truncated operands",
    "float16 operands",
    "bfloat16 operands",
    "float16 matmuls",
    "bfloat16 matmuls",
    "float16 arithmetic",
    "bfloat16 arithmetic",
]
TWIN_NAMES: Final[tuple[TwinName, ...]] = get_args(TwinName)

#: Default NMSE tolerance by the precision the candidate stores data in. f32 and f16 are the
#: reference tool's buckets (NMSE_FP32_TOL, NMSE_FP16_TOL). bf16 keeps 8 significand bits, so
#: rounding inputs and output alone gives an NMSE near 1.5e-5; 1e-4 leaves headroom for
#: accumulation while still catching a wrong element of ordinary magnitude.
DEFAULT_MAX_NMSE: Final[dict[PrecisionName, float]] = {"f32": 1e-7, "f16": 1e-6, "bf16": 1e-4}


def default_max_nmse(precision: PrecisionName) -> float:
    """The tolerance used when a check does not name one."""
    return DEFAULT_MAX_NMSE[precision]


def f32_bits(values: npt.ArrayLike) -> list[int]:
    """Exact IEEE-754 bit patterns of float32 values (NaN payloads, -0.0 and inf survive)."""
    array = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
    return array.view(np.uint32).tolist()


def f32_from_bits(bits: list[int] | npt.NDArray[np.uint32]) -> npt.NDArray[np.float32]:
    """The float32 array whose bit patterns are ``bits``."""
    return np.asarray(bits, dtype=np.uint32).view(np.float32)
