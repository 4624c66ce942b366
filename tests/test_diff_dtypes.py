"""``diffcheck.diff`` binds dtypes as ``compare`` does: nothing is judged after a lossy cast.

The four false passes: complex inputs lost their imaginary part, integers were judged by a
tolerance (16777217 against 16777216, uint64 max against max - 1), float64 values below
float32's range and a reference of magnitude 1e-20 were judged by the absolute-MSE floor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffcheck
from diffcheck import diff
from diffcheck.differ import ABSOLUTE_MSE_FLOOR, compare_outputs
from diffcheck.errors import ConfigError


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_a_complex_input_is_refused_never_read_as_its_real_part(dtype: type) -> None:
    z = np.array([1 + 1j, 2 - 3j, -0.5 + 2j], dtype)
    with pytest.raises(ConfigError, match="imaginary part"):
        diff(z, np.conj(z), max_nmse=1e-7)
    with pytest.raises(ConfigError, match="imaginary part"):
        diff(z.real.astype(np.float32), z, max_nmse=1e-7)


@pytest.mark.parametrize(
    ("reference", "actual"),
    [
        (np.array([16777217, 5], np.int64), np.array([16777216, 5], np.int64)),
        (np.array([2**64 - 1, 3], np.uint64), np.array([2**64 - 2, 3], np.uint64)),
        (np.array([2**63 - 1], np.int64), np.array([2**63 - 2], np.uint64)),
        (np.array([True, False]), np.array([True, True])),
    ],
)
def test_integers_are_compared_exactly(reference: np.ndarray, actual: np.ndarray) -> None:
    verdict = diff(reference, actual, max_nmse=1e-7)
    assert not verdict
    assert "compared exactly" in str(verdict.reason)
    assert diff(reference, reference.copy(), max_nmse=1e-7)


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from([np.int32, np.int64, np.uint32, np.uint64]),
    values=st.lists(st.integers(0, 2**31 - 2), min_size=1, max_size=16),
    at=st.integers(0, 15),
    segments=st.sampled_from([None, 1]),
)
def test_any_integer_change_fails_whatever_the_tolerance(
    dtype: type, values: list[int], at: int, segments: int | None
) -> None:
    reference = np.array(values, dtype) + np.array(2**30, dtype)  # large: NMSE of 1 is tiny
    actual = reference.copy()
    actual[at % actual.size] += 1
    verdict = diff(reference, actual, max_nmse=1.0, segments=segments)
    assert verdict.status == "failed"
    assert diff(reference, reference.copy(), max_nmse=1e-7, segments=segments).passed


def test_integers_beside_floats_beyond_2_53_are_refused() -> None:
    with pytest.raises(ConfigError, match="2\\*\\*53"):
        diff(np.array([2**53 + 1], np.int64), np.array([2.0**53]), max_nmse=1e-7)
    # Within float64's integers, a float side is compared exactly with them.
    assert not diff(np.array([3, 4], np.int64), np.array([3.0, 4.000001]), max_nmse=1.0)
    assert diff(np.array([3, 4], np.int64), np.array([3.0, 4.0]), max_nmse=1e-7)


@pytest.mark.parametrize(
    ("reference", "actual"),
    [
        (np.array([1e-300, 2e-300]), np.array([5e-300, 2e-300])),
        (np.full(8, 1e-20, np.float32), np.full(8, 2e-20, np.float32)),
        (np.full(8, 1e-20, np.float32), np.zeros(8, np.float32)),
    ],
)
def test_a_reference_below_the_absolute_floor_is_refused(
    reference: np.ndarray, actual: np.ndarray
) -> None:
    with pytest.raises(ConfigError, match="absolute-MSE floor"):
        diff(reference, actual, max_nmse=1e-7)
    # The contract's comparator keeps the floor (the registered checks' rule).
    assert compare_outputs(reference, actual, 1e-7).passed


def test_an_all_zero_reference_keeps_the_absolute_floor() -> None:
    verdict = diff(np.zeros(4, np.float32), np.full(4, 1e-20, np.float32), max_nmse=1e-7)
    assert verdict.passed
    assert verdict.metrics is not None
    assert verdict.metrics.uses_absolute_mse


@settings(max_examples=40, deadline=None)
@given(scale=st.floats(1e-300, 1e-16), error=st.floats(0.5, 2.0))
def test_a_100_percent_error_never_passes_at_any_scale(scale: float, error: float) -> None:
    reference = np.linspace(1.0, 2.0, 32) * scale
    if np.mean(reference**2) < ABSOLUTE_MSE_FLOOR:
        with pytest.raises(ConfigError, match="absolute-MSE floor"):
            diff(reference, reference * (1 + error), max_nmse=1e-7)
    else:
        assert not diff(reference, reference * (1 + error), max_nmse=1e-7)


def test_compare_refuses_float64_inputs_float32_flushes_to_zero() -> None:
    with pytest.raises(ConfigError, match="flushes to zero"):
        diffcheck.compare(lambda xp, x: x, np.array([1e-300, 1.0]), candidate="array_api_strict")
    # float64 inputs float32 holds (rounded, not flushed) are converted as before.
    assert diffcheck.compare(lambda xp, x: x, np.array([0.1, 1.0]), candidate="array_api_strict")


def test_compare_refuses_a_reference_below_the_floor_through_diff() -> None:
    def half_wrong(xp: Any, x: Any) -> Any:
        return x * 2.0 if "strict" in xp.__name__ else x

    with pytest.raises(ConfigError, match="absolute-MSE floor"):
        diffcheck.compare(half_wrong, np.full(8, 1e-20, np.float32), candidate="array_api_strict")


# -- each refusal names the side and the dtype it refuses (mutation testing) ----------------


@pytest.mark.parametrize("side", ["reference", "actual"])
@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (np.array([1 + 1j, 2 - 3j], np.complex64), "but NMSE is measured over real numbers"),
        (np.array(["a", "b"]), "but diff compares numbers (bool, integer or real floating)"),
    ],
    ids=["complex", "text"],
)
def test_a_refused_dtype_names_its_side(side: str, bad: np.ndarray, says: str) -> None:
    other = np.array([1.0, 2.0], np.float32)
    pair = (bad, other) if side == "reference" else (other, bad)
    with pytest.raises(ConfigError) as refused:
        diff(*pair, max_nmse=1e-7)
    assert str(refused.value).startswith(f"the {side} has dtype {bad.dtype}, {says}")


@pytest.mark.parametrize("side", ["reference", "actual"])
@pytest.mark.parametrize("sign", [1, -1])
def test_integers_beside_floats_are_refused_just_past_2_53_on_either_side(
    side: str, sign: int
) -> None:
    # 2**53 itself is a float64; 2**53 + 1 is not. Either side may hold the integers.
    for beyond, refused in ((2**53, False), (2**53 + 1, True)):
        integers = np.array([sign * beyond, 7], np.int64)
        floats = integers.astype(np.float64)
        pair = (integers, floats) if side == "reference" else (floats, integers)
        if not refused:
            assert diff(*pair, max_nmse=1e-7).status == "passed"
            continue
        with pytest.raises(ConfigError) as error:
            diff(*pair, max_nmse=1e-7)
        assert str(error.value).startswith(f"the {side} holds integers beyond 2**53, which ")
