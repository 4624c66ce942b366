"""Issue 18 item 8: a count of equal segments past the element count is refused before naming them.

``diff``/``compare`` with ``segments=10**9`` on 64 elements once spent 19 s and 5.8 GB making
segment names; any count from 1 to the element count still judges, anything else is a
one-line ValueError at once.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffcheck
from diffcheck.differ import _measure, diff

_ONES = np.ones(64, dtype=np.float32)


@settings(max_examples=300, deadline=None)
@given(count=st.one_of(st.integers(min_value=65, max_value=2**70), st.integers(max_value=0)))
def test_a_count_outside_one_to_the_elements_is_refused_before_allocating(count: int) -> None:
    # The differ imports numba once a process has spent 0.5 s measuring with NumPy (see
    # _measure): load it and run it once first, so neither the import nor the kernel's first
    # call is counted against whichever example crosses that line.
    _measure.load_kernel()
    diff(_ONES, _ONES, max_nmse=1e-7)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"segments={count}") as raised:
            diff(_ONES, _ONES, max_nmse=1e-7, segments=count)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "\n" not in str(raised.value)
    assert peak < 1 << 20


@settings(max_examples=64, deadline=None)
@given(count=st.integers(min_value=1, max_value=64))
def test_every_count_up_to_the_elements_still_judges(count: int) -> None:
    if 64 % count:
        with pytest.raises(ValueError, match="equal segments"):
            diff(_ONES, _ONES, max_nmse=1e-7, segments=count)
        return
    verdict = diff(_ONES, _ONES, max_nmse=1e-7, segments=count)
    assert len(verdict.segments) == count
    assert verdict.status == "passed"


def test_a_boolean_is_not_a_count() -> None:
    with pytest.raises(ValueError, match="segments=True is not a count"):
        diff(_ONES, _ONES, max_nmse=1e-7, segments=True)


def test_compare_refuses_a_billion_segments_on_64_elements_at_once() -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match="more segments than the 64 elements"):
        diffcheck.compare(lambda xp, a: a * 2, _ONES, candidate="array_api_strict", segments=10**9)
    assert time.perf_counter() - started < 5


class _Claims(dict[str, tuple[int, int]]):
    """A mapping that claims a billion entries: it must be refused from its length."""

    def __len__(self) -> int:
        return 10**9

    def items(self):  # type: ignore[no-untyped-def]
        raise AssertionError("iterated a mapping that was refused by its length")


def _double(xp: object, a: object) -> object:
    return a * 2  # type: ignore[operator]


@pytest.mark.parametrize(
    ("segments", "message"),
    [
        ({"a": (True, 64)}, "not a \\(start, stop\\) pair of ints"),
        ({"a": (0, 64.0)}, "not a \\(start, stop\\) pair of ints"),
        ({"a": ("0", 64)}, "not a \\(start, stop\\) pair of ints"),
        ({"a": (0, 32, 64)}, "not a \\(start, stop\\) pair of ints"),
        ({"a": 64}, "not a \\(start, stop\\) pair of ints"),
        ({7: (0, 64)}, "the name 7 is not a str"),
        ({"a": (0, 65)}, "inside the 64 elements"),
        ({"a": (-1, 64)}, "inside the 64 elements"),
        ({"a": (8, 8)}, "inside the 64 elements"),
        ({f"s{i}": (i, i + 1) for i in range(65)}, "more than the 64 elements"),
        (_Claims(), "1000000000 segments, more than the 64 elements"),
    ],
)
def test_a_segments_mapping_is_strict(segments: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        diffcheck.compare(_double, _ONES, candidate="array_api_strict", segments=segments)  # type: ignore[arg-type]
