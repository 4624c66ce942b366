"""Replay's allowance for summed figures covers every engine and summation order of the differ.

The same outputs measured by the numba kernel and by the NumPy path (taken before the kernel
is loaded, or without numba) differ in the last bits of ``nmse`` and ``reference_mse``: the
kernel adds in vector lanes, the NumPy path with ``einsum``. A report written by one and
replayed by the other must agree; a figure moved past the stated bound must not.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.differ import _measure
from diffcheck.differ.judge import compare_outputs
from diffcheck.report.figures import compare_metrics, same_reason, sum_allowance
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


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    size=st.integers(1, 3 * _measure.BLOCK),
    seed=st.integers(0, 2**32 - 1),
    tolerance=st.sampled_from([1e-30, 1e-12, 1e-7]),
)
def test_a_failing_reason_from_either_engine_is_the_same_reason(
    size: int, seed: int, tolerance: float
) -> None:
    # The contract's reason prints the NMSE to its last digit, where the engines differ.
    if _measure.load_kernel() is not None:
        pytest.skip(f"numba kernel unavailable here: {_measure.load_kernel()}")
    rng = np.random.default_rng(seed)
    reference = rng.standard_normal(size).astype(np.float32)
    actual = (reference * (1 + 1e-3 * rng.standard_normal(size))).astype(np.float32)
    reasons = []
    for engine in ("", "numpy"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("DIFFCHECK_DIFFER", engine)
            reasons.append(compare_outputs(reference, actual, tolerance).reason)
    assert same_reason(reasons[0], reasons[1], size)
    assert same_reason(reasons[1], reasons[0], size)


def test_a_reason_with_other_words_or_a_moved_number_is_not_the_same() -> None:
    stored = "NMSE 0.000000000000011951394316886564 is not below tolerance 0.001; max_abs=0.5"
    assert same_reason(stored, stored.replace("886564", "886557"), 512)
    assert not same_reason(stored, stored.replace("0.0000000000000119", "0.0000000000000129"), 512)
    assert not same_reason(stored, stored.replace("not below", "below"), 512)
    assert not same_reason(stored, stored + "; 1", 512)
    assert not same_reason(stored, None, 512)
    # The floor's figures are compare_floor's to check; its words (the twin named) are not.
    floored = stored + "; precision floor: NMSE 6.84e-08 = 8e+05x, consistent with tf32 operands"
    assert same_reason(floored, floored.replace("6.84e-08", "6.9e-08"), 512)
    assert not same_reason(floored, floored.replace("tf32 operands", "float16 operands"), 512)


def test_a_segments_reason_is_compared_by_its_words_and_numbers_within_the_allowance() -> None:
    """A segment's reason prints its NMSE to the last digit too: a sweep's lifecycle report
    replayed on the same H100 disagreed on `...65320508` against `...65320503`."""
    from dataclasses import replace

    from diffcheck.differ import Segment
    from diffcheck.differ.segments import diff
    from diffcheck.report.figures import compare_segments
    from diffcheck.report.models import SegmentRecord

    rng = np.random.default_rng(5)
    reference = rng.standard_normal(600).astype(np.float32)
    actual = (reference * (1 + 1e-3 * rng.standard_normal(600))).astype(np.float32)
    verdict = diff(
        reference,
        actual,
        max_nmse=1e-9,
        segments=[Segment("first", 0, 300), Segment("second", 300, 600)],
    )
    assert all(s.status == "failed" for s in verdict.segments)

    def records(edit: Any = lambda reason: reason) -> list[SegmentRecord]:
        return [
            SegmentRecord(
                name=s.segment.name,
                start=s.segment.start,
                stop=s.segment.stop,
                status=s.status,
                reason=edit(s.reason),
                metrics=MetricsRecord.of(s.metrics),
            )
            for s in verdict.segments
        ]

    def last_digit(reason: str) -> str:
        head, _, tail = reason.partition(" is not below")
        return head[:-1] + str((int(head[-1]) + 1) % 10) + " is not below" + tail

    assert compare_segments(records(), verdict) == []
    assert compare_segments(records(last_digit), verdict) == []
    moved = records(lambda reason: reason.replace("NMSE 0.0000", "NMSE 0.0009", 1))
    assert compare_segments(moved, verdict) != []
    worded = records(lambda reason: reason.replace("not below", "below"))
    assert compare_segments(worded, verdict) != []
    # A status changed either way, the reason kept.
    status = [replace(verdict.segments[0], status="passed"), *verdict.segments[1:]]
    assert compare_segments(records(), replace(verdict, segments=tuple(status))) != []
    claimed = records()
    claimed[0] = claimed[0].model_copy(update={"status": "passed"})
    assert compare_segments(claimed, verdict) != []
