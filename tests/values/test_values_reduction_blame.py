"""Blame for sums, means and products: exact integers, the float oracle, complex sums.

Each case pins the evidence and its sentence word for word, and blames the other side when
the two results are swapped. ``xp.``-prefixed names (the API search's) are the same function.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from diffcheck.values import blame, compare_values
from diffcheck.values.judges import judge_reduction
from diffcheck.values.model import Location


def i32(v: Any) -> npt.NDArray[Any]:
    return np.array(v, np.int32)


def f32(v: Any) -> npt.NDArray[Any]:
    return np.array(v, np.float32)


def c64(v: Any) -> npt.NDArray[Any]:
    return np.array(v, np.complex64)


def c128(v: Any) -> npt.NDArray[Any]:
    return np.array(v, np.complex128)


CASES = [
    (
        "sum",
        i32([1, 2, 3]),
        6,
        7,
        (
            "candidate",
            "standard-rule",
            "exact sum of 3 integers = 6, which fits int32; reference 6, candidate 7 at []",
            "reference",
        ),
    ),
    (
        "xp.sum",
        i32([1, 2, 3]),
        6,
        7,
        (
            "candidate",
            "standard-rule",
            "exact sum of 3 integers = 6, which fits int32; reference 6, candidate 7 at []",
            "reference",
        ),
    ),
    (
        "cumulative_sum",
        i32([1, 2, 3]),
        i32([1, 3, 6]),
        [1, 3, 7],
        (
            "candidate",
            "standard-rule",
            "exact cumulative_sum of 3 integers = 6, which fits int32; reference 6, candidate 7 at [2]",
            "reference",
        ),
    ),
    (
        "prod",
        i32([2, 3, 4]),
        24,
        25,
        (
            "candidate",
            "standard-rule",
            "exact prod of 3 integers = 24, which fits int32; reference 24, candidate 25 at []",
            "reference",
        ),
    ),
    (
        "xp.prod",
        i32([2, 3, 4]),
        24,
        25,
        (
            "candidate",
            "standard-rule",
            "exact prod of 3 integers = 24, which fits int32; reference 24, candidate 25 at []",
            "reference",
        ),
    ),
    (
        "cumulative_prod",
        i32([2, 3, 4]),
        i32([2, 6, 24]),
        [2, 6, 25],
        (
            "candidate",
            "standard-rule",
            "exact cumulative_prod of 3 integers = 24, which fits int32; reference 24, candidate 25 at [2]",
            "reference",
        ),
    ),
    (
        "sum",
        i32([2147483646, 1]),
        2147483647,
        2147483646,
        (
            "candidate",
            "standard-rule",
            "exact sum of 2 integers = 2147483647, which fits int32; reference 2147483647, candidate 2147483646 at []",
            "reference",
        ),
    ),
    (
        "sum",
        i32([-2147483647, -1]),
        -2147483648,
        -2147483647,
        (
            "candidate",
            "standard-rule",
            "exact sum of 2 integers = -2147483648, which fits int32; reference -2147483648, candidate -2147483647 at []",
            "reference",
        ),
    ),
    (
        "sum",
        i32([2147483647, 1]),
        -2147483648,
        0,
        (
            "undecided",
            "none",
            "no special case, oracle or standard rule decides this value failure of sum, and no further backend voted",
            "undecided",
        ),
    ),
    (
        "sum",
        f32([1, 2, 3]),
        6,
        6.5,
        (
            "candidate",
            "oracle",
            "true sum over 3 terms = 6.0 (allowed error 1.43e-06); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "xp.sum",
        f32([1, 2, 3]),
        6,
        6.5,
        (
            "candidate",
            "oracle",
            "true xp.sum over 3 terms = 6.0 (allowed error 1.43e-06); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "mean",
        f32([1, 2, 3]),
        2,
        2.5,
        (
            "candidate",
            "oracle",
            "true mean over 3 terms = 2.0 (allowed error 4.77e-07); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "prod",
        f32([2, 3, 4]),
        24,
        24.5,
        (
            "candidate",
            "oracle",
            "true prod over 3 terms = 24.0 (allowed error 8.58e-06); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "xp.prod",
        f32([2, 3, 4]),
        24,
        24.5,
        (
            "candidate",
            "oracle",
            "true xp.prod over 3 terms = 24.0 (allowed error 8.58e-06); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "cumulative_prod",
        f32([2, 3, 4]),
        f32([2, 6, 24]),
        [2, 6, 24.5],
        (
            "candidate",
            "oracle",
            "true cumulative_prod over 3 terms = 24.0 (allowed error 8.58e-06); reference is 0 "
            "off, candidate 0.5 at [2]",
            "reference",
        ),
    ),
    (
        "xp.max",
        f32([1, math.nan]),
        math.nan,
        1,
        (
            "candidate",
            "special-case",
            "the standard: NaN values propagate: xp.max must be nan at []; reference nan, candidate 1.0",
            "reference",
        ),
    ),
    (
        "sum",
        c64([1 + 2j, 3 - 1j]),
        4 + 1j,
        4 + 1.5j,
        (
            "candidate",
            "oracle",
            "true sum over 2 complex terms = (4+1j) (math.fsum per component; allowed error 1.14e-06); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "xp.sum",
        c64([1 + 2j, 3 - 1j]),
        4 + 1j,
        4 + 1.5j,
        (
            "candidate",
            "oracle",
            "true xp.sum over 2 complex terms = (4+1j) (math.fsum per component; allowed error 1.14e-06); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "mean",
        c64([1 + 2j, 3 - 1j]),
        2 + 0.5j,
        2 + 1j,
        (
            "candidate",
            "oracle",
            "true mean over 2 complex terms = (2+0.5j) (math.fsum per component; allowed error 5.68e-07); reference is 0 off, candidate 0.5 at []",
            "reference",
        ),
    ),
    (
        "cumulative_sum",
        c64([1 + 2j, 3 - 1j]),
        c64([1 + 2j, 4 + 1j]),
        [1 + 2j, 4 + 1.5j],
        (
            "candidate",
            "oracle",
            "true cumulative_sum over 2 complex terms = (4+1j) (math.fsum per component; allowed error 1.14e-06); reference is 0 off, candidate 0.5 at [1]",
            "reference",
        ),
    ),
    (
        "sum",
        c128([1 + 2j, 3 - 1j]),
        4 + 1j,
        4 + 1j + 1e-12,
        (
            "candidate",
            "oracle",
            "true sum over 2 complex terms = (4+1j) (math.fsum per component; allowed error 2.11e-15); reference is 0 off, candidate 1e-12 at []",
            "reference",
        ),
    ),
    (
        "prod",
        c64([1 + 1j, 2 + 0j]),
        2 + 2j,
        2 + 2.5j,
        (
            "undecided",
            "none",
            "no special case, oracle or standard rule decides this value failure of prod, and no further backend voted",
            "undecided",
        ),
    ),
    (
        "sum",
        c64([complex(math.inf, 1), 1 + 1j]),
        complex(math.inf, 2),
        complex(math.nan, 2),
        (
            "undecided",
            "none",
            "no special case, oracle or standard rule decides this nan failure of sum, and no further backend voted",
            "undecided",
        ),
    ),
]


@pytest.mark.parametrize(("function", "x", "right", "wrong", "expected"), CASES)
def test_a_reduction_blames_the_side_off_its_exact_or_bounded_value(
    function: str, x: Any, right: Any, wrong: Any, expected: tuple[str, str, str, str]
) -> None:
    right = np.asarray(right, x.dtype)
    wrong = np.asarray(wrong, right.dtype)
    judged = blame(function, [x], {}, right, wrong, compare_values(right, wrong, function=function))
    swapped = blame(
        function, [x], {}, wrong, right, compare_values(wrong, right, function=function)
    )
    assert (judged.side, judged.evidence, judged.why, swapped.side) == expected


# One reduced element judged on its own: each side against the exact result.
AT = Location((), "r", "c", None)
S32 = 2.0**-149  # float32's smallest subnormal
S64 = 2.0**-1074  # float64's


def _sides(
    function: str, x: Any, kwargs: dict[str, Any], r: Any, c: Any, dtype: str
) -> tuple[str | None, str | None]:
    """The side blamed with (r, c) and with the two swapped."""
    found = judge_reduction(function, [x], kwargs, r, c, dtype, AT)
    swapped = judge_reduction(function, [x], kwargs, c, r, dtype, AT)
    return (
        None if found is None else found.side,
        None if swapped is None else swapped.side,
    )


def test_an_integer_sum_of_fractional_terms_is_left_to_the_other_evidence() -> None:
    """sum(x, dtype=int32) of 1.5 and 2.5: no exact integer truth, so no standard rule."""
    assert _sides("sum", np.array([1.5, 2.5]), {}, 4, 3, "int32") == (None, None)


@pytest.mark.parametrize(
    ("function", "x", "right", "wrong"),
    [
        # A subnormal truth is below every absolute allowance: half an ULP decides. The
        # mean of the smallest subnormal and 0 lies halfway: either neighbour is right.
        ("mean", f32([S32, 0.0]), 0.0, 2 * S32),
        ("mean", f32([S32, 0.0]), S32, 2 * S32),
        # 2 * S32 exactly: one subnormal ULP off is wrong.
        ("sum", f32([S32, S32]), 2 * S32, 3 * S32),
        ("sum", f32([S32, S32]), 2 * S32, S32),
    ],
)
def test_a_subnormal_reduction_allows_half_an_ulp(
    function: str, x: Any, right: float, wrong: float
) -> None:
    assert _sides(function, x, {}, right, wrong, "float32") == ("candidate", "reference")


def test_a_side_exactly_at_the_allowed_summing_error_is_within_it() -> None:
    """sum of 1 and 1 in float32: depth 1, so 2**-23 * 2 allowed; 2 + 2**-22 is exactly that."""
    found = judge_reduction("sum", [f32([1.0, 1.0])], {}, 2 + 2.0**-22, 2 + 2.0**-21, "float32", AT)
    assert found is not None
    assert found.why == (
        "true sum over 2 terms = 2.0 (allowed error 2.38e-07); reference is 2.38e-07 off, "
        "candidate 4.77e-07 at []"
    )
    assert _sides("sum", f32([1.0, 1.0]), {}, 2 + 2.0**-22, 2 + 2.0**-21, "float32") == (
        "candidate",
        "reference",
    )


def test_a_complex_sum_exactly_at_its_allowed_error_is_within_it() -> None:
    """(1+0j) + (1+0j) in complex64: 2**-23 * 2 for the sum plus 2**-23 * 2 for rounding."""
    right, wrong = complex(2 + 2.0**-21, 0.0), complex(2 + 2.0**-20, 0.0)
    x = c64([1 + 0j, 1 + 0j])
    found = judge_reduction("sum", [x], {}, right, wrong, "complex64", AT)
    assert found is not None
    assert "allowed error 4.77e-07); reference is 4.77e-07 off, candidate 9.54e-07" in found.why
    assert _sides("sum", x, {}, right, wrong, "complex64") == ("candidate", "reference")


# Two float64 factors whose exact product lies 0.5 + 1e-9 ULP above 0 (in subnormal ULPs):
# 0 is then exactly at the edge of half an ULP with the judge's 1e-9 slack.
EDGE_A, EDGE_B = float.fromhex("0x1.8p-599"), float.fromhex("0x1.55555560c95d4p-477")


def test_a_product_exactly_at_half_an_ulp_and_the_slack_is_within_it() -> None:
    from fractions import Fraction

    units = Fraction(EDGE_A) * Fraction(EDGE_B) / Fraction(S64)
    assert units == Fraction(0.5 + 1e-9)
    x = np.array([EDGE_A, EDGE_B])
    assert _sides("prod", x, {}, 0.0, 2 * S64, "float64") == ("candidate", "reference")
