"""Blame between two zeros of opposite signs: a correctly rounded zero keeps the sign of the
value it rounds; a complex zero's sign is open."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from diffcheck.values import blame, compare_values

TINY = np.float32(6e-45)  # a subnormal: times 1e-19 it rounds to a zero of its own sign
SMALL = np.float32(1e-19)
T, S = float(TINY), float(SMALL)
PRODUCT = "5.60519367942137e-64"


def _judge(function: str, args: list[Any], right: Any, wrong: Any) -> tuple[str, str, str]:
    verdict = compare_values(right, wrong, function=function)
    assert verdict.kind == "signed-zero"
    judged = blame(function, args, {}, right, wrong, verdict)
    swapped = blame(
        function, args, {}, wrong, right, compare_values(wrong, right, function=function)
    )
    assert swapped.side == "reference"
    return judged.side, judged.evidence, judged.why


@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_a_real_zero_takes_the_sign_of_the_true_product(sign: float) -> None:
    x, y = np.array([sign * TINY], np.float32), np.array([SMALL], np.float32)
    right = np.array([sign * 0.0], np.float32)
    wrong = np.array([-sign * 0.0], np.float32)
    rounds = "-0.0" if sign < 0 else "+0.0"
    truth = f"-{PRODUCT}" if sign < 0 else PRODUCT
    assert _judge("multiply", [x, y], right, wrong) == (
        "candidate",
        "oracle",
        f"true multiply({sign * T!r}, {S!r}) = {truth} rounds to {rounds} (a zero keeps the "
        f"sign of the value it rounds); reference {sign * 0.0!r}, candidate {-sign * 0.0!r} "
        "at [0]",
    )


@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_a_complex_zero_part_rounded_from_a_tiny_true_part_has_no_required_sign(
    sign: float,
) -> None:
    """The standard sets no accuracy for complex results (2024.12 on): outside the special
    cases a complex zero's sign is open, even where the true part rounds to a signed zero
    (test_values_open_zero_signs.py generates the class)."""
    a = np.array([complex(1.0, sign * TINY)], np.complex64)
    b = np.array([complex(SMALL, 0.0)], np.complex64)
    right = np.array([complex(SMALL, sign * 0.0)], np.complex64)
    wrong = np.array([complex(SMALL, -sign * 0.0)], np.complex64)
    for r, c in ((right, wrong), (wrong, right)):
        found = blame("multiply", [a, b], {}, r, c, compare_values(r, c, function="multiply"))
        assert (found.side, found.evidence) == ("undecided", "standard-rule")
        assert "the imaginary part of true multiply" in found.why
        assert f"is {PRODUCT if sign > 0 else '-' + PRODUCT}, and both zeros" in found.why


def test_the_real_part_of_a_complex_result_is_open_too() -> None:
    z = np.array([complex(-0.0, -6.6e-39)], np.complex64)
    with np.errstate(all="ignore"):
        right = np.log1p(z)
    wrong = right.copy()
    wrong.real = -wrong.real
    found = blame("log1p", [z], {}, right, wrong, compare_values(right, wrong, function="log1p"))
    assert (found.side, found.evidence) == ("undecided", "standard-rule")
    assert found.why.startswith(f"the real part of true log1p({complex(z[0])!r}) is 2.17799")


def test_an_exactly_zero_complex_part_is_not_judged_by_rounding() -> None:
    """(0+1j)(1+0j) has the real part 0 exactly: no rounding decides its zero's sign."""
    a = np.array([complex(0.0, 1.0)], np.complex64)
    b = np.array([complex(1.0, 0.0)], np.complex64)
    right = np.array([complex(0.0, 1.0)], np.complex64)
    wrong = np.array([complex(-0.0, 1.0)], np.complex64)
    verdict = compare_values(right, wrong, function="multiply")
    assert blame("multiply", [a, b], {}, right, wrong, verdict).side == "undecided"
