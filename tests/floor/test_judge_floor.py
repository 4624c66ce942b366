"""judge_floor's figures, each computed here from its definition, and when each twin runs.

The floor of a span is the largest of the rounding error and the honest twins' errors; the
candidate's NMSE, its distance to the honest twins and the downgraded twins' error, distance
and spread are sums over spans divided by the truth's energy. Each is checked against the
same sum written out here, and the in-order and downgraded twins against the rules of when
they run (a twin that runs where it must not raises).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.floor import Twin, judge_floor, twin_named
from diffcheck.precision import TwinName

TF32: TwinName = "tf32 operands"
F16: TwinName = "float16 operands"
BF16: TwinName = "bfloat16 operands"
MATMULS: TwinName = "float16 matmuls"
Outputs = dict[TwinName, tuple[np.ndarray, ...]]


def _twins(outputs: Outputs) -> list[tuple[Twin, tuple[np.ndarray, ...]]]:
    """The downgraded twins' outputs as judge_floor takes them, in the mapping's order."""
    return [(twin_named(name), ran) for name, ran in outputs.items()]


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
    diagnosed = judge_floor(
        truth, honest, honest, "f32", downgraded=lambda: _twins(outputs), diagnose=True
    )
    assert diagnosed.passed
    assert [t.name for t in diagnosed.twins] == [TF32]
    failed = judge_floor(truth, honest, truth * 1.001, "f32", downgraded=lambda: _twins(outputs))
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
    floor = judge_floor(truth, honest, candidate, "f32", downgraded=lambda: _twins(outputs))
    assert [t.name for t in floor.twins] == [TF32, F16, MATMULS]
    tf32, f16, matmuls = floor.twins
    assert tf32.nmse == _approx(_nmse(first, truth, truth, 0, 300))
    assert tf32.distance == _approx(_nmse(candidate, narrow, truth, 0, 300))
    assert tf32.spread == _approx(_nmse(wide, first, truth, 0, 300))
    assert f16.nmse == _approx(_nmse(lone, truth, truth, 0, 300))
    assert f16.distance == _approx(_nmse(candidate, lone, truth, 0, 300))
    assert f16.spread == 0.0
    assert matmuls.distance == _approx(_nmse(candidate, honest, truth, 0, 300))


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
        downgraded=lambda: _twins(outputs),
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
