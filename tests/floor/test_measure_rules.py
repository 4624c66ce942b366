"""The floor's rules one at a time, on figures small enough to check by hand.

:mod:`diffcheck.floor.measure` turns NMSEs into a verdict: the derived tolerance, the strict
comparisons with it, which twin models a candidate, how near is near, the reason's wording,
and how a floor is bound to the differ's verdict. Each rule is pinned here at its edges (an
NMSE equal to the tolerance fails; a size ratio of exactly four matches), so a changed
comparison or constant is a failing test, not a verdict that quietly moved.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.differ import diff
from diffcheck.floor import Floor, NoFloor, SegmentFloor, TwinError, bind_floor, judge_floor
from diffcheck.floor.measure import match_twin, twin_tolerance
from diffcheck.floor.twins import twin_named
from diffcheck.precision import TwinName

TF32: TwinName = "tf32 operands"
F16: TwinName = "float16 operands"
BF16: TwinName = "bfloat16 operands"
MATMULS: TwinName = "float16 matmuls"
Outputs = dict[TwinName, tuple[np.ndarray, ...]]


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


# judge_floor's figures, each computed here from its definition: a sum of squared
# differences over a span, divided by the truth's energy there (by the span's length where
# the truth's mean square is under 1e-30, the differ's rule).
SPANS = (("head", 0, 20), ("zeros", 20, 40), ("tail", 40, 60))
ROUNDING = {"f32": (2.0**-24, 2.0**-149), "f16": (2.0**-11, 2.0**-24), "bf16": (2.0**-8, 2.0**-133)}


def _nmse(x: np.ndarray, base: np.ndarray, truth: np.ndarray, lo: int, hi: int) -> float:
    error = float(np.sum((x[lo:hi].astype(np.float64) - base[lo:hi].astype(np.float64)) ** 2))
    energy = float(np.sum(truth[lo:hi] ** 2))
    return error / (hi - lo) if energy / (hi - lo) < 1e-30 else error / energy


def _rounding(truth: np.ndarray, lo: int, hi: int, precision: str) -> float:
    u, tiniest = ROUNDING[precision]
    energy = float(np.sum(truth[lo:hi] ** 2))
    error = u * u / 3.0 * energy + (hi - lo) * (tiniest / 2.0) ** 2
    return error / (hi - lo) if energy / (hi - lo) < 1e-30 else error / energy


def _arrays(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A truth with a segment of zeros, an honest output 1e-6 off, a candidate 1e-5 off."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(60)
    truth[20:40] = 0.0
    honest = truth * (1 + 1e-6 * rng.standard_normal(60))
    honest[20:40] = 1e-32 * rng.standard_normal(20)
    candidate = truth * (1 + 1e-5 * rng.standard_normal(60))
    candidate[20:40] = 1e-25 * rng.standard_normal(20)
    return truth, honest, candidate


def _approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=0.0)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), precision=st.sampled_from(["f32", "f16", "bf16"]))
def test_judge_floor_measures_every_figure_over_the_whole_output_and_each_segment(
    seed: int, precision: str
) -> None:
    truth, honest, candidate = _arrays(seed)
    floor = judge_floor(truth, honest, candidate, precision, segments=SPANS)  # type: ignore[arg-type]
    multiple = {"f32": 100.0, "f16": 16.0, "bf16": 16.0}[precision]
    assert floor.precision == precision
    assert floor.multiple == multiple

    def floor_of(lo: int, hi: int) -> float:
        return max(_rounding(truth, lo, hi, precision), _nmse(honest, truth, truth, lo, hi))

    assert floor.floor_nmse == _approx(floor_of(0, 60))
    assert floor.candidate_nmse == _approx(_nmse(candidate, truth, truth, 0, 60))
    assert floor.honest_distance == _approx(_nmse(candidate, honest, truth, 0, 60))
    assert [s.name for s in floor.segments] == ["head", "zeros", "tail"]
    for segment, (_, lo, hi) in zip(floor.segments, SPANS, strict=True):
        assert segment.floor_nmse == _approx(floor_of(lo, hi))
        assert segment.candidate_nmse == _approx(_nmse(candidate, truth, truth, lo, hi))
        assert segment.derived_tolerance == _approx(multiple * floor_of(lo, hi))
    assert floor.honest_orders == ("pairwise",)
    assert floor.twins == ()


def test_judge_floor_takes_the_honest_error_where_it_exceeds_rounding_and_rounding_elsewhere() -> (
    None
):
    truth, honest, candidate = _arrays(7)
    f32 = judge_floor(truth, honest, candidate, "f32")
    assert _nmse(honest, truth, truth, 0, 60) > 10 * _rounding(truth, 0, 60, "f32")
    assert f32.floor_nmse == _approx(_nmse(honest, truth, truth, 0, 60))
    exact = judge_floor(truth, truth.copy(), candidate, "f32")
    assert exact.floor_nmse == _approx(_rounding(truth, 0, 60, "f32"))
    assert exact.honest_distance == _approx(exact.candidate_nmse)


def test_judge_floor_uses_a_given_multiple_for_the_whole_output_and_every_segment() -> None:
    truth, honest, candidate = _arrays(3)
    floor = judge_floor(truth, honest, candidate, "f32", segments=SPANS, multiple=7.0)
    assert floor.multiple == 7.0
    assert floor.derived_tolerance == 7.0 * floor.floor_nmse
    assert [s.derived_tolerance for s in floor.segments] == [
        7.0 * s.floor_nmse for s in floor.segments
    ]


def test_judge_floor_reads_a_candidate_of_any_shape_flat() -> None:
    truth, honest, candidate = _arrays(5)
    flat = judge_floor(truth, honest, candidate, "f32", segments=SPANS)
    shaped = judge_floor(truth, honest, candidate.reshape(3, 4, 5), "f32", segments=SPANS)
    assert shaped == flat


def _never() -> np.ndarray:
    raise AssertionError("called where the rule says it must not run")


def test_the_in_order_twin_runs_when_asked_or_when_the_pairwise_floor_fails_and_never_otherwise() -> (
    None
):
    rng = np.random.default_rng(11)
    truth = rng.standard_normal(200)
    pairwise = truth * (1 + 1e-7 * rng.standard_normal(200))
    ordered = truth * (1 + 1e-4 * rng.standard_normal(200))  # a larger honest error
    candidate = ordered * (1 + 1e-8 * rng.standard_normal(200))  # near the in-order output
    failing = judge_floor(truth, pairwise, candidate, "f32", in_order=_never, run_in_order=False)
    assert not failing.passed
    assert failing.honest_orders == ("pairwise",)
    both = judge_floor(truth, pairwise, candidate, "f32", in_order=lambda: ordered)
    assert both.passed  # the in-order floor covers the candidate
    assert both.honest_orders == ("pairwise", "in order")
    # The floor is the larger honest error, the distance the nearer honest output.
    assert both.floor_nmse == _approx(_nmse(ordered, truth, truth, 0, 200))
    assert both.honest_distance == _approx(_nmse(candidate, ordered, truth, 0, 200))
    assert both.honest_distance < _nmse(candidate, pairwise, truth, 0, 200) / 100
    honest = judge_floor(truth, pairwise, pairwise, "f32", in_order=lambda: ordered)
    assert honest.honest_orders == ("pairwise",)
    asked = judge_floor(
        truth, pairwise, pairwise, "f32", in_order=lambda: ordered, run_in_order=True
    )
    assert asked.passed
    assert asked.honest_orders == ("pairwise", "in order")
    assert asked.honest_distance == 0.0
    assert asked.floor_nmse == _approx(_nmse(ordered, truth, truth, 0, 200))


def test_the_downgraded_twins_run_for_a_failure_or_a_diagnosis_and_never_for_a_plain_pass() -> None:
    truth, honest, _ = _arrays(13)
    outputs: Outputs = {TF32: (truth * 1.001,)}
    passed = judge_floor(truth, honest, honest, "f32", downgraded=_never)  # type: ignore[arg-type]
    assert passed.passed
    assert passed.twins == ()
    diagnosed = judge_floor(truth, honest, honest, "f32", downgraded=lambda: outputs, diagnose=True)
    assert diagnosed.passed
    assert [t.name for t in diagnosed.twins] == [TF32]
    failed = judge_floor(truth, honest, truth * 1.001, "f32", downgraded=lambda: outputs)
    assert not failed.passed
    assert [t.name for t in failed.twins] == [TF32]
    assert failed.twins[0].distance == 0.0


def test_a_twins_figures_are_its_first_outputs_error_the_nearest_distance_and_the_widest_spread() -> (
    None
):
    rng = np.random.default_rng(17)
    truth = rng.standard_normal(300)
    honest = truth * (1 + 1e-7 * rng.standard_normal(300))
    first = truth * (1 + 1e-3 * rng.standard_normal(300))
    wide = first * (1 + 1e-4 * rng.standard_normal(300))  # the widest from the first
    narrow = first * (1 + 1e-6 * rng.standard_normal(300))
    candidate = narrow * (1 + 1e-9 * rng.standard_normal(300))  # nearest the last
    lone = truth * (1 + 1e-2 * rng.standard_normal(300))
    outputs: Outputs = {
        TF32: (first, wide, narrow),
        F16: (lone,),
        BF16: (honest.copy(), lone),  # computes what the honest twin does: dropped
        MATMULS: (lone, honest.copy()),  # only a later output is the honest one
    }
    floor = judge_floor(truth, honest, candidate, "f32", downgraded=lambda: outputs)
    assert [t.name for t in floor.twins] == [TF32, F16, MATMULS]
    tf32, f16, matmuls = floor.twins
    assert tf32.nmse == _approx(_nmse(first, truth, truth, 0, 300))
    assert tf32.distance == _approx(_nmse(candidate, narrow, truth, 0, 300))
    assert tf32.spread == _approx(_nmse(wide, first, truth, 0, 300))
    assert f16.nmse == _approx(_nmse(lone, truth, truth, 0, 300))
    assert f16.distance == _approx(_nmse(candidate, lone, truth, 0, 300))
    assert f16.spread == 0.0
    assert matmuls.distance == _approx(_nmse(candidate, honest, truth, 0, 300))


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


def test_judge_floor_reads_the_honest_and_in_order_outputs_of_any_shape_flat() -> None:
    # The op's twins return its output's shape; the floor reads each flat, as the truth is.
    truth, honest, candidate = _arrays(19)
    ordered = truth * (1 + 1e-3 * np.random.default_rng(19).standard_normal(60))
    flat = judge_floor(
        truth, honest, candidate, "f32", segments=SPANS, in_order=lambda: ordered, run_in_order=True
    )
    shaped = judge_floor(
        truth,
        honest.reshape(3, 20),
        candidate,
        "f32",
        segments=SPANS,
        in_order=lambda: ordered.reshape(4, 15),
        run_in_order=True,
    )
    assert shaped == flat
    assert shaped.honest_orders == ("pairwise", "in order")


def test_the_whole_output_figures_sum_the_whole_output_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The floor's cost: each array pair is summed once per span it is judged over. The
    honest distance and the twins' figures are judged over the whole output, so each is one
    sum, not one per segment (at 10^6 elements a sum is a pass over both arrays)."""
    from diffcheck.floor import measure
    from diffcheck.floor.sums import span_sums as real  # what measure calls

    spans_per_sum: list[int] = []

    def counted(a: np.ndarray, b: np.ndarray | None, spans: list[tuple[int, int]]) -> list[float]:
        spans_per_sum.append(len(spans))
        return real(a, b, spans)

    monkeypatch.setattr(measure, "span_sums", counted)
    truth, honest, _ = _arrays(23)
    rng = np.random.default_rng(23)
    first, second, third = (truth * (1 + 1e-3 * rng.standard_normal(60)) for _ in range(3))
    outputs: Outputs = {TF32: (first, second, third), F16: (first * 1.01,)}
    floor = judge_floor(
        truth,
        honest,
        first,
        "f32",
        segments=SPANS,
        in_order=lambda: honest * (1 + 1e-7),
        run_in_order=True,
        downgraded=lambda: outputs,
    )
    assert [t.name for t in floor.twins] == [TF32, F16]
    every = len(SPANS) + 1
    assert spans_per_sum == [
        every,  # the truth's energies
        every,  # the candidate against the truth
        every,  # the pairwise honest twin against the truth
        1,  # the candidate's distance to it
        every,  # both honest twins against the truth (the in-order one ran too)
        every,
        1,  # the candidate's distance to each
        1,
        1,  # the first twin: its first output's error
        1,  # the candidate's distance to each of its three outputs
        1,
        1,
        1,  # its spread: each later output against the first
        1,
        1,  # the second twin: its error, the distance, no spread
        1,
    ]
