"""Each namespace's declared default dtypes, read from its own inspection API.

The standard lets a library choose its default integer and index dtypes (``int32`` or
``int64``) and its default floating dtypes, and asks it to declare them through
``xp.__array_namespace_info__().default_dtypes()``. A result dtype that depends on a
default (``sum`` of ``int8``, ``argmax``, ``count_nonzero``) is therefore judged against the
declaring library's own choice: MLX returning ``int32`` where NumPy returns ``int64`` is two
conforming answers, not a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .dtypes import BOOL, COMPLEX, FLOATING, INTEGER, dtype_name

__all__ = [
    "COMMON_DEFAULTS",
    "DefaultDtypes",
    "common_view",
    "declared_defaults",
    "defaults_note",
]


@dataclass(frozen=True)
class DefaultDtypes:
    """A namespace's default dtypes by the standard's keys (names, e.g. ``int32``).

    ``declared`` is False when the namespace has no working inspection API, so these are
    the common defaults assumed for it rather than its own word.
    """

    integral: str = "int64"
    indexing: str = "int64"
    real_floating: str = "float64"
    complex_floating: str = "complex128"
    declared: bool = False

    def options(self) -> dict[str, str]:
        """The keyword options :func:`~diffcheck.values.expected_result_dtype` takes."""
        return {
            "default_int": self.integral,
            "default_index": self.indexing,
            "default_float": self.real_floating,
        }

    def text(self) -> str:
        """``integral int32, indexing int32, real floating float32, ...`` in one line."""
        return (
            f"integral {self.integral}, indexing {self.indexing}, real floating "
            f"{self.real_floating}, complex floating {self.complex_floating}"
        )


#: What a namespace without the inspection API is assumed to use (NumPy's choice).
COMMON_DEFAULTS = DefaultDtypes()


def declared_defaults(xp: Any) -> DefaultDtypes:
    """The default dtypes ``xp`` declares, or :data:`COMMON_DEFAULTS` when it declares none."""
    info = getattr(xp, "__array_namespace_info__", None)
    if info is None:
        return COMMON_DEFAULTS
    try:
        table = info().default_dtypes()
        names = {key: dtype_name(value) for key, value in table.items()}
        return DefaultDtypes(
            integral=names["integral"],
            indexing=names.get("indexing", names["integral"]),
            real_floating=names["real floating"],
            complex_floating=names.get("complex floating", COMMON_DEFAULTS.complex_floating),
            declared=True,
        )
    except Exception:  # a broken inspection API declares nothing: assume the common ones
        return COMMON_DEFAULTS


def defaults_note(reference: DefaultDtypes, candidate: DefaultDtypes) -> str | None:
    """One run-level sentence when the two sides' defaults differ (None when they agree).

    Said once per run, so that a result dtype following each side's own default is not
    reported once per function.
    """
    if (reference.integral, reference.indexing, reference.real_floating) == (
        candidate.integral,
        candidate.indexing,
        candidate.real_floating,
    ):
        return None

    def source(d: DefaultDtypes) -> str:
        return "declared" if d.declared else "assumed (no inspection API)"

    return (
        f"default dtypes differ: reference {source(reference)} {reference.text()}; "
        f"candidate {source(candidate)} {candidate.text()}; results that depend on a "
        "default are judged against each side's own"
    )


def common_view(
    ref: npt.NDArray[Any], ref_dtype: str, cand: npt.NDArray[Any], cand_dtype: str
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]] | None:
    """Both results in one dtype, when each side conforms to its own default but they differ.

    Integers: the values are held in a dtype wide enough for both, and an element either
    side could only have reached by overflowing the narrower dtype (the wider side's value
    lies outside it, or the narrower side wrapped) is taken as agreed: the standard leaves
    integer overflow unspecified. Floats: both are rounded to the narrower dtype, where the
    narrower side's result was computed, and are judged by that dtype's bound (float32
    values next to float64 ones would fail float64's bound for no fault of either side).
    None for pairs that have no common view (bool with a number, complex with real).
    """
    ints = (*INTEGER, BOOL)
    if ref_dtype in ints and cand_dtype in ints:
        if BOOL in (ref_dtype, cand_dtype):
            return None
        low = max(int(np.iinfo(ref_dtype).min), int(np.iinfo(cand_dtype).min))
        high = min(int(np.iinfo(ref_dtype).max), int(np.iinfo(cand_dtype).max))
        wide: Any = object if "uint64" in (ref_dtype, cand_dtype) else np.int64
        r, c = ref.astype(wide), cand.astype(wide)
        inside = (r >= low) & (r <= high) & (c >= low) & (c <= high)
        return r, np.where(inside, c, r)
    if (
        ref_dtype in FLOATING
        and cand_dtype in FLOATING
        and (ref_dtype in COMPLEX) == (cand_dtype in COMPLEX)
    ):
        narrow = ref.dtype if ref.dtype.itemsize <= cand.dtype.itemsize else cand.dtype
        return ref.astype(narrow), cand.astype(narrow)
    return None
