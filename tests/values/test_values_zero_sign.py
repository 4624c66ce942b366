"""Blame between two zeros of opposite signs: the zero keeps the sign of the value it rounds."""

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
def test_a_complex_zero_part_takes_the_sign_of_the_true_part(sign: float) -> None:
    a = np.array([complex(1.0, sign * TINY)], np.complex64)
    b = np.array([complex(SMALL, 0.0)], np.complex64)
    right = np.array([complex(SMALL, sign * 0.0)], np.complex64)
    wrong = np.array([complex(SMALL, -sign * 0.0)], np.complex64)
    rounds = "-0.0" if sign < 0 else "+0.0"
    truth = f"-{PRODUCT}" if sign < 0 else PRODUCT
    assert _judge("multiply", [a, b], right, wrong) == (
        "candidate",
        "oracle",
        f"true multiply({complex(1.0, sign * T)!r}, {complex(S, 0.0)!r}) has the imaginary "
        f"part {truth}, which rounds to {rounds} (a zero keeps the sign of the value it "
        f"rounds); reference {complex(S, sign * 0.0)!r}, candidate {complex(S, -sign * 0.0)!r} "
        "at [0]",
    )


def test_the_real_part_of_a_complex_result_is_judged_too() -> None:
    z = np.array([complex(-0.0, -6.6e-39)], np.complex64)
    with np.errstate(all="ignore"):
        right = np.log1p(z)
    wrong = right.copy()
    wrong.real = -wrong.real
    side, evidence, why = _judge("log1p", [z], right, wrong)
    assert (side, evidence) == ("candidate", "oracle")
    assert why.startswith(f"true log1p({complex(z[0])!r}) has the real part 2.17799")
    assert "which rounds to +0.0 (a zero keeps the sign of the value it rounds)" in why


def test_a_complex_part_is_judged_after_a_real_part_whose_zeros_agree() -> None:
    a = np.array([complex(TINY, TINY)], np.complex64)
    b = np.array([complex(SMALL, 0.0)], np.complex64)
    right = np.array([complex(0.0, 0.0)], np.complex64)
    wrong = np.array([complex(0.0, -0.0)], np.complex64)
    side, evidence, why = _judge("multiply", [a, b], right, wrong)
    assert (side, evidence) == ("candidate", "oracle")
    assert f"has the imaginary part {PRODUCT}, which rounds to +0.0" in why
    # Agreeing zeros are not judged even where both have the wrong sign (the true real part
    # here is negative): the imaginary part still decides.
    a = np.array([complex(-TINY, TINY)], np.complex64)
    side, evidence, why = _judge("multiply", [a, b], right, wrong)
    assert (side, evidence) == ("candidate", "oracle")
    assert f"has the imaginary part {PRODUCT}, which rounds to +0.0" in why


def test_an_exactly_zero_complex_part_is_not_judged_by_rounding() -> None:
    """(0+1j)(1+0j) has the real part 0 exactly: no rounding decides its zero's sign."""
    a = np.array([complex(0.0, 1.0)], np.complex64)
    b = np.array([complex(1.0, 0.0)], np.complex64)
    right = np.array([complex(0.0, 1.0)], np.complex64)
    wrong = np.array([complex(-0.0, 1.0)], np.complex64)
    verdict = compare_values(right, wrong, function="multiply")
    assert blame("multiply", [a, b], {}, right, wrong, verdict).side == "undecided"
