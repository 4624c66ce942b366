"""Blames the standard decides, each by its rule (the second audit's seven gaps).

A dtype given by name fixes ``full``'s result as an input's dtype fixes ``full_like``'s; a
zero ``remainder`` takes the divisor's sign; complex ``round`` and ``diff`` are
componentwise, zero signs included; the oracle raises its precision until its answer is
stable; where the standard is silent (the maximum of nothing) a refusal stays undecided.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.values.blame import blame
from diffcheck.values.compare import compare_values, failed_call

_REFUSED = failed_call("raises", "candidate raised RuntimeError: std::bad_cast")
_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_INTEGERS), st.data())
def test_full_with_a_dtype_refusing_a_fill_it_holds_is_blamed_as_full_like(
    dtype: str, data: st.DataObject
) -> None:
    info = np.iinfo(dtype)
    fill = data.draw(st.integers(int(info.min), int(info.max)))
    ref = np.full((), fill, dtype)
    by_name = blame("full", [], {}, ref, None, _REFUSED, dtype_args={"dtype": dtype},
                    positional=((), fill))  # fmt: skip
    like = blame("full_like", [np.zeros((), dtype), fill], {}, ref, None, _REFUSED)
    assert by_name.side == like.side == "candidate", (by_name, like)
    outside = int(info.max) + 1 + data.draw(st.integers(0, 10))
    open_ = blame("full", [], {}, ref, None, _REFUSED, dtype_args={"dtype": dtype},
                  positional=((), outside))  # fmt: skip
    assert open_.side == "undecided", open_


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["float32", "float64"]),
    st.floats(1e-30, 1e30),
    st.booleans(),
    st.integers(-6, 6),
)
def test_a_zero_remainder_takes_the_divisors_sign(
    dtype: str, magnitude: float, negative: bool, times: int
) -> None:
    divisor = np.asarray([-magnitude if negative else magnitude], dtype)
    dividend = (divisor * times).astype(dtype)
    if np.remainder(dividend, divisor)[0] != 0 or not np.isfinite(dividend[0]):
        return  # the product rounded: not an exact multiple
    right = np.asarray([math.copysign(0.0, float(divisor[0]))], dtype)
    wrong = -right
    verdict = compare_values(right, wrong, function="remainder")
    assert verdict.kind == "signed-zero"
    found = blame("remainder", [dividend, divisor], {}, right, wrong, verdict)
    assert found.side == "candidate", found
    swapped = blame("remainder", [dividend, divisor], {}, wrong, right,
                    compare_values(wrong, right, function="remainder"))  # fmt: skip
    assert swapped.side == "reference", swapped


def test_complex_round_fixes_each_components_zero_sign() -> None:
    x = np.asarray([-0.4 + 0.3j, 2.5 - 0.2j], np.complex64)
    right = np.asarray([complex(-0.0, 0.0), complex(2.0, -0.0)], np.complex64)
    wrong = np.asarray([complex(0.0, 0.0), complex(2.0, -0.0)], np.complex64)
    verdict = compare_values(right, wrong, function="round")
    assert not verdict.passed
    assert blame("round", [x], {}, right, wrong, verdict).side == "candidate"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.complex_numbers(max_magnitude=1e30, allow_nan=False, allow_infinity=False),
        min_size=2,
        max_size=6,
    ),
    st.integers(1, 2),
)
def test_complex_diff_is_componentwise_subtraction(values: list[complex], n: int) -> None:
    x = np.asarray(values, np.complex128)
    right = np.diff(x, n=n)  # IEEE subtraction per component, as the rule computes it
    if right.size == 0:
        return
    wrong = right + (1.0 + np.abs(right))  # every element plainly wrong (diff's bound: NMSE)
    verdict = compare_values(right, wrong, function="diff")
    assert not verdict.passed
    found = blame("diff", [x], {"axis": -1, "n": n}, right, wrong, verdict)
    assert found.side == "candidate", found
    assert found.evidence == "standard-rule"


def test_diff_of_equal_values_is_a_positive_zero() -> None:
    x = np.asarray([1.5 - 2.0j, 1.5 - 2.0j], np.complex64)
    right = np.asarray([0j], np.complex64)
    wrong = np.asarray([complex(-0.0, 0.0)], np.complex64)
    verdict = compare_values(right, wrong, function="diff")
    assert blame("diff", [x], {"axis": 0, "n": 1}, right, wrong, verdict).side == "candidate"


def test_the_oracle_raises_its_precision_until_the_answer_is_stable() -> None:
    from diffcheck.values.oracle import true_complex

    z = np.asarray([1 + 2.2e-308j], np.complex128)
    truth = complex(true_complex("acos", [complex(z[0])]))
    assert truth.imag < 0
    assert math.isclose(truth.imag, -truth.real)
    right = np.arccos(z)  # NumPy's is right here
    wrong = np.asarray([complex(right[0].real, 0.0)], np.complex128)
    verdict = compare_values(right, wrong, function="acos")
    assert blame("acos", [z], {}, right, wrong, verdict).side == "candidate"


def test_a_norm_of_nothing_with_ord_inf_may_raise_but_an_ordinary_norm_may_not() -> None:
    x = np.zeros((0,), np.float32)
    refused = failed_call("raises", "candidate raised RuntimeError: max of empty")
    for ord_ in (math.inf, -math.inf):
        found = blame("linalg.vector_norm", [x], {"ord": ord_}, np.asarray(0.0, np.float32),
                      None, refused)  # fmt: skip
        assert found.side == "undecided", found
    assert blame("max", [x], {}, np.asarray(0.0, np.float32), None, refused).side == "undecided"
    two = blame("linalg.vector_norm", [x], {"ord": 2}, np.asarray(0.0, np.float32), None, refused)
    assert two.side == "candidate", two
    full = np.ones((3,), np.float32)
    nonempty = blame("linalg.vector_norm", [full], {"ord": math.inf},
                     np.asarray(1.0, np.float32), None, refused)  # fmt: skip
    assert nonempty.side == "candidate", nonempty


@settings(max_examples=25, deadline=None)
@given(st.integers(-1074, -700), st.booleans())
def test_a_part_lost_alike_at_256_and_512_bits_is_found_all_the_same(
    exponent: int, negative: bool
) -> None:
    from diffcheck.values.oracle import true_complex

    # acos(1 + e j): 1 - z**2 cancels below 2**(2 * exponent), far past 512 bits for a
    # subnormal e (acos(1 - 1.5e-323j) was blamed on both sides, its imaginary part lost)
    tiny = math.ldexp(-1.0 if negative else 1.0, exponent)
    truth = complex(true_complex("acos", [complex(1.0, tiny)]))
    assert truth.imag != 0
    assert math.isclose(abs(truth.imag), truth.real, rel_tol=1e-6)
    assert (truth.imag < 0) != negative
