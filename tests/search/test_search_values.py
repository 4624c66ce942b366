"""Float draws cover each class in their stated shares, and coverage counts count them."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from hypothesis import given, settings

from diffcheck.search.recipes import Example
from diffcheck.search.values import classify, coverage_counts, float_elements, points_of


def test_float_draws_reach_every_class_and_are_stored_exactly() -> None:
    seen: Counter[str] = Counter()

    @settings(max_examples=300, deadline=None, database=None)
    @given(value=float_elements("float32", "exp"))
    def draw(value: float) -> None:
        assert isinstance(value, float)
        assert math.isnan(value) or float(np.float32(value)) == value
        seen[classify(value, "float32")] += 1

    draw()
    for kind in ("ordinary", "subnormal", "zero", "infinite", "nan"):
        assert seen[kind] > 0, seen
    assert seen["ordinary"] >= 50, seen  # the largest share


def test_exps_overflow_threshold_is_an_interesting_point() -> None:
    points = points_of("exp", "float32")
    assert any(abs(p - math.log(float(np.finfo(np.float32).max))) < 1e-6 for p in points)
    assert any(abs(p - 2.5) < 1e-12 for p in points_of("round", "float64"))
    assert any(abs(p - math.pi / 2) < 1e-12 for p in points_of("sin", "float32"))


def test_coverage_counts_distinct_values_by_class() -> None:
    x = np.asarray([1.5, 1.5, -2.0, 0.0, -0.0, 1e-45, math.inf, math.nan, math.nan], np.float32)
    y = np.asarray([3, 0, 3], np.int8)
    counts = coverage_counts([Example((x,)), Example((x, y))])
    assert counts == {"ordinary": 3, "subnormal": 1, "zero": 2, "infinite": 1, "nan": 1}
    assert coverage_counts([Example((x, y))], dtype="int8")["ordinary"] == 1
    z = np.asarray([1 + 2j, 1 + 0j], np.complex64)
    assert coverage_counts([Example((z,))]) == {
        "ordinary": 2,
        "subnormal": 0,
        "zero": 1,
        "infinite": 0,
        "nan": 0,
    }
