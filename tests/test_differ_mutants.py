"""The differ's three surviving hand mutants, each killed by a test of its own.

Each mutation is a real false pass (tests/hand_mutants.toml lists them): a one-element gap
between two segments left unjudged; ``bind_shape`` accepting an output longer than the
configured shape; ``_check_sizes`` comparing lengths with ``>`` so a longer actual output
is judged on its prefix. The cases are generated: the gap at every place, every excess
length.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck import Segment, diff
from diffcheck.differ import Verdict, bind_shape, compare_outputs
from diffcheck.errors import ConfigError

SIZE = 4096


@settings(max_examples=40, deadline=None)
@given(gap=st.integers(1, SIZE - 2), width=st.integers(1, 3))
def test_a_gap_of_any_width_between_segments_is_judged(gap: int, width: int) -> None:
    # One element in the gap is 0.1% off: diluted below the tolerance over the whole
    # output (NMSE ~2.4e-10), far above it in the gap itself (NMSE 1e-6).
    stop = min(gap + width, SIZE - 1)
    reference = np.ones(SIZE, np.float32)
    actual = reference.copy()
    actual[gap] = np.float32(1.001)
    segments = [Segment("head", 0, gap), Segment("tail", stop, SIZE)]
    verdict = diff(reference, actual, max_nmse=1e-7, segments=segments)
    assert compare_outputs(reference, actual, 1e-7).passed  # the aggregate cannot see it
    assert verdict.status == "failed"
    failing = verdict.first_failing_segment
    assert failing is not None
    assert (failing.segment.name, failing.segment.start, failing.segment.stop) == (
        "uncovered",
        gap,
        stop,
    )


@pytest.mark.parametrize("extra", [1, 2, 100])
def test_bind_shape_fails_an_output_longer_than_the_configured_shape(extra: int) -> None:
    passed = Verdict("passed", None, None, 1e-7)
    for counts in ((8, 8 + extra), (8 + extra, 8), (8 + extra, 8 + extra)):
        bound = bind_shape(passed, *counts, 8)
        assert bound.status == "failed", counts
        assert f"has {8 + extra} elements; configured shape requires 8" in str(bound.reason)
    # Both equally too long, and equal to each other: the configured shape still fails them.
    values = np.arange(8 + extra, dtype=np.float32)
    assert not diff(values, values.copy(), max_nmse=1e-7, expected_elements=8)


@pytest.mark.parametrize("extra", [1, 3, 1000])
def test_an_actual_output_longer_than_the_reference_fails(extra: int) -> None:
    # The prefix is exact: judged on it alone, a longer output would pass.
    reference = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    actual = np.concatenate([reference, np.full(extra, 7.0, np.float32)])
    for verdict in (
        compare_outputs(reference, actual, 1e-7),
        diff(reference, actual, max_nmse=1e-7),
    ):
        assert verdict.status == "failed"
        assert verdict.reason == f"output length mismatch: reference=64 actual={64 + extra}"


@pytest.mark.parametrize("short", [1, 2, 7])
def test_bind_shape_fails_an_output_shorter_than_the_configured_shape(short: int) -> None:
    passed = Verdict("passed", None, None, 1e-7)
    for counts in ((8, 8 - short), (8 - short, 8), (8 - short, 8 - short)):
        bound = bind_shape(passed, *counts, 8)
        assert bound.status == "failed", counts
        assert f"has {8 - short} elements; configured shape requires 8" in str(bound.reason)
    values = np.arange(8 - short, dtype=np.float32)
    assert not diff(values, values.copy(), max_nmse=1e-7, expected_elements=8)


@pytest.mark.parametrize("missing", [1, 3, 63])
def test_an_actual_output_shorter_than_the_reference_fails(missing: int) -> None:
    # The actual output is the reference's exact prefix: judged on it alone, it would pass.
    reference = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    actual = reference[: 64 - missing].copy()
    for verdict in (
        compare_outputs(reference, actual, 1e-7),
        diff(reference, actual, max_nmse=1e-7),
    ):
        assert verdict.status == "failed"
        assert verdict.reason == f"output length mismatch: reference=64 actual={64 - missing}"


@settings(max_examples=30, deadline=None)
@given(stop=st.integers(1, SIZE - 1), at=st.integers(0, SIZE - 1))
def test_segments_that_stop_short_of_the_output_fail_it(stop: int, at: int) -> None:
    # Segments covering [0, stop) of a longer output would leave its tail unjudged but for
    # the aggregate, which a one-element error dilutes below the tolerance.
    reference = np.ones(SIZE, np.float32)
    actual = reference.copy()
    actual[at] = np.float32(1.001)
    verdict = diff(reference, actual, max_nmse=1e-7, segments=[Segment("head", 0, stop)])
    assert verdict.status == "failed"
    assert verdict.reason == (
        f"segmented output shape: expected {stop}, reference {SIZE}, actual {SIZE}"
    )


# -- the differ's own words and edges (mutation testing of segments.py and judge.py) ----------


def test_a_reference_is_refused_when_empty_or_not_finite_and_judged_at_one_element() -> None:
    from diffcheck.differ.judge import reference_problem

    empty = np.array([], np.float32)
    assert reference_problem(empty) == "reference output is empty"
    assert reference_problem(np.array([2.5], np.float32)) is None
    assert diff(np.array([2.5], np.float32), np.array([2.5], np.float32), max_nmse=1e-7)
    bad = np.array([1.0, 2.0, 3.0, np.nan, np.inf], np.float32)
    assert reference_problem(bad) == "reference contains a non-finite value at 3"


def test_a_segment_past_the_reference_is_refused_naming_it() -> None:
    values = np.ones(60, np.float32)
    with pytest.raises(ConfigError) as error:
        diff(values, values.copy(), max_nmse=1e-7, segments=[Segment("tail", 30, 64)])
    assert str(error.value) == (
        "segment 'tail' is [30, 64), past the reference's 60 elements; give segments within [0, 60)"
    )
    long = "n" * 100  # a name is cut to 80 characters of its repr
    with pytest.raises(ConfigError) as error:
        diff(values, values.copy(), max_nmse=1e-7, segments=[Segment(long, 0, 61)])
    assert str(error.value).startswith(f"segment '{'n' * 79} is [0, 61), past ")


@pytest.mark.parametrize("start", [1, 2])
def test_a_gap_before_the_first_segment_is_judged_and_labelled(start: int) -> None:
    reference = np.ones(SIZE, np.float32)
    actual = reference.copy()
    actual[0] = np.float32(1.001)
    verdict = diff(reference, actual, max_nmse=1e-7, segments=[Segment("tail", start, SIZE)])
    assert verdict.status == "failed"
    failing = verdict.first_failing_segment
    assert failing is not None
    assert (failing.segment.name, failing.segment.start, failing.segment.stop) == (
        "uncovered",
        0,
        start,
    )
    assert failing.segment.label == f"uncovered [0, {start})"


def test_a_bound_verdict_keeps_its_own_reason_before_the_new_one() -> None:
    from diffcheck.differ import bind_precision

    failed = Verdict("failed", "nmse 1 >= tolerance 1e-07", None, 1e-7)
    shape = bind_shape(failed, 9, 8, 8)
    assert shape.reason == (
        "nmse 1 >= tolerance 1e-07; reference output has 9 elements; configured shape requires 8"
    )
    precision = bind_precision(failed, "f16", "f32", "f32")
    assert precision.reason == (
        "nmse 1 >= tolerance 1e-07; executed precision differs from the configured f16: the "
        "candidate stored inputs as f32 and its output as f32"
    )


def test_exact_values_that_differ_keep_their_segments() -> None:
    reference = np.arange(8, dtype=np.int64)
    actual = reference.copy()
    actual[5] += 1
    verdict = diff(reference, actual, max_nmse=1e-7, segments=2)
    assert verdict.status == "failed"
    assert [s.segment.name for s in verdict.segments] == ["segment0", "segment1"]


@pytest.mark.parametrize("count", [0, 3])
def test_equal_segments_refuse_a_split_that_is_not_equal(count: int) -> None:
    from diffcheck.differ import equal_segments

    with pytest.raises(ValueError, match=f"^10 elements cannot be split into {count} equal "):
        equal_segments(10, [f"s{i}" for i in range(count)])
