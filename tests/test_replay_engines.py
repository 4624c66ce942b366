"""Replay's allowance for summed figures covers every engine and summation order of the differ.

The same outputs measured by the numba kernel and by the NumPy path (taken before the kernel
is loaded, or without numba) differ in the last bits of ``nmse`` and ``reference_mse``: the
kernel adds in vector lanes, the NumPy path with ``einsum``. A report written by one and
replayed by the other must agree; a figure moved past the stated bound must not.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.differ import _measure
from diffcheck.differ.judge import compare_outputs
from diffcheck.report.figures import compare_metrics, sum_allowance
from diffcheck.report.models import MetricsRecord

_EPS = sys.float_info.epsilon


def _record(reference: np.ndarray, actual: np.ndarray, engine: str) -> MetricsRecord:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIFFCHECK_DIFFER", engine)
        verdict = compare_outputs(reference, actual, 1.0)
    assert verdict.metrics is not None
    return MetricsRecord(**{k: getattr(verdict.metrics, k) for k in MetricsRecord.model_fields})


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    size=st.integers(1, 3 * _measure.BLOCK),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1e-20, 1e-3, 1.0, 1e6]),
    noise=st.sampled_from([1e-7, 1e-3, 1.0]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_a_figure_from_either_engine_agrees_with_the_other(
    size: int, seed: int, scale: float, noise: float, dtype: type
) -> None:
    if _measure.load_kernel() is not None:
        pytest.skip(f"numba kernel unavailable here: {_measure.load_kernel()}")
    rng = np.random.default_rng(seed)
    reference = (rng.standard_normal(size) * scale).astype(dtype)
    actual = (reference * (1 + noise * rng.standard_normal(size))).astype(dtype)
    kernel = _record(reference, actual, "")
    numpy_path = _record(reference, actual, "numpy")
    assert compare_metrics("metrics", kernel, numpy_path) == []
    assert compare_metrics("metrics", numpy_path, kernel) == []
    # The allowance is a bound, not a blanket: twice past it is a disagreement.
    moved = kernel.nmse * (1 + 2 * sum_allowance(size))
    if moved != kernel.nmse and math.isfinite(moved):
        forged = kernel.model_copy(update={"nmse": moved})
        assert compare_metrics("metrics", forged, numpy_path) != []
