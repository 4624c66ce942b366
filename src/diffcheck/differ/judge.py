"""The strict NMSE comparator: one host array against another, judged as the reference tool does.

Pure and backend-agnostic: host arrays in, a :class:`Verdict` out. It never names a backend.
The semantics are the reference tool's comparator, exactly:

1. the tolerance must be finite and > 0;
2. the reference must be non-empty and finite (the first non-finite index is reported);
3. the actual output must be non-empty, of the reference's length, and finite;
4. in float64, ``nmse = mean((ref - act)^2) / mean(ref^2)``, falling back to the absolute
   ``mean((ref - act)^2)`` when ``mean(ref^2) < 1e-30``;
5. it passes only when ``nmse < tolerance`` (equality fails); a numerical failure keeps its
   metrics, a validation failure has none.

All figures of one range (both sums, max |diff| and its first index, max ULP, the first
non-finite index of each array) come from one pass over both arrays, in parallel over the
cores, with extra memory bounded by a small constant (:mod:`diffcheck.differ._measure` says how and
why). ULP distances are counted in the output's storage format (``ulp_dtype``): both values
are rounded to nearest-even into that format and mapped to ordered integers in which ``+0``
and ``-0`` coincide, so a pair on either side of zero counts the representable values
between them on both sides (the two smallest subnormals of opposite sign are 2 ulp apart).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._numbers import rust_display
from ._measure import Figures, default_ulp_format, measure, ulp_format
from ._measure import _first_bad as _first_bad
from .verdict import ABSOLUTE_MSE_FLOOR, AROUND_RADIUS, Around, Metrics, Verdict, _Failure

__all__ = ["around", "compare_outputs", "host_array", "reference_problem", "to_host"]


def host_array(array: Any) -> npt.NDArray[Any]:
    """A host (NumPy) view of any array, in its own shape, copying only when required.

    NumPy arrays pass through; objects speaking DLPack on the CPU are wrapped without a copy;
    everything else goes through ``numpy.asarray`` (the buffer protocol where it exists).
    """
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "__dlpack__"):
        try:
            return np.from_dlpack(array)
        except (BufferError, TypeError, RuntimeError, ValueError):
            pass  # a device array or an unsupported dtype: let the library convert it
    return np.asarray(array)


def to_host(array: Any) -> npt.NDArray[Any]:
    """A flat host view of any array (see :func:`host_array`)."""
    return host_array(array).reshape(-1)


def _first_non_finite(values: npt.NDArray[Any]) -> int | None:
    """The first index of a NaN or infinity, read in blocks (no full-size temporary)."""
    return _first_bad(values)


def reference_problem(reference: npt.NDArray[Any]) -> str | None:
    """Why ``reference`` cannot be compared against (empty, or holding a NaN or infinity).

    None for a usable reference. The runner stops before dispatching the candidate with
    this reason, and replay re-derives it from a stored reference.
    """
    if reference.size == 0:
        return "reference output is empty"
    index = _first_non_finite(reference)
    return None if index is None else f"reference contains a non-finite value at {index}"


def _metrics(figures: Figures) -> Metrics:
    reference_mse = figures.sum_sq_ref / figures.elements
    mse = figures.sum_sq_diff / figures.elements
    uses_absolute = reference_mse < ABSOLUTE_MSE_FLOOR
    return Metrics(
        element_count=figures.elements,
        nmse=mse if uses_absolute else mse / reference_mse,
        max_abs=figures.max_abs,
        reference_mse=reference_mse,
        uses_absolute_mse=uses_absolute,
        max_abs_index=figures.max_abs_index,
        max_ulp=figures.max_ulp,
    )


def _check_tolerance(tolerance: float) -> None:
    if not math.isfinite(tolerance) or tolerance <= 0.0:
        raise _Failure("tolerance must be finite and strictly positive")


def _check_sizes(
    reference: npt.NDArray[Any], actual_size: int, first_bad: Callable[[], int | None]
) -> None:
    """The checks before measuring; ``first_bad`` finds the reference's first non-finite."""
    if reference.size == 0:
        raise _Failure("reference output is empty")
    if actual_size == 0 or reference.size != actual_size:
        if (index := first_bad()) is not None:
            raise _Failure(f"reference contains a non-finite value at {index}")
        if actual_size == 0:
            raise _Failure("required backend output is empty")
        raise _Failure(f"output length mismatch: reference={reference.size} actual={actual_size}")


def _judge(figures: Figures, tolerance: float) -> Metrics:
    """The verdict rule on measured figures (host or device): metrics, or a ``_Failure``."""
    if (index := figures.first_bad_reference) is not None:
        raise _Failure(
            f"reference contains a non-finite value at {index}",
            at=("first non-finite in reference", index),
        )
    if (index := figures.first_bad_actual) is not None:
        raise _Failure(
            f"required backend contains a non-finite value at {index}",
            at=("first non-finite in actual", index),
        )
    metrics = _metrics(figures)
    if (
        not math.isfinite(metrics.nmse)
        or metrics.nmse < 0.0
        or not math.isfinite(metrics.reference_mse)
        or not math.isfinite(metrics.max_abs)
    ):
        raise _Failure("numerical measurement is non-finite or invalid")
    if not metrics.nmse < tolerance:
        raise _Failure(
            f"NMSE {rust_display(metrics.nmse)} is not below tolerance "
            f"{rust_display(tolerance)}; max_abs={rust_display(metrics.max_abs)}",
            metrics,
        )
    return metrics


def _compare(
    reference: npt.NDArray[Any],
    actual: npt.NDArray[Any],
    tolerance: float,
    ulp_dtype: Any = None,
) -> Metrics:
    _check_tolerance(tolerance)
    _check_sizes(reference, actual.size, lambda: _first_non_finite(reference))
    fmt = default_ulp_format(actual) if ulp_dtype is None else ulp_format(ulp_dtype)
    # One pass measures everything, the first non-finite index of each array included.
    return _judge(measure(reference, actual, fmt), tolerance)


def compare_outputs(
    reference: Any, actual: Any, tolerance: float, *, ulp_dtype: Any = None
) -> Verdict:
    """The reference tool's ``compare_outputs``: one array against another, no segments.

    ``ulp_dtype`` is the storage format ULPs are counted in (``"f16"``, ``"bf16"``, ``"f32"``,
    ``"f64"`` or a dtype); None means the actual array's own floating dtype (float32 for
    anything else). It changes ``max_ulp`` only, never the verdict.
    """
    ref, act = to_host(reference), to_host(actual)
    if ulp_dtype is not None:
        ulp_format(ulp_dtype)  # misuse raises ValueError before anything is measured
    try:
        metrics = _compare(ref, act, tolerance, ulp_dtype)
    except _Failure as failure:
        shown = around(failure.metrics, failure.at, ref.size, ref.__getitem__, act.__getitem__)
        return Verdict("failed", failure.reason, failure.metrics, tolerance, around=shown)
    shown = around(metrics, None, ref.size, ref.__getitem__, act.__getitem__)
    return Verdict("passed", None, metrics, tolerance, around=shown)


def around(
    metrics: Metrics | None,
    at: tuple[str, int] | None,
    size: int,
    reference: Callable[[slice], Any],
    actual: Callable[[slice], Any],
) -> tuple[Around, ...]:
    """The :class:`Around` records of a verdict: next to ``metrics.max_abs_index`` and ``at``.

    ``reference`` and ``actual`` read a slice of each flat output (host or device); only
    those few values are read, so a device output brings back 2 * AROUND_RADIUS + 1 each.
    """
    points = [] if metrics is None else [("max |diff|", metrics.max_abs_index)]
    if at is not None:
        points.append(at)
    shown = []
    for what, index in points:
        window = slice(max(0, index - AROUND_RADIUS), min(size, index + AROUND_RADIUS + 1))
        shown.append(
            Around(
                what,
                index,
                window.start,
                tuple(_floats(reference(window))),
                tuple(_floats(actual(window))),
            )
        )
    return tuple(shown)


def _floats(values: Any) -> list[float]:
    """A few values of any array as Python floats (one conversion, not one per element)."""
    if isinstance(values, np.ndarray) and values.ndim == 1:  # a host slice: most verdicts
        return list(values.astype(np.float64).tolist())
    return list(np.asarray(to_host(values), dtype=np.float64).tolist())
