"""What ``compare(..., mode="nmse")`` may cast to float32 without changing a value.

NMSE mode compares float32 copies. A real floating output widened or narrowed to float32 is
what NMSE measures (its tolerance is a float32 bucket), but two casts would compare
something else than the outputs: a complex output loses its imaginary part (a wrong
imaginary part would pass), and an integer above 2**24 is rounded (16777217 and 16777216
are the same float32). Such outputs are refused, with a pointer to ``mode="values"``, which
compares every dtype exactly. They are refused rather than routed there because values mode
returns another verdict type and has no ``max_nmse``, ``precision`` or ``segments``: the
caller must choose it knowingly.

Integer and bool *inputs* are cast to float32 too; that cast is kept only when exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import ConfigError
from .values.dtypes import REAL_FLOATING, dtype_name

__all__ = ["float32_input", "lossy_output", "refuse_lossy_reference"]

#: Every integer of magnitude up to 2**24 is a float32; above it some are not.
_EXACT_INTEGERS = 2**24
_VALUES_HINT = 'compare it with mode="values", which keeps every dtype and compares exactly'


def _inexact_integer(host: npt.NDArray[Any]) -> int | None:
    """The flat index of the first integer that float32 does not hold exactly, or None."""
    flat = host.reshape(-1)
    # Magnitudes are screened in float64 (coarse but monotonic); only the few large values
    # are checked exactly, as Python integers.
    large = np.flatnonzero(np.abs(flat.astype(np.float64)) > _EXACT_INTEGERS)
    for index in large.tolist():
        value = int(flat[index])
        if int(np.float32(value)) != value:
            return int(index)
    return None


def float32_input(host: npt.NDArray[Any], index: int) -> npt.NDArray[np.float32]:
    """A float32 copy of input ``index`` (shape kept); ConfigError for a lossy cast."""
    kind = host.dtype.kind
    if kind not in "biuf":
        raise ConfigError(
            f"input {index} has dtype {host.dtype}, but nmse mode needs real numbers (they "
            f"are converted to float32); {_VALUES_HINT}"
        )
    if kind in "iu" and (bad := _inexact_integer(host)) is not None:
        raise ConfigError(
            f"input {index} holds {host.reshape(-1)[bad]} at flat index {bad}, which float32 "
            f"cannot hold exactly (nmse mode converts inputs to float32); {_VALUES_HINT}"
        )
    converted = np.ascontiguousarray(host, dtype=np.float32)
    if kind == "f" and (flushed := _flushed(host, converted)) is not None:
        raise ConfigError(
            f"input {index} holds {host.reshape(-1)[flushed].item()!r} at flat index {flushed}, which "
            f"float32 flushes to zero (nmse mode converts inputs to float32); scale the inputs "
            f"into float32's range or {_VALUES_HINT}"
        )
    return converted


def _flushed(host: npt.NDArray[Any], converted: npt.NDArray[np.float32]) -> int | None:
    """The flat index of the first non-zero value the float32 cast made zero, or None."""
    if host.dtype.itemsize <= 4:  # float16/float32 values are all float32 values
        return None
    lost = np.flatnonzero((converted.reshape(-1) == 0) & (host.reshape(-1) != 0))
    return int(lost[0]) if lost.size else None


def _dtype_of(output: Any) -> str:
    # Read the library's own dtype: converting a bfloat16 tensor to NumPy would raise.
    dtype = getattr(output, "dtype", None)
    return dtype_name(np.asarray(output).dtype if dtype is None else dtype)


def refuse_lossy_reference(outputs: Sequence[Any], reference: str) -> None:
    """ConfigError when a reference output is not real floating (float32 would change it)."""
    for index, output in enumerate(outputs):
        name = _dtype_of(output)
        if name not in REAL_FLOATING:
            raise ConfigError(
                f"output {index} of the reference {reference} has dtype {name}, but nmse mode "
                f"compares real floating outputs as float32 (a {name} output would be cast "
                f"with loss); {_VALUES_HINT}"
            )


def lossy_output(outputs: Sequence[Any], references: Sequence[Any]) -> str | None:
    """Why a candidate's outputs cannot be compared as float32 where the reference's can.

    None when every candidate output is real floating. Otherwise the reason for a failed
    verdict: the reference returned floats, so a complex or integer result is the
    candidate's divergence, not the caller's misuse.
    """
    for index, output in enumerate(outputs):
        name = _dtype_of(output)
        if name not in REAL_FLOATING:
            expected = _dtype_of(references[index]) if index < len(references) else "none"
            return (
                f"output {index} has dtype {name} on the candidate but {expected} on the "
                f"reference; nmse mode does not compare a lossy cast to float32"
            )
    return None
