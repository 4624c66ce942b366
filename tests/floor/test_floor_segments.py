"""The precision floor judges every segment on its own, not the whole output alone.

A one-element error in a short segment is diluted below the derived tolerance over the
whole output; the segment's own floor sees it, and its reason names the segment.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.floor import judge_floor

SIZE = 4096


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), at=st.integers(0, 15), head=st.integers(16, 64))
def test_a_segment_over_its_floor_fails_a_whole_output_under_it(
    seed: int, at: int, head: int
) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1.0, 2.0, SIZE)  # one magnitude: an element weighs ~1/SIZE of it
    honest = truth.astype(np.float32).astype(np.float64)
    candidate = honest.copy()
    candidate[at] *= 1 + 1e-5  # ~84 float32 ULP on one element
    segments = (("head", 0, head), ("tail", head, SIZE))
    floor = judge_floor(truth, honest, candidate, "f32", segments=segments)
    assert floor.candidate_nmse < floor.derived_tolerance  # the whole output passes
    assert not floor.passed
    assert [s.name for s in floor.segments if not s.passed] == ["head"]
    reason = floor.reason()
    assert reason is not None
    assert reason.startswith("precision floor: head: NMSE ")
    # The same candidate without the element's error passes every segment.
    assert judge_floor(truth, honest, honest.copy(), "f32", segments=segments).passed
