"""What :func:`~diffcheck.differ.diff` may measure by NMSE, and what it compares exactly.

NMSE is measured in float64 over real numbers. Three kinds of input would make it judge
something else than the arrays given, and each is bound here before a verdict is made:

* a complex array would lose its imaginary part in the float64 copy (``z`` against
  ``conj(z)`` would pass): refused;
* integers and bools are exact values, so a tolerance says nothing about them
  (16777217 against 16777216 is NMSE 3.6e-15, and ``uint64`` max against max - 1 is the same
  float64): they are compared exactly, element by element; beside a float array they are
  compared through float64, which holds them only up to 2**53 (refused above);
* a reference that is not all zero but whose energy ``mean(ref^2)`` lies below the
  absolute-MSE floor is judged by absolute MSE, so a 100% error on values of magnitude
  1e-20, or on float64 values below float32's range (1e-300 squares to zero), passes:
  refused, the data must be scaled. An all-zero reference keeps the floor, which is what it
  is for.

The reference tool's comparator (:func:`~diffcheck.differ.compare_outputs`, used by the
registered checks on float outputs) keeps its contract unchanged; these bindings belong to
the Python entry points (``diff`` and ``compare``, which goes through ``diff``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from .verdict import ABSOLUTE_MSE_FLOOR, Metrics

__all__ = ["exact_difference", "measurable", "refuse_below_floor"]

#: Every integer of magnitude up to 2**53 is a float64; above it some are not.
_FLOAT64_INTEGERS = 2**53
_VALUES_HINT = 'use compare(..., mode="values"), which keeps every dtype and compares exactly'


def _kind(array: npt.NDArray[Any], label: str) -> str:
    kind = array.dtype.kind
    if kind == "c":
        raise ConfigError(
            f"the {label} has dtype {array.dtype}, but NMSE is measured over real "
            f"numbers and the imaginary part would be dropped; pass the real and imaginary "
            f"parts as real arrays (x.real, x.imag) or {_VALUES_HINT}"
        )
    if kind not in "biuf":
        raise ConfigError(
            f"the {label} has dtype {array.dtype}, but diff compares numbers "
            f"(bool, integer or real floating); convert it to a numeric array"
        )
    return kind


def _refuse_wide_integers(array: npt.NDArray[Any], label: str) -> None:
    """Integers beside a float array are compared through float64: they must fit it."""
    if array.size and (
        int(array.max()) > _FLOAT64_INTEGERS or int(array.min()) < -_FLOAT64_INTEGERS
    ):
        raise ConfigError(
            f"the {label} holds integers beyond 2**53, which the other side's float "
            f"values cannot be compared with exactly; pass both sides as integers or "
            f"{_VALUES_HINT}"
        )


def measurable(reference: npt.NDArray[Any], actual: npt.NDArray[Any]) -> bool:
    """Whether the pair is compared exactly (an integer or bool side); ConfigError for a pair
    that neither NMSE nor an exact comparison can judge faithfully (see the module)."""
    kinds = _kind(reference, "reference"), _kind(actual, "actual")
    exact = [kind in "biu" for kind in kinds]
    if exact[0] != exact[1]:
        _refuse_wide_integers(
            reference if exact[0] else actual, "reference" if exact[0] else "actual"
        )
    return any(exact)


def exact_difference(reference: npt.NDArray[Any], actual: npt.NDArray[Any]) -> str | None:
    """Why two equally long flat arrays of exact values differ (the first index), or None."""
    if reference.size != actual.size:
        return None  # the length mismatch is the comparator's own failure
    differs = np.flatnonzero(np.not_equal(reference, actual))
    if differs.size == 0:
        return None
    index = int(differs[0])
    return (
        f"exact values differ at {differs.size} of {reference.size} elements, first at flat "
        f"index {index}: reference {reference[index].item()!r}, actual "
        f"{actual[index].item()!r} (integers and bools are compared exactly, not by NMSE)"
    )


def refuse_below_floor(reference: npt.NDArray[Any], metrics: Metrics | None) -> None:
    """ConfigError when a reference that is not all zero was judged by the absolute-MSE floor."""
    if metrics is None or not metrics.uses_absolute_mse or not np.any(reference):
        return
    raise ConfigError(
        f"the reference is not all zero but its energy mean(ref^2) = "
        f"{metrics.reference_mse:.3g} is below the absolute-MSE floor {ABSOLUTE_MSE_FLOOR:g}, "
        f"where NMSE would be judged as absolute MSE and a 100% error passes; scale both "
        f"arrays by the same factor (e.g. 1 / max|reference|) or {_VALUES_HINT}"
    )
