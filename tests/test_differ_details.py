"""The differ's contract in its details: each test pins one rule a small edit could break.

The rules of numerics-contract.md section 7 that the broader tests reach only on the happy
path: the exact absolute-MSE boundary, the defensive non-finite measurement check, the order
of the size checks, the storage format of ULPs reaching every segment, shape binding that
passes what it should and keeps what it had, and segment binding under a bad tolerance.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from diffcheck.differ import (
    AROUND_RADIUS,
    Segment,
    Verdict,
    around,
    bind_precision,
    bind_segments,
    bind_shape,
    compare_outputs,
    diff,
    host_array,
    to_host,
)

TOLERANCE = 1e-7
INVALID = "numerical measurement is non-finite or invalid"


class OnlyDLPack:
    """A CPU array that speaks DLPack and nothing else (no buffer protocol, no __array__)."""

    def __init__(self, values: npt.NDArray[Any]) -> None:
        self._values = values

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._values.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._values.__dlpack_device__()


def test_an_array_that_only_speaks_dlpack_is_read_through_it_without_a_copy() -> None:
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    host = host_array(OnlyDLPack(values))
    assert host.shape == (2, 3)
    assert np.shares_memory(host, values)
    assert diff(values, OnlyDLPack(values), max_nmse=TOLERANCE).passed


def test_around_widens_what_a_device_reader_returns_to_python_floats() -> None:
    """A reader may hand back any array (a device slice speaking DLPack): its values are kept,
    widened to Python floats as a report stores them, never left as integers."""
    reference = np.arange(20, dtype=np.int32)
    actual = np.arange(20, dtype=np.int32) * 2
    (shown,) = around(
        None,
        ("first non-finite in actual", 10),
        reference.size,
        lambda part: OnlyDLPack(reference[part]),
        lambda part: OnlyDLPack(actual[part]),
    )
    start = 10 - AROUND_RADIUS
    assert (shown.what, shown.index, shown.start) == ("first non-finite in actual", 10, start)
    window = range(start, 10 + AROUND_RADIUS + 1)
    assert [repr(v) for v in shown.reference] == [repr(float(i)) for i in window]
    assert [repr(v) for v in shown.actual] == [repr(float(2 * i)) for i in window]


@pytest.mark.parametrize("shape", [(-1, 1), (1, -1)])
def test_around_flattens_a_reader_value_of_any_shape(shape: tuple[int, int]) -> None:
    """A reader may hand back its slice as a column or a row: the values come out flat."""
    reference = np.linspace(0.0, 1.9, 20, dtype=np.float32)
    (shown,) = around(
        None,
        ("first non-finite in reference", 0),
        reference.size,
        lambda part: reference[part].reshape(shape),
        lambda part: reference[part].reshape(shape) * 2,
    )
    window = reference[: AROUND_RADIUS + 1].astype(np.float64)
    assert shown.start == 0
    assert [repr(v) for v in shown.reference] == [repr(float(v)) for v in window]
    assert [repr(v) for v in shown.actual] == [repr(float(v)) for v in window * 2]


def test_to_host_flattens_any_shape() -> None:
    assert to_host(np.ones((2, 3, 4), np.float32)).shape == (24,)


def test_a_reference_energy_of_exactly_1e_30_is_judged_relatively() -> None:
    # 1e-15 * 1e-15 rounds to exactly 1e-30 in float64: "below 1e-30" is strict, so this
    # reference is judged by NMSE (a 100% error, NMSE 1), not by absolute MSE (1e-30).
    reference = np.array([1e-15])
    assert float(reference[0]) ** 2 == 1e-30
    verdict = compare_outputs(reference, np.zeros(1), TOLERANCE)
    assert verdict.metrics is not None
    assert verdict.metrics.reference_mse == 1e-30
    assert verdict.metrics.uses_absolute_mse is False
    assert verdict.status == "failed"


@pytest.mark.parametrize(
    ("reference", "actual"),
    [
        # mean((ref - act)^2) overflows float64; the reference energy is finite.
        ([1.0], [1e200]),
        # the reference energy overflows; the difference is zero (NMSE 0/inf = 0).
        ([1e200], [1e200]),
    ],
    ids=["difference-overflows", "reference-energy-overflows"],
)
def test_a_non_finite_measurement_of_finite_values_never_passes(
    reference: list[float], actual: list[float]
) -> None:
    verdict = compare_outputs(np.array(reference), np.array(actual), TOLERANCE)
    assert (verdict.status, verdict.reason, verdict.metrics) == ("failed", INVALID, None)


@pytest.mark.parametrize("actual", [[], [1.0]], ids=["empty", "shorter"])
def test_a_non_finite_reference_is_named_before_a_size_mismatch(actual: list[float]) -> None:
    verdict = compare_outputs(np.array([1.0, np.nan, 2.0]), np.array(actual), TOLERANCE)
    assert verdict.reason == "reference contains a non-finite value at 1"


def test_a_malformed_ulp_format_is_misuse_even_when_the_tolerance_is_invalid() -> None:
    with pytest.raises(ValueError, match="f8"):
        compare_outputs(np.ones(4), np.ones(4), float("nan"), ulp_dtype="f8")


#: 1 ulp in float32 at 4.0 is 2^-21; in bfloat16 it is 2^-5.
REFERENCE = np.array([1.0, 2.0, 3.0, 4.0] * 2, np.float32)
ACTUAL = REFERENCE.copy()
ACTUAL[3] += np.float32(2**-5)  # one bfloat16 ulp, 2^16 float32 ulps
ACTUAL[7] += np.float32(2**-5)


def test_ulps_count_in_the_given_storage_format_in_every_segment() -> None:
    for ulp_dtype, ulps in ((None, 2**16), ("f32", 2**16), ("bf16", 1)):
        verdict = diff(REFERENCE, ACTUAL, max_nmse=1e-3, segments=2, ulp_dtype=ulp_dtype)
        assert verdict.passed, verdict.reason
        assert verdict.metrics is not None
        assert verdict.metrics.max_ulp == ulps, ulp_dtype
        assert [s.metrics.max_ulp for s in verdict.segments if s.metrics] == [ulps, ulps]
        # bind_segments on its own counts in the same format.
        plain = compare_outputs(REFERENCE, ACTUAL, 1e-3)
        rebound = bind_segments(
            plain, REFERENCE, ACTUAL, [Segment("a", 0, 4), Segment("b", 4, 8)], ulp_dtype=ulp_dtype
        )
        assert [s.metrics.max_ulp for s in rebound.segments if s.metrics] == [ulps, ulps]


def test_shape_binding_passes_outputs_of_the_configured_size() -> None:
    verdict = diff(REFERENCE, REFERENCE, max_nmse=TOLERANCE, expected_elements=8)
    assert (verdict.status, verdict.reason) == ("passed", None)


def test_shape_binding_names_each_wrong_side_and_keeps_what_was_measured() -> None:
    measured = diff(REFERENCE, ACTUAL, max_nmse=1e-3, segments=2)
    assert measured.passed
    bound = bind_shape(measured, 8, 8, 9)
    assert bound.status == "failed"
    assert bound.reason == (
        "reference output has 8 elements; configured shape requires 9; "
        "actual output has 8 elements; configured shape requires 9"
    )
    assert bound.metrics == measured.metrics
    assert bound.tolerance == 1e-3
    assert bound.segments == measured.segments


def test_one_equal_segment_is_the_whole_output() -> None:
    verdict = diff(REFERENCE, REFERENCE, max_nmse=TOLERANCE, segments=1)
    assert verdict.passed
    assert [(s.segment.name, s.segment.start, s.segment.stop) for s in verdict.segments] == [
        ("segment0", 0, 8)
    ]


@pytest.mark.parametrize(
    ("segments", "message"),
    [
        ([], "segments must name at least one segment"),
        (
            [Segment("a", 0, 4), Segment("b", 4, 4)],
            "segment 'b' is [4, 4), but it must be a non-empty range starting at 0 or later",
        ),
    ],
)
def test_malformed_segments_are_misuse_with_what_to_fix(
    segments: list[Segment], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        diff(REFERENCE, REFERENCE, max_nmse=TOLERANCE, segments=segments)


def test_a_failing_segment_keeps_its_own_reason_and_the_aggregate_its_metrics() -> None:
    verdict = diff([1e8, 1, 2, 3], [1e8, 0, 2, 3], max_nmse=TOLERANCE, segments=4)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.nmse < TOLERANCE  # the aggregate hides it; the segment does not
    failing = verdict.first_failing_segment
    assert failing is not None
    assert failing.reason is not None
    assert failing.reason.startswith("NMSE 1 is not below tolerance")
    assert verdict.reason == f"segment1: {failing.reason}"


def test_only_one_side_of_the_segmented_length_wrong_is_a_shape_failure() -> None:
    segments = [Segment("a", 0, 4), Segment("b", 4, 8)]
    verdict = bind_segments(
        Verdict("passed", None, None, TOLERANCE), REFERENCE, REFERENCE[:7], segments
    )
    assert verdict.status == "failed"
    assert verdict.reason == "segmented output shape: expected 8, reference 8, actual 7"
    assert verdict.segments == ()


def test_segments_of_a_verdict_with_an_invalid_tolerance_are_not_judged() -> None:
    claimed = Verdict("passed", None, None, float("nan"))
    verdict = bind_segments(claimed, REFERENCE, REFERENCE, [Segment("a", 0, 8)])
    assert verdict.status == "failed"
    assert verdict.reason == "tolerance must be finite and strictly positive"
    assert verdict.segments == ()


def test_passing_segments_keep_an_earlier_failure_and_its_tolerance() -> None:
    earlier = Verdict("failed", "executed precision differs", None, 1e-3)
    verdict = bind_segments(earlier, REFERENCE, ACTUAL, [Segment("a", 0, 8)])
    assert (verdict.status, verdict.reason, verdict.tolerance) == (
        "failed",
        "executed precision differs",
        1e-3,
    )
    assert [s.status for s in verdict.segments] == ["passed"]


def test_segments_given_as_ranges_are_named_by_their_range() -> None:
    verdict = diff(REFERENCE, REFERENCE, max_nmse=TOLERANCE, segments=[(0, 4), (4, 8)])
    assert [s.segment.name for s in verdict.segments] == ["[0, 4)", "[4, 8)"]


@pytest.mark.parametrize("bound", [1.5, True], ids=["float", "bool"])
def test_a_named_segment_with_a_start_that_is_not_an_int_is_misuse(bound: object) -> None:
    with pytest.raises(ValueError, match="is neither a Segment"):
        diff(REFERENCE, REFERENCE, max_nmse=TOLERANCE, segments=[("a", bound, 8)])


def test_a_precision_failure_keeps_what_was_measured_and_judged() -> None:
    measured = diff(REFERENCE, ACTUAL, max_nmse=1e-3, segments=2)
    bound = bind_precision(measured, "f16", "f32", "f32")
    assert bound.status == "failed"
    assert bound.reason == (
        "executed precision differs from the configured f16: the candidate stored inputs as "
        "f32 and its output as f32"
    )
    assert (bound.metrics, bound.tolerance, bound.segments) == (
        measured.metrics,
        measured.tolerance,
        measured.segments,
    )


def test_a_verdict_shows_the_values_around_its_worst_and_first_bad_indices() -> None:
    reference = np.arange(1, 21, dtype=np.float32)
    actual = reference.copy()
    actual[1] = 40.0  # the worst pair, near the start: the window is cut at 0
    verdict = diff(reference, actual, max_nmse=1e-7)
    (worst,) = verdict.around
    assert (worst.what, worst.index, worst.start) == ("max |diff|", 1, 0)
    assert worst.reference == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert worst.actual == (1.0, 40.0, 3.0, 4.0, 5.0)
    assert "    actual    1 [40] 3 4 5" in str(verdict)

    actual[19] = np.inf  # a non-finite value at the end: no figures, its own window
    verdict = diff(reference, actual, max_nmse=1e-7)
    (bad,) = verdict.around
    assert (bad.what, bad.index, bad.start) == ("first non-finite in actual", 19, 16)
    assert bad.actual == (17.0, 18.0, 19.0, math.inf)
    assert "around first non-finite in actual at flat index 19 ([16:20])" in str(verdict)


def test_a_passing_verdict_keeps_its_values_but_does_not_print_them() -> None:
    reference = np.arange(1, 21, dtype=np.float32)
    verdict = diff(reference, reference, max_nmse=1e-7)
    assert verdict.passed
    assert verdict.around[0].actual == (1.0, 2.0, 3.0, 4.0)
    assert "around" not in str(verdict)


def test_a_nan_in_the_values_around_equals_itself() -> None:
    reference = np.ones(8, np.float32)
    actual = reference.copy()
    actual[3] = np.nan
    assert diff(reference, actual, max_nmse=1e-7) == diff(reference, actual.copy(), max_nmse=1e-7)


def test_a_non_finite_reference_shows_the_values_around_it() -> None:
    reference = np.arange(1, 21, dtype=np.float32)
    reference[5] = np.nan
    verdict = diff(reference, reference + 1, max_nmse=1e-7)
    (bad,) = verdict.around
    assert (bad.what, bad.index, bad.start) == ("first non-finite in reference", 5, 2)
    assert math.isnan(bad.reference[3])
    assert bad.actual[0] == 4.0


def test_values_around_differ_when_either_side_differs() -> None:
    reference = np.arange(1, 9, dtype=np.float32)
    actual = reference.copy()
    actual[3] = np.nan
    (shown,) = diff(reference, actual, max_nmse=1e-7).around
    other_actual = actual.copy()
    other_actual[2] = 0.0
    (changed_actual,) = diff(reference, other_actual, max_nmse=1e-7).around
    other_reference = reference.copy()
    other_reference[2] = 0.0
    (changed_reference,) = diff(other_reference, actual, max_nmse=1e-7).around
    assert shown != changed_actual
    assert shown != changed_reference
    assert shown != "not an Around"
    # Equal (NaN included) records hash alike, so a set keeps one of them.
    (again,) = diff(reference, actual.copy(), max_nmse=1e-7).around
    assert len({shown, again}) == 1
