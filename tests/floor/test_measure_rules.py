"""The floor's rules one at a time, on figures small enough to check by hand.

:mod:`diffcheck.floor.measure` turns NMSEs into a verdict: the derived tolerance, the strict
comparisons with it, which twin models a candidate, how near is near, the reason's wording,
and how a floor is bound to the differ's verdict. Each rule is pinned here at its edges (an
NMSE equal to the tolerance fails; a size ratio of exactly four matches), so a changed
comparison or constant is a failing test, not a verdict that quietly moved.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.differ import diff
from diffcheck.floor import Floor, NoFloor, SegmentFloor, TwinError, bind_floor
from diffcheck.floor.measure import match_twin, twin_tolerance
from diffcheck.floor.twins import twin_named
from diffcheck.precision import TwinName

TF32: TwinName = "tf32 operands"
F16: TwinName = "float16 operands"
BF16: TwinName = "bfloat16 operands"


def _floor(candidate: float, **fields: object) -> Floor:
    """An f32 floor of 1e-14 at the multiple 100: its derived tolerance is 1e-12."""
    return Floor("f32", 1e-14, 100.0, candidate, **fields)  # type: ignore[arg-type]


def test_each_term_of_a_twins_tolerance_wins_where_it_is_largest() -> None:
    # The check's derived tolerance, where it is the largest.
    assert twin_tolerance(1e-10, 100.0, 0.0, 1e-12) == 1e-10
    # The floor's multiple of the twin's spread, under a quarter of the twin's error.
    assert twin_tolerance(1e-14, 100.0, 1e-11, 1e-8) == pytest.approx(1e-9, rel=1e-12)
    # That quarter caps the spread's term.
    assert twin_tolerance(1e-14, 100.0, 1e-9, 1e-8) == 2.5e-9
    # A hundredth of the twin's error, where the spread is nothing.
    assert twin_tolerance(1e-14, 100.0, 0.0, 1e-6) == pytest.approx(1e-8, rel=1e-12)


def test_a_twin_errors_tolerance_is_the_rule_on_its_own_figures() -> None:
    twin = TwinError(TF32, nmse=1e-8, distance=0.0, spread=1e-11)
    assert twin.tolerance(1e-14, 100.0) == twin_tolerance(1e-14, 100.0, 1e-11, 1e-8)
    assert twin.tolerance(1e-14, 100.0) == pytest.approx(1e-9, rel=1e-12)
    assert TwinError(TF32, nmse=1e-8, distance=0.0).spread == 0.0


def test_the_ratio_is_the_candidates_nmse_in_floors_and_defined_at_a_zero_floor() -> None:
    assert _floor(3e-13).ratio == pytest.approx(30.0, rel=1e-12)
    assert Floor("f32", 0.0, 100.0, 0.0).ratio == 0.0
    assert Floor("f32", 0.0, 100.0, 1e-300).ratio == math.inf
    assert _floor(0.0).ratio == 0.0


def test_the_derived_tolerance_is_the_multiple_of_the_floor_and_passing_is_strictly_under_it() -> (
    None
):
    assert Floor("f16", 2e-8, 16.0, 0.0).derived_tolerance == 16.0 * 2e-8
    assert _floor(0.999e-12).passed
    assert not _floor(1e-12).passed  # equal is not below
    assert not _floor(2e-12).passed


def test_a_floor_passes_only_when_the_whole_output_and_every_segment_pass() -> None:
    good = SegmentFloor("head", 1e-14, 1e-13, 1e-12)
    bad = SegmentFloor("tail", 1e-14, 1e-12, 1e-12)  # equal to its tolerance: not below
    assert good.passed
    assert not bad.passed
    assert _floor(1e-13, segments=(good, good)).passed
    assert not _floor(1e-13, segments=(good, bad)).passed
    assert not _floor(1e-13, segments=(bad, good)).passed
    assert not _floor(1e-12, segments=(good,)).passed  # segments pass, the whole does not


def test_the_honest_twin_is_the_one_of_the_precision() -> None:
    assert Floor("f32", 1e-14, 100.0, 0.0).honest == "float32"
    assert Floor("f16", 1e-8, 16.0, 0.0).honest == "float16 storage"
    assert Floor("bf16", 1e-5, 16.0, 0.0).honest == "bfloat16 storage"


def test_the_models_are_the_honest_twin_first_then_every_twin_strictly_within_its_tolerance() -> (
    None
):
    twins = (
        TwinError(TF32, nmse=1e-10, distance=5e-13),  # tolerance 1e-12: models it
        TwinError(F16, nmse=1e-10, distance=1e-12),  # at its tolerance: does not
        TwinError(BF16, nmse=1e-6, distance=5e-9),  # tolerance 1e-8 (1% of its error)
    )
    assert _floor(1e-9, twins=twins, honest_distance=5e-13).models == ("float32", TF32, BF16)
    assert _floor(1e-9, twins=twins, honest_distance=1e-12).models == (TF32, BF16)
    assert _floor(1e-9, twins=twins).models == (TF32, BF16)  # no honest distance measured
    assert _floor(1e-13, honest_distance=0.0).models == ("float32",)


def test_the_summary_states_every_figure_of_the_floor() -> None:
    assert _floor(3e-11).summary() == (
        "NMSE 3e-11 against the float64 truth = 3e+03x the float32 floor 1e-14"
        " (derived tolerance 1e-12, 100x)"
    )
    assert Floor("bf16", 2e-5, 16.0, 1e-4).summary() == (
        "NMSE 0.0001 against the float64 truth = 5x the bfloat16 storage floor 2e-05"
        " (derived tolerance 0.00032, 16x)"
    )


def test_the_diagnosis_names_the_matched_twin_how_it_matched_and_the_others_that_model_it() -> None:
    twins = (
        TwinError(TF32, nmse=1e-10, distance=1e-13),
        TwinError(F16, nmse=2e-10, distance=2e-13),
        TwinError(BF16, nmse=3e-8, distance=1e-6),  # too far: not among the others
    )
    assert _floor(1e-10, twins=twins).diagnosis() == (
        f"consistent with {twin_named(TF32).describe()} (matches it within the floor, "
        f"as do {F16}): twin NMSE 1e-10"
    )
    three = (*twins[:2], TwinError(BF16, nmse=3e-8, distance=3e-13))
    assert f"as do {F16}, {BF16}): twin NMSE 1e-10" in _floor(1e-10, twins=three).diagnosis()
    alone = (TwinError(F16, nmse=2e-10, distance=1e-3),)
    assert _floor(3e-10, twins=alone).diagnosis() == (
        f"consistent with {twin_named(F16).describe()} (same size): twin NMSE 2e-10"
    )


def test_the_diagnosis_lists_every_twin_it_ran_when_none_matches_and_says_when_none_ran() -> None:
    twins = (
        TwinError(TF32, nmse=1e-10, distance=1e-3),
        TwinError(F16, nmse=2.5e-6, distance=1e-3),
    )
    assert _floor(1e-3, twins=twins).diagnosis() == (
        f"matches no twin ({TF32} 1e-10, {F16} 2.5e-06)"
    )
    assert _floor(1e-3).diagnosis() == "no downgraded twin was run"


def test_the_reason_is_none_for_a_pass_and_names_the_whole_output_or_the_first_failed_segment() -> (
    None
):
    assert _floor(1e-13).reason() is None
    whole = _floor(3e-11)
    assert whole.reason() == f"precision floor: {whole.summary()}, no downgraded twin was run"
    # At the derived tolerance the whole output fails, and its reason is the whole's.
    at = _floor(1e-12, segments=(SegmentFloor("head", 1e-14, 2e-12, 1e-12),))
    assert at.reason() == f"precision floor: {at.summary()}, no downgraded twin was run"
    segments = (
        SegmentFloor("head", 1e-14, 1e-13, 1e-12),
        SegmentFloor("mid", 2e-14, 5e-12, 2e-12),
        SegmentFloor("tail", 1e-14, 9e-12, 1e-12),
    )
    failed = _floor(1e-13, segments=segments)
    assert failed.reason() == (
        "precision floor: mid: NMSE 5e-12 against the float64 truth is not below its derived "
        "tolerance 2e-12, no downgraded twin was run"
    )


def test_a_twin_matches_within_its_tolerance_in_twins_order_before_any_same_size_twin() -> None:
    same = TwinError(BF16, nmse=1e-6, distance=1.0)
    near_late = TwinError(F16, nmse=1e-3, distance=1e-13)
    near_first = TwinError(TF32, nmse=1e-3, distance=2e-13)
    found = match_twin(1e-6, (same, near_first, near_late), 1e-12, 100.0)
    assert found == (near_first, "matches it within the floor")
    at_tolerance = TwinError(TF32, nmse=1.0, distance=1e-12 + 0.01)  # 1% of 1.0 plus: too far
    assert match_twin(1e-6, (at_tolerance, same), 1e-12, 100.0) == (same, "same size")
    exactly = TwinError(TF32, nmse=1e-10, distance=1e-12)  # tolerance 1e-12: not below it
    assert match_twin(1.0, (exactly,), 1e-12, 100.0) is None
    # The spread widens what matches: 100 x 1e-11 is 1e-9, above 1% of the twin's 1e-8 and
    # under a quarter of it; without the spread the same distance matches nothing.
    spread = TwinError(TF32, nmse=1e-8, distance=5e-10, spread=1e-11)
    assert match_twin(1.0, (spread,), 1e-14, 100.0) == (spread, "matches it within the floor")
    assert match_twin(1.0, (TwinError(TF32, nmse=1e-8, distance=5e-10),), 1e-14, 100.0) is None


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    exponent=st.floats(-30.0, 0.0),
    factor=st.sampled_from([0.25, 0.2501, 0.2499, 1.0, 3.9999, 4.0, 4.0001, 10.0, 0.1]),
)
def test_a_same_size_twin_is_within_a_factor_of_four_either_way_both_ends_included(
    exponent: float, factor: float
) -> None:
    twin_nmse = 10.0**exponent
    twin = TwinError(TF32, nmse=twin_nmse, distance=math.inf)
    candidate = twin_nmse * factor
    ratio = candidate / twin_nmse  # what match_twin computes, rounding included
    found = match_twin(candidate, (twin,), 0.0, 100.0)
    assert (found == (twin, "same size")) == (0.25 <= ratio <= 4.0), (candidate, twin_nmse)
    assert found is None or found == (twin, "same size")


def test_the_same_size_twin_is_the_nearest_in_log_ratio_and_a_zero_error_twin_is_never_one() -> (
    None
):
    far = TwinError(TF32, nmse=3.0, distance=math.inf)  # log ratio 1.10 below
    near = TwinError(F16, nmse=0.5, distance=math.inf)  # log ratio 0.69 above
    assert match_twin(1.0, (far, near), 0.0, 100.0) == (near, "same size")
    assert match_twin(1.0, (near, far), 0.0, 100.0) == (near, "same size")
    lower = TwinError(BF16, nmse=0.4, distance=math.inf)
    assert match_twin(1.0, (lower, far), 0.0, 100.0) == (lower, "same size")
    exact = TwinError(TF32, nmse=0.0, distance=math.inf)
    assert match_twin(0.0, (exact,), 0.0, 100.0) is None
    assert match_twin(1e-300, (exact,), 0.0, 100.0) is None


def test_binding_no_floor_leaves_the_verdict_and_an_unmeasured_one_adds_its_note() -> None:
    verdict = diff([1.0, 2.0], [1.0, 2.0], max_nmse=1e-7)
    assert bind_floor(verdict, None) is verdict
    noted = bind_floor(verdict, NoFloor("the truth is not finite"))
    assert noted.floor_note == "the truth is not finite"
    assert noted.floor is None
    assert noted.status == "passed"
    assert noted.reason == verdict.reason


def test_binding_a_passed_floor_attaches_it_and_keeps_the_verdict() -> None:
    verdict = diff([1.0, 2.0], [1.0, 2.0], max_nmse=1e-7)
    passed = _floor(1e-13)
    bound = bind_floor(verdict, passed)
    assert bound.floor is passed
    assert bound.status == "passed"
    assert bound.reason is None
    assert bound.floor_note is None


def test_binding_a_failed_floor_fails_the_verdict_after_its_own_reason() -> None:
    failed = _floor(3e-11)
    floor_reason = failed.reason()
    assert floor_reason is not None
    passed_verdict = diff([1.0, 2.0], [1.0, 2.0], max_nmse=1e-7)
    alone = bind_floor(passed_verdict, failed)
    assert alone.status == "failed"
    assert alone.reason == floor_reason
    assert alone.floor is failed
    failed_verdict = diff([1.0, 2.0], [1.0, 3.0], max_nmse=1e-7)
    assert failed_verdict.reason
    both = bind_floor(failed_verdict, failed)
    assert both.status == "failed"
    assert both.reason == f"{failed_verdict.reason}; {floor_reason}"
    assert both.floor is failed


def test_the_diagnosis_names_as_others_only_twins_strictly_within_their_tolerance() -> None:
    twins = (
        TwinError(TF32, nmse=1e-10, distance=1e-13),  # matched
        TwinError(F16, nmse=1e-10, distance=1e-12),  # at its tolerance 1e-12: not below
        TwinError(BF16, nmse=1e-10, distance=0.999e-12),  # just below: models it too
    )
    assert _floor(1e-10, twins=twins).diagnosis() == (
        f"consistent with {twin_named(TF32).describe()} (matches it within the floor, "
        f"as do {BF16}): twin NMSE 1e-10"
    )
