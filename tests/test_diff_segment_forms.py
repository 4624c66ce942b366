"""``diff`` takes segments as the issue and the docstring write them: plain tuples too."""

from __future__ import annotations

import numpy as np
import pytest

from diffcheck import diff
from diffcheck.differ import Segment


def _pair() -> tuple[np.ndarray, np.ndarray]:
    reference = np.linspace(1.0, 2.0, 8).astype(np.float32)
    actual = reference.copy()
    actual[5] *= 1.5
    return reference, actual


def test_the_issues_example_with_a_wrong_element_between_tuple_segments_fails() -> None:
    reference, actual = _pair()
    verdict = diff(reference, actual, max_nmse=1e-7, segments=[(0, 4), (6, 8)])
    assert verdict.status == "failed"
    failing = verdict.first_failing_segment
    assert failing is not None
    assert (failing.segment.name, failing.segment.start, failing.segment.stop) == (
        "uncovered",
        4,
        6,
    )


def test_named_tuples_and_segment_objects_judge_alike() -> None:
    reference, actual = _pair()
    named = diff(reference, actual, max_nmse=1e-7, segments=[("head", 0, 4), ("tail", 4, 8)])
    objects = diff(
        reference, actual, max_nmse=1e-7, segments=[Segment("head", 0, 4), Segment("tail", 4, 8)]
    )
    assert [s.segment.name for s in named.segments] == ["head", "tail"]
    assert [(s.status, s.reason) for s in named.segments] == [
        (s.status, s.reason) for s in objects.segments
    ]
    assert named.segments[1].status == "failed"


@pytest.mark.parametrize("bad", [[(0,)], [(0, 4.0)], [("a", 0)], [(True, 4)], ["0:4"], [[0, 4]]])
def test_anything_else_is_a_one_line_value_error(bad: list[object]) -> None:
    reference, actual = _pair()
    with pytest.raises(ValueError, match="neither a Segment"):
        diff(reference, actual, max_nmse=1e-7, segments=bad)  # type: ignore[arg-type]
