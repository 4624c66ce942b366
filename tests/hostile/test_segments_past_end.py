"""Issue 34 L7: ``diff`` refuses segments past the reference's end with one ConfigError.

``diff(a, b, segments=[(0, 10**12)])`` on 64 elements returned a (failed) verdict, as if
the candidate had been short; a segment past the reference's own end is the caller's
mistake. A shorter *candidate* still fails as a verdict.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck import diff
from diffcheck.errors import ConfigError

_REF = np.linspace(0.5, 1.5, 64, dtype=np.float32)


@settings(max_examples=200, deadline=None)
@given(
    cuts=st.lists(st.integers(0, 63), min_size=1, max_size=4),
    past=st.one_of(st.integers(65, 10**4), st.sampled_from([10**12, 2**63, 2**64 + 1])),
    named=st.booleans(),
)
def test_any_segment_past_the_reference_is_one_config_error(
    cuts: list[int], past: int, named: bool
) -> None:
    segments: list[tuple[int, int] | tuple[str, int, int]] = [(c, 64) for c in cuts]
    segments.append(("x\x1b[2J", cuts[0], past) if named else (cuts[0], past))
    with pytest.raises(ConfigError, match="past the reference's 64 elements") as raised:
        diff(_REF, _REF, max_nmse=1e-7, segments=segments)
    message = str(raised.value)
    assert "\n" not in message
    assert "\x1b" not in message


def test_segments_ending_at_the_reference_end_are_judged() -> None:
    verdict = diff(_REF, _REF, max_nmse=1e-7, segments=[(0, 60), (60, 64)])
    assert verdict.status == "passed"


def test_a_short_candidate_is_still_a_failed_verdict() -> None:
    verdict = diff(_REF, _REF[:32], max_nmse=1e-7, segments=[(0, 64)])
    assert verdict.status == "failed"
