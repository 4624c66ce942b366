"""Long reductions: drawn at 10^4 to 10^6 elements, judged against the exact result.

A float32 sum taken left to right and a one-pass variance are found and blamed on the
candidate by the oracle; NumPy's pairwise sums, against a backend that sums in extended
precision, stay inside the bound (no finding either way).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from diffcheck.search import search_api
from diffcheck.search.arrays import Space
from diffcheck.search.large import MAX_LENGTH, MIN_LENGTH
from diffcheck.search.table import recipes
from diffcheck.values.accuracy import summation_depth, true_variance, variance_allowance
from diffcheck.values.judges import judge_reduction
from diffcheck.values.model import Location
from value_fakes import FaultyAdapter


@pytest.mark.parametrize(("fault", "function"), [("naive-sum", "sum"), ("one-pass-var", "var")])
def test_a_planted_precision_problem_is_found_and_blamed_by_the_oracle(
    fault: str, function: str
) -> None:
    result = search_api(FaultyAdapter(fault), functions=[function], examples=30, seed=0)
    found = [
        f
        for f in result.document.findings
        if f.kind == "value" and f.blame == "candidate" and f.blame_evidence == "oracle"
    ]
    assert found, result.document.findings
    # The shrunk example keeps a length that shows the error: 10^4 elements at least.
    assert any(_size(f.example) >= MIN_LENGTH for f in found), [f.example for f in found]


def _size(example: str) -> int:
    shape = re.match(r"\w+\[([\d, ]*)\]", example)
    assert shape is not None, example
    return math.prod(int(n) for n in shape.group(1).split(",") if n.strip())


@pytest.mark.parametrize("function", ["sum", "mean", "var"])
def test_numpy_pairwise_sums_stay_inside_the_bound(function: str) -> None:
    # The candidate rounds a long-double result once: any error beyond the bound is NumPy's
    # and would be a finding blamed on the reference.
    result = search_api(FaultyAdapter("exact-sums"), functions=[function], examples=40, seed=2)
    assert [f for f in result.document.findings if f.kind == "value"] == []


def test_long_reductions_are_drawn_at_ten_thousand_to_a_million_elements() -> None:
    sizes: list[int] = []
    space = Space(("float32", "float64", "int32"), function="sum")

    @settings(
        max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(recipes()["sum"].draw(space))
    def collect(example) -> None:  # type: ignore[no-untyped-def]
        sizes.append(example.size())

    collect()
    assert any(s >= MIN_LENGTH for s in sizes), sizes
    assert any(s < MIN_LENGTH for s in sizes), sizes  # the short draws go on
    assert max(sizes) <= MAX_LENGTH


def _naive(values: np.ndarray) -> float:
    return float(np.cumsum(values, dtype=np.float32)[-1])


def test_the_oracle_blames_a_left_to_right_sum_and_clears_a_pairwise_one() -> None:
    terms = np.full(100_000, 0.1, np.float32)
    pairwise, naive = float(np.sum(terms)), _naive(terms)
    loc = Location((), "", "", None)
    blame = judge_reduction("sum", [terms], {}, pairwise, naive, "float32", loc)
    assert blame is not None
    assert blame.side == "candidate"
    assert blame.evidence == "oracle"
    swapped = judge_reduction("sum", [terms], {}, naive, pairwise, "float32", loc)
    assert swapped is not None
    assert swapped.side == "reference"
    assert judge_reduction("sum", [terms], {}, pairwise, pairwise, "float32", loc) is None


def test_the_bound_grows_like_log2_n_for_sums_and_like_n_for_scans() -> None:
    assert summation_depth("sum", 10**6) == math.ceil(math.log2(10**6)) + 32
    assert summation_depth("sum", 5) == 4  # short sums: the plain bound is tighter
    assert summation_depth("cumulative_sum", 10**6) == 10**6 - 1
    assert summation_depth("vecdot", 10**4) == 10**4 - 1


def test_the_variance_oracle_rejects_the_one_pass_formula() -> None:
    rng = np.random.default_rng(0)
    x = (1000.0 + rng.random(100_000)).astype(np.float32)
    terms = x.astype(np.float64).tolist()
    truth = true_variance(terms)
    assert truth is not None
    allowed = variance_allowance(terms, truth, 2.0**-23)
    one_pass = float(np.mean(x * x) - np.mean(x) ** 2)
    assert abs(float(np.var(x)) - truth) <= allowed
    assert abs(one_pass - truth) > allowed
