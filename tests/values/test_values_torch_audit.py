"""Blames the standard decides that torch:cpu's audited runs left undecided or wrong.

Complex ``add``/``subtract``/``negative`` are componentwise real operations; ``remainder``
must match Python's ``%``; a correctly rounded result admits the nearest value alone;
``searchsorted`` with a NaN has no required index; ``unique_all`` refusing an input the
standard defines is blamed; a complex zero whose true component is zero or held within
the bound has no required sign (undecided by the standard's rule, not blamed).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.values.blame import blame
from diffcheck.values.compare import compare_values, failed_call
from diffcheck.values.may import either_allowed

_SPECIAL = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -2.5, 5e-324, 1e308])
_PART = st.one_of(_SPECIAL, st.floats(allow_nan=True, allow_infinity=True))


def _spoil(value: complex, which: int) -> complex:
    """A component changed in a way the finding kinds see: NaN, a zero's sign, a value."""
    parts = [value.real, value.imag]
    part = parts[which]
    if math.isnan(part):
        parts[which] = 0.0
    elif part == 0:
        parts[which] = -part if math.copysign(1.0, part) > 0 else 0.0
    else:
        parts[which] = math.nan
    return complex(*parts)


def _blamed(function: str, args: list[np.ndarray], right: np.ndarray, wrong: np.ndarray) -> None:
    verdict = compare_values(right, wrong, function=function)
    assert not verdict.passed
    found = blame(function, args, {}, right, wrong, verdict)
    assert found.side == "candidate", found
    swapped = blame(
        function, args, {}, wrong, right, compare_values(wrong, right, function=function)
    )
    assert swapped.side == "reference", swapped


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["add", "subtract"]),
    st.tuples(_PART, _PART, _PART, _PART),
    st.sampled_from([0, 1]),
)
def test_complex_add_and_subtract_are_judged_per_component(
    function: str, parts: tuple[float, float, float, float], which: int
) -> None:
    a, b, c, d = parts
    x, y = np.asarray(complex(a, b)), np.asarray(complex(c, d))
    op = (lambda p, q: p + q) if function == "add" else (lambda p, q: p - q)
    right = np.asarray(complex(op(a, c), op(b, d)))  # IEEE 754 per component, in Python
    wrong = np.asarray(_spoil(complex(right), which))
    _blamed(function, [x, y], right, wrong)


@settings(max_examples=60, deadline=None)
@given(
    st.tuples(_PART, _PART), st.sampled_from([0, 1]), st.sampled_from(["complex64", "complex128"])
)
def test_complex_negative_negates_both_components(
    parts: tuple[float, float], which: int, dtype: str
) -> None:
    with np.errstate(over="ignore"):
        x = np.asarray(complex(*parts), dtype)
    z = complex(x)
    right = np.asarray(complex(-z.real, -z.imag), dtype)
    wrong = np.asarray(_spoil(complex(right), which), dtype)
    _blamed("negative", [x], right, wrong)


def test_a_real_operand_with_a_complex_one_leaves_only_that_zero_sign_open() -> None:
    x, y = np.asarray(0.5), np.asarray(complex(1.0, -0.0))
    plus, minus = np.asarray(complex(1.5, 0.0)), np.asarray(complex(1.5, -0.0))
    verdict = compare_values(plus, minus, function="add")
    assert verdict.kind == "signed-zero"
    found = blame("add", [x, y], {}, plus, minus, verdict)  # 0 + -0 is +0; the table says -0
    assert (found.side, found.evidence) == ("undecided", "standard-rule"), found
    wrong = np.asarray(complex(math.nan, -0.0))
    assert blame("add", [x, y], {}, plus, wrong, compare_values(plus, wrong)).side == "candidate"


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["float32", "float64"]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != 0),
)
def test_remainder_matches_pythons_percent(dtype: str, x: float, y: float) -> None:
    with np.errstate(over="ignore"):
        x1, x2 = np.asarray([x], dtype), np.asarray([y], dtype)
    if not (np.isfinite(x1[0]) and np.isfinite(x2[0])) or x2[0] == 0:
        return
    exact = float(x1[0]) % float(x2[0])  # Python's %, the standard's required result
    with np.errstate(over="ignore"):
        right = np.asarray([exact], dtype)
    for wrong_value in (math.nan, float(np.nextafter(right[0], right.dtype.type(0)))):
        if right[0] == 0:
            continue  # a zero's sign: test_a_zero_remainder_takes_the_divisors_sign
        wrong = np.asarray([wrong_value], dtype)
        _blamed("remainder", [x1, x2], right, wrong)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["float32", "float64"]),
    st.floats(min_value=0.0, exclude_min=True, allow_infinity=False),
    st.sampled_from([np.inf, -np.inf]),
)
def test_a_correctly_rounded_result_admits_the_nearest_value_alone(
    dtype: str, x: float, direction: float
) -> None:
    with np.errstate(over="ignore", under="ignore"):
        value = np.asarray([x], dtype)
    if not np.isfinite(value[0]) or value[0] == 0:
        return
    right = np.sqrt(value)  # IEEE 754 sqrt: the hardware's, correctly rounded
    wrong = np.nextafter(right, np.asarray(direction, dtype))
    _blamed("sqrt", [value], right, wrong)


def test_sqrt_just_below_one_is_not_excused_by_half_an_ulp() -> None:
    x = np.asarray(1 - 2.0**-53)
    right, wrong = np.asarray(1 - 2.0**-53), np.asarray(1.0)  # torch:cpu's answer
    _blamed("sqrt", [x], right, wrong)


def test_searchsorted_where_a_nan_decides_is_no_finding() -> None:
    f32 = np.float32
    sorted_nan = np.asarray([np.nan], f32)
    assert either_allowed("searchsorted", [sorted_nan, np.asarray(1.0, f32)], 0, 1) is not None
    plain = np.asarray([0.0, 1.0, 2.0], f32)
    needles = np.asarray([np.nan, 1.5], f32)
    ref, cand = np.asarray([3, 2]), np.asarray([0, 2])
    assert either_allowed("searchsorted", [plain, needles], ref, cand) is not None
    off = np.asarray([3, 1])  # 1.5 goes at 2 whatever NaNs do
    assert either_allowed("searchsorted", [plain, needles], ref, off) is None


def test_unique_all_refusing_an_input_it_defines_is_blamed() -> None:
    refused = failed_call("raises", "candidate raised NotImplementedError: unique_all()")
    x = np.asarray(-128, np.int8)
    outputs = (x.reshape(1), np.asarray([0]), np.asarray([0]), np.asarray([1]))
    found = blame("unique_all", [x], {}, outputs, None, refused)
    assert (found.side, found.evidence) == ("candidate", "standard-rule"), found


def test_a_complex_zero_whose_true_part_fixes_no_sign_is_left_open() -> None:
    # divide: the true imaginary part -3e-128 beside |z| 4.8e-57 (seed 3 of torch:cpu)
    x1 = np.asarray(complex(-0.0, -1.1364357504719176e-308))
    x2 = np.asarray(complex(1.5e-323, 2.3750990419082604e-252))
    ref = np.asarray(complex(-4.7847930988126474e-57, 0.0))
    cand = np.asarray(complex(-4.7847930988126474e-57, -0.0))
    found = blame("divide", [x1, x2], {}, ref, cand, compare_values(ref, cand, function="divide"))
    assert (found.side, found.evidence) == ("undecided", "standard-rule"), found
    # acos(x + 0j) for |x| < 1: the imaginary part is exactly zero
    z = np.asarray(complex(-0.635230106343925, 0.0))
    ref = np.asarray(complex(2.2591027509196, -0.0))
    cand = np.asarray(complex(2.2591027509196, 0.0))
    found = blame("acos", [z], {}, ref, cand, compare_values(ref, cand, function="acos"))
    assert (found.side, found.evidence) == ("undecided", "standard-rule"), found
