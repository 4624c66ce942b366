"""Blame for ``var`` and ``std``: the true spread (two passes, fsum), each side within its bound."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from diffcheck.values import blame, compare_values
from diffcheck.values.judges import judge_reduction
from diffcheck.values.model import Location

X = np.array([1.0, 2.0, 4.0, 8.0, 16.0], np.float32)
# Population and sample variance of X, and their square roots, to float64's precision.
TRUTH = {
    ("var", 0.0): 29.76,
    ("var", 1.0): 37.2,
    ("std", 0.0): 5.455272678794342,
    ("std", 1.0): 6.099180272790763,
}
ALLOWED = {
    ("var", 0.0): "2.48e-05",
    ("var", 1.0): "3.1e-05",
    ("std", 0.0): "2.93e-06",
    ("std", 1.0): "3.27e-06",
}


def _why(function: str, correction: float, off_reference: str, off_candidate: str) -> str:
    return (
        f"true {function} over 5 terms = {TRUTH[function, correction]!r} (math.fsum, two passes; "
        f"allowed error {ALLOWED[function, correction]}, the two-pass bound with a robust sum); "
        f"reference is {off_reference} off, candidate {off_candidate} at []"
    )


@pytest.mark.parametrize("function", ["var", "std"])
@pytest.mark.parametrize("correction", [0.0, 1.0])
def test_the_side_with_the_other_correction_is_blamed(function: str, correction: float) -> None:
    """A side that computed the sample spread for the population one (or the reverse)."""
    kwargs = {"correction": correction} if correction else {}
    right = np.float32(TRUTH[function, correction])
    wrong = np.float32(TRUTH[function, 1.0 - correction])
    verdict = compare_values(np.asarray(right), np.asarray(wrong), function=function)
    judged = blame(function, [X], kwargs, np.asarray(right), np.asarray(wrong), verdict)
    assert (judged.side, judged.evidence) == ("candidate", "oracle")
    off = abs(float(wrong) - TRUTH[function, correction])
    assert judged.why == _why(
        function, correction, f"{abs(float(right) - TRUTH[function, correction]):.3g}", f"{off:.3g}"
    )
    swapped = compare_values(np.asarray(wrong), np.asarray(right), function=function)
    judged = blame(function, [X], kwargs, np.asarray(wrong), np.asarray(right), swapped)
    assert (judged.side, judged.evidence) == ("reference", "oracle")


def test_a_side_within_the_bound_is_not_blamed_and_one_past_it_is() -> None:
    right = np.asarray(np.float32(29.76))
    within = np.asarray(np.float32(29.76 + 2e-5))  # 2.48e-05 allowed
    past = np.asarray(np.float32(29.76 + 3e-5))
    verdict = compare_values(right, within, function="var")
    assert not verdict.passed
    assert blame("var", [X], {}, right, within, verdict).side == "undecided"
    verdict = compare_values(right, past, function="var")
    judged = blame("var", [X], {}, right, past, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "oracle")


def _judged(
    x: npt.NDArray[Any], kwargs: dict[str, float], right: float, wrong: float
) -> tuple[str, str, str]:
    dtype = str(x.dtype)
    at = Location((), "r", "c", None)
    found = judge_reduction("var", [x], kwargs, right, wrong, dtype, at)
    swapped = judge_reduction("var", [x], kwargs, wrong, right, dtype, at)
    assert found is not None
    assert swapped is not None
    return found.side, swapped.side, found.why


def test_a_sample_variance_allows_the_error_of_its_corrected_divisor() -> None:
    """Two terms near 2**20 in float32: the error of their mean dominates, and the sample
    variance divides its square by n - 1 = 1 (0.0313 allowed), not by n (0.0156)."""
    x = np.array([2.0**20, 2.0**20 + 1], np.float32)
    right, wrong = float(np.float32(0.52)), float(np.float32(0.55))
    side, swapped, why = _judged(x, {"correction": 1.0}, right, wrong)
    assert (side, swapped) == ("candidate", "reference")
    assert "allowed error 0.0313, the two-pass bound" in why


def test_a_variance_exactly_at_its_allowed_error_is_within_it() -> None:
    """var(0, 2) = 1 in float64: 4 * 2**-52 allowed, which 1 + 2**-50 is exactly."""
    x = np.array([0.0, 2.0])
    side, swapped, why = _judged(x, {}, 1 + 2.0**-50, 1 + 2.0**-49)
    assert (side, swapped) == ("candidate", "reference")
    assert (
        "allowed error 8.88e-16, the two-pass bound with a robust sum); reference is 8.88e-16"
        in why
    )
