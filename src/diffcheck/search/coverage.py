"""What a function's search drew: distinct input values per class, so coverage is visible.

Each array input element of a drawn example (shrink runs excluded) is put in one class:
``ordinary`` (finite, nonzero, normal), ``subnormal``, ``zero``, ``inf``, ``nan`` for real
floating values (the real and imaginary parts of complex values count alike), ``integer``
and ``bool`` for the rest. The counts are of *distinct* values (by their bits and dtype),
capped at :data:`CAP` per class, so a run of a million equal draws counts one. A value
strategy that knows finer classes (near a pole, near overflow) can pass them through
:meth:`Coverage.add_class`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["CAP", "CLASSES", "Coverage"]

#: The most distinct values counted per class (a count at the cap means "at least").
CAP = 100_000
#: The classes every count holds, in the order they are reported.
CLASSES = ("ordinary", "subnormal", "zero", "inf", "nan", "integer", "bool")


def _float_classes(values: np.ndarray) -> dict[str, np.ndarray]:
    finfo = np.finfo(values.dtype)
    magnitude = np.abs(values)
    finite = np.isfinite(values)
    zero = values == 0
    subnormal = finite & ~zero & (magnitude < finfo.smallest_normal)
    return {
        "ordinary": values[finite & ~zero & ~subnormal],
        "subnormal": values[subnormal],
        "zero": values[zero],
        "inf": values[np.isinf(values)],
        "nan": values[np.isnan(values)],
    }


class Coverage:
    """Distinct drawn values per class for one function."""

    def __init__(self) -> None:
        self._seen: dict[str, set[tuple[str, bytes]]] = {name: set() for name in CLASSES}

    def add_class(self, name: str, dtype: str, values: Iterable[bytes]) -> None:
        """Count ``values`` (each a value's bytes) as distinct members of class ``name``."""
        seen = self._seen.setdefault(name, set())
        for value in values:
            if len(seen) >= CAP:
                return
            seen.add((dtype, value))

    def _add_array(self, array: np.ndarray) -> None:
        dtype = array.dtype
        flat = np.ascontiguousarray(array).reshape(-1)
        if dtype.kind == "c":
            parts = [flat.real, flat.imag]
        elif dtype.kind == "f":
            parts = [flat]
        else:
            name = "bool" if dtype.kind == "b" else "integer"
            self._add_unique(name, flat)
            return
        for part in parts:
            for name, values in _float_classes(np.ascontiguousarray(part)).items():
                self._add_unique(name, values, dtype.name)

    def _add_unique(self, name: str, values: np.ndarray, label: str | None = None) -> None:
        if values.size == 0 or len(self._seen[name]) >= CAP:
            return
        unique = np.unique(values.view(f"V{values.dtype.itemsize}"))
        raw = unique.tobytes()
        size = values.dtype.itemsize
        pieces = (raw[i : i + size] for i in range(0, len(raw), size))
        self.add_class(name, label or values.dtype.name, pieces)

    def add(self, args: Iterable[Any]) -> None:
        """Count the array inputs among ``args`` (bfloat16 ones come as tagged pairs)."""
        for arg in args:
            if isinstance(arg, tuple) and len(arg) == 2 and isinstance(arg[1], str):
                arg = arg[0]
            if isinstance(arg, np.ndarray) and arg.dtype.kind in "biufc":
                self._add_array(arg)

    def counts(self, dtype: str | None = None) -> dict[str, int]:
        """Distinct values drawn per class (every class present, zero when none).

        ``dtype`` counts only values drawn in arrays of that dtype (a ``complex64``
        array's parts count under ``complex64``, not ``float32``).
        """
        if dtype is None:
            return {name: len(values) for name, values in self._seen.items()}
        return {
            name: sum(1 for own, _ in values if own == dtype) for name, values in self._seen.items()
        }
