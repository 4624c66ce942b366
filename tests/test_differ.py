"""The comparator's exact semantics (contract section 7) and the segment rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from diffcheck import Segment, diff
from diffcheck.differ import ABSOLUTE_MSE_FLOOR, bind_shape, compare_outputs, equal_segments


def test_identical_outputs_pass_with_zero_nmse() -> None:
    verdict = compare_outputs(
        np.array([1, -2, 3], np.float32), np.array([1, -2, 3], np.float32), 1e-7
    )
    assert verdict.passed
    assert verdict.reason is None
    assert verdict.metrics is not None
    assert verdict.metrics.nmse == 0.0
    assert verdict.metrics.uses_absolute_mse is False
    assert verdict.metrics.element_count == 3


def test_all_zero_reference_and_actual_pass_through_the_absolute_fallback() -> None:
    verdict = compare_outputs(np.zeros(4, np.float32), np.zeros(4, np.float32), 1e-7)
    assert verdict.passed
    assert verdict.metrics is not None
    assert verdict.metrics.uses_absolute_mse is True
    assert verdict.metrics.max_abs == 0.0


def test_doubled_output_fails_and_keeps_its_metrics() -> None:
    verdict = compare_outputs(np.array([1, 2], np.float32), np.array([2, 4], np.float32), 1e-7)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.nmse == 1.0
    assert verdict.metrics.max_abs == 2.0
    assert verdict.reason == "NMSE 1 is not below tolerance 0.0000001; max_abs=2"


def test_equality_to_the_tolerance_fails() -> None:
    verdict = compare_outputs(np.array([1], np.float32), np.array([2], np.float32), 1.0)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.nmse == 1.0


def test_one_percent_scale_gives_nmse_near_1e_4() -> None:
    reference = np.linspace(-3, 3, 1000, dtype=np.float32)
    verdict = compare_outputs(reference, reference * np.float32(1.01), 1.0)
    assert verdict.metrics is not None
    assert verdict.metrics.nmse == pytest.approx(1e-4, rel=1e-3)


def test_zero_reference_falls_back_to_absolute_mse() -> None:
    verdict = compare_outputs(np.zeros(8, np.float32), np.full(8, 0.1, np.float32), 1.0)
    assert verdict.metrics is not None
    assert verdict.metrics.uses_absolute_mse
    assert verdict.metrics.nmse == pytest.approx(0.01, rel=1e-6)


@pytest.mark.parametrize(
    ("reference", "actual", "tolerance", "reason"),
    [
        ([1.0], [1.0], math.nan, "tolerance must be finite and strictly positive"),
        ([1.0], [1.0], math.inf, "tolerance must be finite and strictly positive"),
        ([1.0], [1.0], 0.0, "tolerance must be finite and strictly positive"),
        ([1.0], [1.0], -1.0, "tolerance must be finite and strictly positive"),
        ([], [1.0], 1e-7, "reference output is empty"),
        ([1.0, math.nan], [1.0, 1.0], 1e-7, "reference contains a non-finite value at 1"),
        ([math.inf, 1.0], [1.0, 1.0], 1e-7, "reference contains a non-finite value at 0"),
        ([1.0], [], 1e-7, "required backend output is empty"),
        ([1.0, 2.0], [1.0], 1e-7, "output length mismatch: reference=2 actual=1"),
        (
            [1.0, 2.0, 3.0],
            [1.0, 2.0, -math.inf],
            1e-7,
            "required backend contains a non-finite value at 2",
        ),
        ([1.0, 2.0], [math.nan, 2.0], 1e-7, "required backend contains a non-finite value at 0"),
    ],
)
def test_invalid_inputs_never_pass_and_carry_no_metrics(
    reference: list[float], actual: list[float], tolerance: float, reason: str
) -> None:
    verdict = compare_outputs(
        np.array(reference, np.float32), np.array(actual, np.float32), tolerance
    )
    assert verdict.status == "failed"
    assert verdict.reason == reason
    assert verdict.metrics is None


def test_a_large_correct_segment_cannot_hide_a_small_wrong_one() -> None:
    reference = np.array([1e8, 1, 2, 3], np.float32)
    actual = np.array([1e8, 0, 2, 3], np.float32)
    assert compare_outputs(reference, actual, 1e-7).passed  # the aggregate is fooled
    segments = equal_segments(
        4,
        ["initial", "reused_context", "independent_context", "drop_flush"],
        ["Initial", "ReusedContext", "IndependentContext", "DropFlush"],
    )
    verdict = diff(reference, actual, max_nmse=1e-7, segments=segments)
    assert verdict.status == "failed"
    assert verdict.reason is not None
    assert verdict.reason.startswith("ReusedContext: NMSE")
    failing = verdict.first_failing_segment
    assert failing is not None
    assert failing.segment.name == "reused_context"
    assert [s.status for s in verdict.segments] == ["passed", "failed", "passed", "passed"]
    assert all(s.metrics is not None for s in verdict.segments)


def test_diluted_small_phase_fails_on_its_own() -> None:
    reference = np.array([0.001, 1000, 1000, 1000], np.float32)
    actual = np.array([0.002, 1000, 1000, 1000], np.float32)
    verdict = diff(reference, actual, max_nmse=1e-7, segments=4)
    assert verdict.status == "failed"
    assert verdict.reason is not None
    assert verdict.reason.startswith("segment0: ")


def test_segments_judge_every_segment_even_after_an_aggregate_failure() -> None:
    reference = np.ones(8, np.float32)
    actual = np.ones(8, np.float32)
    actual[6] = 5
    verdict = diff(
        reference, actual, max_nmse=1e-7, segments=[Segment("head", 0, 4), Segment("tail", 4, 8)]
    )
    assert verdict.status == "failed"
    assert verdict.reason is not None
    assert verdict.reason.startswith("NMSE")
    assert "; tail: NMSE" in verdict.reason
    assert [s.status for s in verdict.segments] == ["passed", "failed"]


def test_segment_layout_must_cover_both_outputs() -> None:
    verdict = diff(
        np.ones(6, np.float32), np.ones(6, np.float32), max_nmse=1e-7, segments=[Segment("a", 0, 4)]
    )
    assert verdict.status == "failed"
    assert verdict.reason == "segmented output shape: expected 4, reference 6, actual 6"


def test_a_nan_inside_one_segment_fails_that_segment() -> None:
    actual = np.ones(8, np.float32)
    actual[5] = np.nan
    verdict = diff(np.ones(8, np.float32), actual, max_nmse=1e-7, segments=2)
    assert verdict.status == "failed"
    assert "segment1: required backend contains a non-finite value at 1" in (verdict.reason or "")


@pytest.mark.parametrize("segments", [[], [Segment("bad", 3, 3)], [Segment("neg", -1, 2)]])
def test_malformed_segments_are_misuse(segments: list[Segment]) -> None:
    with pytest.raises(ValueError, match="segment"):
        diff(np.ones(4, np.float32), np.ones(4, np.float32), max_nmse=1e-7, segments=segments)


def test_shape_binding_rejects_equally_truncated_outputs() -> None:
    verdict = compare_outputs(np.array([1], np.float32), np.array([1], np.float32), 1e-7)
    assert bind_shape(verdict, 1, 1, 1).passed
    bound = bind_shape(verdict, 1, 1, 2)
    assert bound.status == "failed"
    assert bound.reason is not None
    assert "configured shape requires 2" in bound.reason
    assert diff([1.0], [1.0], max_nmse=1e-7, expected_elements=2).status == "failed"


def test_shape_binding_fails_a_pass_missing_an_output_but_leaves_other_statuses() -> None:
    passed = compare_outputs(np.ones(2, np.float32), np.ones(2, np.float32), 1e-7)
    assert bind_shape(passed, 2, None, 2).reason == "passed result is missing actual output"
    failed = compare_outputs(np.ones(2, np.float32), np.zeros(2, np.float32), 1e-7)
    assert bind_shape(failed, 2, None, 2) is failed


def test_metrics_localize_the_worst_element_and_count_ulps() -> None:
    reference = np.arange(1, 9, dtype=np.float32)
    actual = reference.copy()
    actual[5] = np.nextafter(actual[5], np.float32(100), dtype=np.float32)
    actual[5] = np.nextafter(actual[5], np.float32(100), dtype=np.float32)
    verdict = compare_outputs(reference, actual, 1.0)
    assert verdict.metrics is not None
    assert verdict.metrics.max_abs_index == 5
    assert verdict.metrics.max_ulp == 2


def test_chunked_measurement_matches_a_direct_float64_computation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from diffcheck.differ import _measure

    monkeypatch.setattr(_measure, "BLOCK", 1000)  # the NumPy path's blocks (small input)
    rng = np.random.default_rng(0)
    reference = rng.standard_normal(10_007).astype(np.float32)
    actual = (reference + rng.standard_normal(10_007).astype(np.float32) * np.float32(1e-3)).astype(
        np.float32
    )
    verdict = compare_outputs(reference, actual, 1.0)
    r, a = reference.astype(np.float64), actual.astype(np.float64)
    assert verdict.metrics is not None
    assert verdict.metrics.nmse == pytest.approx(np.mean((r - a) ** 2) / np.mean(r**2), rel=1e-12)
    assert verdict.metrics.max_abs == np.max(np.abs(r - a))
    assert verdict.metrics.max_abs_index == int(np.argmax(np.abs(r - a)))


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.floats(-1e3, 1e3, width=32), min_size=1, max_size=64),
    index=st.integers(0, 63),
    delta=st.floats(1.0, 1e3),
)
def test_a_visible_change_to_any_single_element_fails_its_segment(
    values: list[float], index: int, delta: float
) -> None:
    reference = np.array(values, np.float32)
    energy = float(np.mean(reference.astype(np.float64) ** 2))
    # diff refuses a non-zero reference below the absolute-MSE floor (test_diff_dtypes.py).
    assume(not reference.any() or energy >= ABSOLUTE_MSE_FLOOR)
    actual = reference.copy()
    index %= reference.size
    actual[index] = np.float32(actual[index] + delta)
    verdict = diff(
        reference,
        actual,
        max_nmse=1e-7,
        segments=[Segment(f"e{i}", i, i + 1) for i in range(reference.size)],
    )
    assert verdict.status == "failed"
    failing = verdict.first_failing_segment
    assert failing is not None
    assert failing.segment.start == index


def test_diff_accepts_arrays_from_other_array_api_libraries() -> None:
    strict = pytest.importorskip("array_api_strict", reason="array-api-strict is a test dependency")
    reference = strict.asarray([1.0, 2.0, 3.0], dtype=strict.float32)
    actual = strict.asarray([1.0, 2.0, 4.0], dtype=strict.float32)
    assert diff(reference, reference, max_nmse=1e-7).passed
    assert diff(reference, actual, max_nmse=1e-7).status == "failed"


def test_verdict_renders_for_terminals_and_notebooks() -> None:
    verdict = diff([1e8, 1, 2, 3], [1e8, 0, 2, 3], max_nmse=1e-7, segments=4)
    text = str(verdict)
    assert text.startswith("FAILED")
    assert "segment1" in text
    html = verdict._repr_html_()
    assert "<table" in html
    assert "segment1" in html


def test_a_100_percent_wrong_output_of_magnitude_1e_12_fails() -> None:
    # Reference energy 1e-24 is far above the 1e-30 floor, so NMSE is relative: a sign
    # flip is NMSE 4. A floor raised to 1e-20 would judge it by absolute MSE (4e-24) and pass.
    reference = np.full(64, 1e-12, np.float32)
    verdict = diff(reference, -reference, max_nmse=1e-7)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert not verdict.metrics.uses_absolute_mse
    assert verdict.metrics.nmse == pytest.approx(4.0)


@pytest.mark.parametrize(("energy", "absolute"), [(2e-30, False), (0.5e-30, True), (0.0, True)])
def test_the_absolute_mse_floor_is_exactly_1e_30_and_not_only_for_zeros(
    energy: float, absolute: bool
) -> None:
    # mean(ref^2) just above the floor is judged relatively; just below (not all zero) and
    # exactly zero are judged by absolute MSE. Raising the floor, or applying it only to an
    # all-zero reference, flips one of these. This is the contract's comparator (the
    # registered checks'); diff refuses a non-zero reference below the floor instead.
    value = np.sqrt(energy)
    reference = np.full(16, value, np.float64).astype(np.float32)
    actual = np.zeros(16, np.float32) if energy else np.full(16, 1e-20, np.float32)
    verdict = compare_outputs(reference, actual, 1e-7)
    assert verdict.metrics is not None
    assert verdict.metrics.uses_absolute_mse is absolute
    assert verdict.status == ("passed" if absolute else "failed")
