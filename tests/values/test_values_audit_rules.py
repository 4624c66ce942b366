"""Rules found by auditing a real search run against the standard's text, one test each."""

from __future__ import annotations

import numpy as np

from diffcheck.values.blame import blame
from diffcheck.values.compare import compare_values
from diffcheck.values.spec import is_standard_name


def test_functions_of_later_versions_are_standard_names() -> None:
    assert is_standard_name("isin")  # 2025.12: a backend lacking it is blamed, not excused
    assert not is_standard_name("fmod")


def test_an_overflow_to_infinity_is_blamed_alone_when_the_other_side_is_within_the_bound() -> None:
    x = np.asarray([88.722824], np.float32)
    ref = np.asarray([np.nextafter(np.float32(3.4027725e38), np.float32(0))], np.float32)
    cand = np.asarray([np.inf], np.float32)
    verdict = compare_values(ref, cand, function="exp")
    assert verdict.kind == "inf"
    found = blame("exp", [x], {}, ref, cand, verdict)
    assert found.side == "candidate", found
    swapped = blame("exp", [x], {}, cand, ref, compare_values(cand, ref, function="exp"))
    assert swapped.side == "reference", swapped


def test_the_sign_of_a_zero_chosen_by_max_or_min_is_left_open() -> None:
    ref, cand = np.asarray(-0.0, np.float32), np.asarray(0.0, np.float32)
    for function in ("min", "max", "minimum", "maximum"):
        assert compare_values(ref, cand, function=function).passed, function
    assert compare_values(ref, cand, function="negative").kind == "signed-zero"


def test_floor_divide_choices_the_standard_allows_are_no_finding() -> None:
    from diffcheck.values.may import either_allowed

    f32 = np.float32
    cases = [
        ([np.inf], [1.0], [np.nan], [np.inf]),  # +inf // 1: +inf, or NaN as Python
        ([1.1754944e-38], [-np.inf], [-1.0], [-0.0]),  # x // -inf: -0, or -1 as Python
        ([1.1754944e-38], [-3.4028235e38], [-1.0], [-0.0]),  # an underflowing quotient
    ]
    for x1, x2, ref, cand in cases:
        args = [np.asarray(x1, f32), np.asarray(x2, f32)]
        assert either_allowed("floor_divide", args, np.asarray(ref, f32), np.asarray(cand, f32))
    # A choice outside them is still a finding: 5 // 2 is 2, never 3; inf // 1 is never 0.
    args = [np.asarray([5.0, np.inf], f32), np.asarray([2.0, 1.0], f32)]
    wrong = np.asarray([3.0, 0.0], f32)
    assert either_allowed("floor_divide", args, np.asarray([2.0, np.inf], f32), wrong) is None
    assert either_allowed("divide", args, np.asarray([2.5, np.inf], f32), wrong) is None


def test_fftfreq_returns_each_sides_declared_default_float() -> None:
    from diffcheck.values.dtypes import expected_result_dtype

    assert expected_result_dtype("fft.fftfreq", default_float="float32") == "float32"
    assert expected_result_dtype("fft.rfftfreq") == "float64"


def test_sign_of_a_complex_input_is_rounded_math_not_a_copy() -> None:
    from diffcheck.values.bounds import bound_for

    assert bound_for("sign", "complex64", inputs=("complex64",)).kind == "ulp"
    assert bound_for("sign", "float32", inputs=("float32",)).kind == "exact"
    z = np.asarray([1.1754944e-38 + 4.498235e06j], np.complex64)
    ref = z / np.abs(z)
    cand = ref.copy()
    cand.real = np.nextafter(cand.real, np.float32(1))
    verdict = compare_values(
        ref, cand, function="sign", bound=bound_for("sign", "complex64", inputs=("complex64",))
    )
    assert verdict.passed, verdict


def test_a_complex_result_whose_true_components_overflow_is_right_as_infinities() -> None:
    # (3e19-1e37j) * (-1e28-7e36j) = (-7e73 + 1e65j): both true components overflow
    # float32, so (-inf, +inf) is the rounded truth; (NaN, +inf) is wrong.
    x1 = np.asarray([3.0e19 - 1.0e37j], np.complex64)
    x2 = np.asarray([-1.0e28 - 7.0e36j], np.complex64)
    truth = complex(x1[0]) * complex(x2[0])
    assert abs(truth.real) > 3.5e38, truth
    assert abs(truth.imag) > 3.5e38, truth
    right = np.asarray([complex(-np.inf, np.inf)], np.complex64)
    wrong = np.asarray([complex(np.nan, np.inf)], np.complex64)
    verdict = compare_values(right, wrong, function="multiply")
    assert verdict.kind == "nan"
    found = blame("multiply", [x1, x2], {}, right, wrong, verdict)
    assert found.side == "candidate", found
    swapped = blame("multiply", [x1, x2], {}, wrong, right, compare_values(wrong, right))
    assert swapped.side == "reference", swapped
