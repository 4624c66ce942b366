"""compare(mode="values") against a fake backend that diverges in each kind.

Every injected fault must be found with its kind, localized to the element, and blamed on
the right side with the right evidence; the fault-free fake must pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.errors import ConfigError
from diffcheck.values import ValueVerdict, compare_values
from diffcheck.values.bounds import bound_for, is_elementwise
from diffcheck.values.compare import failed_call
from diffcheck.values.model import Bound, Location
from value_fakes import FaultyAdapter, nudge


def values(
    fn: Any, *inputs: Any, fault: str, reference: Any = "numpy", **options: Any
) -> ValueVerdict:
    candidate = FaultyAdapter(fault)
    if reference == "faulty":  # the reference is the wrong side
        reference, candidate = FaultyAdapter(fault), "numpy"
    return diffcheck.compare(
        fn, *inputs, reference=reference, candidate=candidate, mode="values", **options
    )


X32 = np.linspace(-2.0, 2.0, 41, dtype=np.float32)


@pytest.mark.parametrize(
    ("fn", "inputs", "kwargs"),
    [
        ("exp", (X32,), {}),
        (
            "multiply",
            (np.array([0.0, -0.0, 2.0], np.float32), np.array([-1.0, 3.0, 0.5], np.float32)),
            {},
        ),
        (
            "bitwise_left_shift",
            (np.array([1, 2, 3], np.int32), np.array([1, 31, 33], np.int32)),
            {},
        ),
        ("cumulative_sum", (np.array([200, 100, 7], np.uint8),), {}),
        ("argmax", (X32,), {}),
        ("linalg.vecdot", (np.ones((2, 3), np.float32), np.ones(3, np.float32)), {}),
    ],
)
def test_a_faithful_backend_passes(
    fn: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    verdict = values(fn, *inputs, fault="none", kwargs=kwargs)
    assert verdict.passed, str(verdict)
    assert verdict.kind is None
    assert verdict.blame is None


def test_a_missing_function_is_a_missing_verdict_blamed_on_the_candidate() -> None:
    verdict = values("hypot", X32, X32, fault="missing")
    assert verdict.kind == "missing"
    assert "hypot" in (verdict.reason or "")
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "standard-rule")
    nested = values(
        "linalg.vecdot", np.ones((2, 3), np.float32), np.ones(3, np.float32), fault="missing-linalg"
    )
    assert nested.kind == "missing"


def test_a_missing_function_inside_a_callable_is_a_verdict_not_an_attribute_error() -> None:
    verdict = values(lambda xp, a, b: xp.hypot(a, b), X32, X32, fault="missing", function="hypot")
    assert verdict.kind == "missing"


def test_a_wrong_result_dtype_is_found_and_the_standard_blames_the_candidate() -> None:
    verdict = values("argmax", X32, fault="dtype")
    assert verdict.kind == "dtype"
    assert "int64" in (verdict.reason or "")
    assert "int32" in (verdict.reason or "")
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "standard-rule")


def test_plus_zero_for_minus_zero_is_a_signed_zero_failure_blamed_by_special_case() -> None:
    a = np.array([1.0, -0.0, 2.0, 0.0], np.float32)
    b = np.array([1.0, 5.0, 2.0, -3.0], np.float32)
    verdict = values("multiply", a, b, fault="signed-zero")
    assert verdict.kind == "signed-zero"
    assert verdict.first is not None
    assert verdict.first.index == (1,)
    assert verdict.first.reference.startswith("-0x0")
    assert verdict.first.candidate.startswith("0x0")
    assert verdict.failing == 2
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "special-case")


def test_nan_where_the_reference_has_a_number_is_found_and_blamed_by_the_oracle() -> None:
    x = np.array([0.5, -0.25, 1.0], np.float64)
    verdict = values("log1p", x, fault="nan")
    assert verdict.kind == "nan"
    assert verdict.first is not None
    assert verdict.first.index == (1,)
    assert verdict.first.candidate == "nan"
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "oracle")


def test_three_ulp_off_is_beyond_the_two_ulp_bound_and_localized() -> None:
    verdict = values("exp", X32, fault="ulp3")
    assert verdict.kind == "value"
    assert verdict.bound.kind == "ulp"
    assert verdict.bound.ulps == 2
    assert "float32" in verdict.bound.provenance
    assert verdict.first is not None
    assert verdict.first.index == (3,)
    assert verdict.first.ulp == 3
    assert verdict.worst is not None
    assert verdict.worst.ulp == 3
    assert verdict.failing == len(range(3, 41, 5))
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "oracle")


def test_float64_keeps_its_dtype_and_ulps_are_counted_in_float64() -> None:
    x = np.linspace(-1, 1, 9)
    verdict = values("exp", x, fault="ulp3")
    assert verdict.kind == "value"
    assert verdict.dtype == "float64"
    assert verdict.first is not None
    assert verdict.first.ulp == 3


def test_a_shift_count_taken_modulo_the_width_is_wrong_by_the_standard() -> None:
    x = np.array([1, 3, -5, 7], np.int32)
    counts = np.array([1, 33, 31, 40], np.int32)
    verdict = values("bitwise_left_shift", x, counts, fault="shift-wrap")
    assert verdict.kind == "value"
    assert verdict.first is not None
    assert verdict.first.index == (1,)
    assert (verdict.first.reference, verdict.first.candidate) == ("0", "6")
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "standard-rule")


def test_a_uint8_cumulative_sum_that_wraps_fails_on_dtype_by_the_standard() -> None:
    x = np.array([200, 100, 7], np.uint8)
    verdict = values("cumulative_sum", x, fault="narrow-cumsum")
    assert verdict.kind == "dtype"
    assert "uint64" in (verdict.reason or "")
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "standard-rule")


def test_the_dtype_argument_sets_the_required_dtype_and_both_sides_can_be_wrong() -> None:
    x = np.array([200, 100, 7], np.uint8)
    given = values("cumulative_sum", x, fault="none", kwargs={"dtype": np.uint16})
    assert given.passed, str(given)
    assert given.dtype == "uint16"

    both = diffcheck.compare(
        "cumulative_sum",
        x,
        reference=FaultyAdapter("narrow-cumsum"),
        candidate=FaultyAdapter("narrow-cumsum"),
        mode="values",
        allow_self_test=True,  # the same faulty backend on both sides, on purpose
    )
    assert both.kind == "dtype"
    assert "both sides return uint8" in (both.reason or "")
    assert both.blame is not None
    assert both.blame.side == "both"


def test_a_callable_that_casts_inside_sets_no_dtype_rule() -> None:
    x = np.array([200, 100, 7], np.uint8)

    def narrow(xp: Any, v: Any) -> Any:
        return xp.cumulative_sum(v, dtype=xp.uint16)

    verdict = values(narrow, x, fault="none", function="cumulative_sum")
    assert verdict.passed, str(verdict)
    assert verdict.dtype == "uint16"


def test_one_side_raising_is_a_raises_verdict() -> None:
    verdict = values("atan2", X32, X32, fault="raises")
    assert verdict.kind == "raises"
    assert "NotImplementedError" in (verdict.reason or "")
    assert verdict.blame is not None
    assert verdict.blame.side == "candidate"


def test_a_wrong_reference_is_blamed_as_the_reference() -> None:
    x = np.array([-0.0, 0.0, 1.0], np.float32)
    verdict = values("expm1", x, fault="special-case", reference="faulty")
    assert verdict.kind == "signed-zero"
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("reference", "special-case")
    off = values("exp", X32, fault="ulp3", reference="faulty")
    assert off.blame is not None
    assert (off.blame.side, off.blame.evidence) == ("reference", "oracle")


def test_a_vote_is_the_last_resort_and_recorded_as_such() -> None:
    # Integer overflow is not specified by the standard: only a vote can decide.
    x = np.array([2**31 - 1], np.int32)

    def overflow(xp: Any, v: Any) -> Any:
        result = xp.add(v, v)
        return result if "fake" in xp.__name__ else xp.add(v, xp.asarray(0, dtype=xp.int32))

    voters = [("wrapping", lambda v: np.add(v, v)), ("also-wrapping", lambda v: np.add(v, v))]
    verdict = values(overflow, x, fault="none", function="add", voters=voters)
    assert verdict.kind == "value"
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("reference", "vote")
    assert "wrapping" in verdict.blame.why
    undecided = values(overflow, x, fault="none", function="add")
    assert undecided.blame is not None
    assert undecided.blame.side == "undecided"


def test_a_backend_cannot_vouch_for_itself_in_values_mode() -> None:
    with pytest.raises(ConfigError, match="cannot vouch for itself"):
        diffcheck.compare("exp", X32, candidate="numpy:cpu", mode="values")
    assert diffcheck.compare(
        "exp", X32, candidate="numpy:cpu", mode="values", allow_self_test=True
    ).passed


def test_nmse_options_are_refused_in_values_mode() -> None:
    with pytest.raises(ConfigError, match="max_nmse"):
        diffcheck.compare("exp", X32, candidate=FaultyAdapter(), mode="values", max_nmse=1e-3)
    with pytest.raises(ConfigError, match="values"):
        diffcheck.compare("exp", X32, candidate=FaultyAdapter(), function="exp")
    with pytest.raises(ConfigError, match="mode"):
        diffcheck.compare("exp", X32, candidate=FaultyAdapter(), mode="bits")  # type: ignore[call-overload]


def test_nmse_mode_takes_a_spec_name_too() -> None:
    verdict = diffcheck.compare("exp", X32, candidate=FaultyAdapter("ulp3"))
    assert verdict.passed  # 3 ULP is far below the float32 NMSE bucket: the old contract
    assert not values("exp", X32, fault="ulp3").passed


def test_nudge_moves_by_ulps() -> None:
    one = np.float32(1.0)
    assert nudge(one, 2) == np.float32(1.0) + 2 * np.finfo(np.float32).eps


def test_nmse_mode_turns_a_missing_or_raising_candidate_into_a_verdict() -> None:
    missing = diffcheck.compare(
        lambda xp, a: xp.hypot(a, a), X32, candidate=FaultyAdapter("missing")
    )
    assert missing.status == "failed"
    assert (missing.reason or "").startswith("missing: candidate faulty[missing]")
    raising = diffcheck.compare("atan2", X32, X32, candidate=FaultyAdapter("raises"))
    assert (raising.reason or "").startswith("raises: ")
    assert "NotImplementedError" in (raising.reason or "")
    with pytest.raises(AttributeError):  # the reference's own error is the function's bug
        diffcheck.compare(lambda xp, a: xp.no_such_function(a), X32, candidate=FaultyAdapter())


def test_backends_vote_by_name_and_one_that_cannot_run_abstains_with_its_reason() -> None:
    x = np.array([2**31 - 1], np.int32)

    def overflow(xp: Any, v: Any) -> Any:
        if "fake" in xp.__name__:
            return xp.add(v, v)  # wraps on the candidate only
        return xp.add(v, xp.asarray(0, dtype=xp.int32))

    verdict = values(
        overflow,
        x,
        fault="none",
        function="add",
        voters=["array_api_strict", "array_api_strict:gpu"],
    )
    assert verdict.blame is not None
    assert (verdict.blame.side, verdict.blame.evidence) == ("candidate", "vote")
    assert "with the reference: array_api_strict;" in verdict.blame.why
    assert "array_api_strict:gpu abstains" in verdict.blame.why
    assert "unavailable" in verdict.blame.why


def test_a_blame_that_cannot_decide_leaves_the_verdict_standing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import diffcheck.values.call as call

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no evidence today")

    monkeypatch.setattr(call, "blame", broken)
    verdict = values("exp", X32, fault="ulp3")
    assert verdict.kind == "value"
    assert verdict.blame is not None
    assert verdict.blame.side == "undecided"
    assert "no evidence today" in verdict.blame.why


# --- the value model's comparison, element by element (direct calls) ---


def test_a_call_without_output_is_held_to_an_exact_bound_that_says_so() -> None:
    verdict = failed_call("raises", "TypeError: no")
    assert verdict.bound == Bound("exact", None, None, "no output to compare")
    assert str(verdict.bound) == "exact (no output to compare)"
    assert (verdict.status, verdict.kind, verdict.reason) == ("failed", "raises", "TypeError: no")


def test_an_integer_failure_has_no_ulp_distance() -> None:
    verdict = compare_values(np.array([1, 2], np.int32), np.array([1, 3], np.int32))
    assert verdict.first is not None
    assert verdict.worst is not None
    assert (verdict.first.ulp, verdict.worst.ulp) == (None, None)
    assert str(verdict.first) == "[1]: reference 2, candidate 3"


def test_a_complex128_element_is_measured_in_float64_ulps() -> None:
    ref = np.array([1 + 1j, 2 + 2j])
    cand = np.array([1 + 1j, complex(np.nextafter(2.0, 3.0), 2.0)])
    verdict = compare_values(ref, cand, function="add")  # complex add: 0 ULP
    assert (verdict.kind, verdict.failing) == ("value", 1)
    assert verdict.first is not None
    assert verdict.worst is not None
    assert (verdict.first.index, verdict.first.ulp, verdict.worst.ulp) == ((1,), 1, 1)
    assert verdict.reason is not None
    assert verdict.reason.endswith("worst 1 ULP at [1]")


def test_an_infinite_real_part_of_opposite_sign_fails_although_the_imaginary_parts_agree() -> None:
    ref = np.array([1 + 1j, complex(np.inf, 2.0)])
    cand = np.array([1 + 1j, complex(-np.inf, 2.0)])
    verdict = compare_values(ref, cand, function="exp")
    assert (verdict.kind, verdict.failing) == ("inf", 1)
    assert verdict.first is not None
    assert verdict.first.index == (1,)


def test_an_element_with_an_infinite_component_takes_no_part_in_the_nmse() -> None:
    ref = np.array([complex(np.inf, 1.0), 1 + 1j, 2 + 2j])
    cand = np.array([complex(np.inf, 1.0), complex(1.0, 1.0 + 2.0**-40), 2 + 2j])
    verdict = compare_values(ref, cand)  # no function: the NMSE bucket of float64
    assert verdict.bound.kind == "nmse"
    assert verdict.passed, verdict.reason


def test_zeros_elsewhere_pass_the_nmse_when_only_a_partly_infinite_element_differs() -> None:
    ref = np.array([0j, complex(np.inf, 1.0)])
    cand = np.array([0j, complex(np.inf, 2.0)])
    assert compare_values(ref, cand).passed


ATOL_HALF = Bound("reduction", 2.0, None, "two ULP or half", 0.5)


def test_an_absolute_allowance_admits_an_error_up_to_and_including_it() -> None:
    ref = np.ones((2, 2))
    cand = np.array([[1.5, 1.0], [1.0, 1.0]])  # 0.5 off: exactly the allowance
    verdict = compare_values(ref, cand, bound=ATOL_HALF)
    assert verdict.passed, verdict.reason
    over = np.array([[1.0, 1.0], [1.0, 1.625]])
    failed = compare_values(ref, over, bound=ATOL_HALF)
    assert (failed.kind, failed.failing) == ("value", 1)
    assert failed.first is not None
    assert failed.first.index == (1, 1)


def test_an_element_within_the_ulp_bound_passes_whatever_the_absolute_allowance() -> None:
    ref = np.ones((2, 2))
    cand = np.array([[1.0, np.nextafter(1.0, 2.0)], [1.0, 1.0]])  # 1 ULP off, error 2e-16
    tiny = Bound("reduction", 2.0, None, "two ULP or 1e-300", 1e-300)
    assert compare_values(ref, cand, bound=tiny).passed


def test_a_complex_absolute_allowance_measures_the_complex_error() -> None:
    ref = np.array([1 + 1j, 2 + 2j])
    cand = np.array([1 + 1.25j, 2 + 2j])  # |error| 0.25: within the allowance
    assert compare_values(ref, cand, bound=ATOL_HALF).passed
    far = np.array([1 + 1.75j, 2 + 2j])  # |error| 0.75: beyond it
    assert compare_values(ref, far, bound=ATOL_HALF).kind == "value"


def test_a_complex_component_within_the_ulps_of_the_magnitude_passes_up_to_and_including() -> None:
    # 1 - 2**-21 is 8 float32 ULP below 1 componentwise, and exactly 4 ULP of |z| = 1 off.
    ref = np.ones((2, 2), np.complex64)
    cand = ref.copy()
    cand[1, 0] = complex(1.0 - 2.0**-21, 0.0)
    verdict = compare_values(ref, cand, function="exp")  # complex exp: 4 ULP
    assert verdict.bound.ulps == 4.0
    assert verdict.passed, verdict.reason
    cand[1, 0] = complex(1.0 - 2.0**-20, 0.0)  # 8 ULP of |z|: beyond
    failed = compare_values(ref, cand, function="exp")
    assert (failed.kind, failed.failing) == ("value", 1)
    assert failed.first is not None
    assert failed.first.index == (1, 0)


def test_a_complex_element_within_the_componentwise_ulps_is_not_failed_by_its_magnitude() -> None:
    # Element 0 is 1 ULP (the smallest subnormal) from 0: within 4 ULP componentwise,
    # though |z| is 0; element 1 is far off and fails.
    ref = np.array([0j, 1 + 1j], np.complex64)
    cand = np.array([complex(2.0**-149, 0.0), 1 + 2j], np.complex64)
    verdict = compare_values(ref, cand, function="exp")
    assert (verdict.kind, verdict.failing) == ("value", 1)
    assert verdict.first is not None
    assert verdict.first.index == (1,)


def test_a_one_ulp_complex_bound_is_relative_to_the_magnitude_too() -> None:
    ref = np.array([complex(1.0, 2.0**-30)], np.complex64)
    cand = np.array([complex(1.0, 2.0**-29)], np.complex64)  # far in its own ULPs, 2**-30 off
    one = Bound("ulp", 1.0, None, "one ULP, componentwise or relative to |z|")
    assert compare_values(ref, cand, bound=one).passed


@pytest.mark.parametrize(
    ("ref", "cand", "passed"),
    [
        ([1000.0, 2000.0], [1000.0, 2000.0 + 2.0**-30], True),  # a large signal
        ([0.1, 0.2], [0.1, float(np.nextafter(0.2, 1.0))], True),  # a signal below 1
        ([0.0, 0.0], [0.0, 1.0], False),  # no signal, some noise
        ([0.0, 0.0], [0.0, 3.0], False),
    ],
)
def test_the_nmse_is_noise_over_signal(ref: list[float], cand: list[float], passed: bool) -> None:
    verdict = compare_values(np.array(ref), np.array(cand))
    assert verdict.bound.kind == "nmse"
    assert verdict.passed is passed
    if not passed:
        assert verdict.reason is not None
        assert verdict.reason.startswith("NMSE inf is not below 1e-15 in 1 of 2 float64 elements")


@pytest.mark.parametrize("nmse", [0.25, 0.0])
def test_an_nmse_equal_to_the_bound_fails(nmse: float) -> None:
    # noise 0.25 over signal 1.0: NMSE 0.25, not below 0.25 (nor below 0)
    bound = Bound("nmse", None, nmse, "a bound of the caller's")
    verdict = compare_values(np.array([1.0]), np.array([0.5]), bound=bound)
    assert verdict.kind == "value"
    assert verdict.reason is not None
    assert verdict.reason.startswith(f"NMSE 0.25 is not below {nmse:g} in 1 of 1")


def test_each_output_of_a_reduction_is_held_to_the_bound_of_its_reduced_count() -> None:
    ref = np.array([1.0], np.float32)
    cand = np.array([1.0 + 10 * 2.0**-23], np.float32)  # 10 ULP off
    wide = bound_for("sum", "float32", reduced=1000)
    assert wide.ulps is not None
    assert wide.ulps > 10
    verdict = compare_values((ref,), (cand,), function="sum", reduced=1000)
    assert verdict.passed
    assert verdict.bound == wide
    assert compare_values((ref,), (cand,), function="sum").kind == "value"


def test_each_output_follows_the_functions_signed_zero_policy() -> None:
    # the standard leaves the signs of a decomposition's zeros open
    ref = (np.array(1.0), np.array(0.0))
    cand = (np.array(1.0), np.array(-0.0))
    assert compare_values(ref, cand, function="linalg.slogdet").passed
    assert compare_values(ref, cand).kind == "signed-zero"


def test_a_complex128_bound_is_taken_in_float64() -> None:
    bound = bound_for("exp", "complex128")
    assert (bound.kind, bound.ulps) == ("ulp", 4.0)
    assert "within 4 ULP of float64" in bound.provenance


@pytest.mark.parametrize(
    ("args", "options", "expected"),
    [
        (("xp.exp", "float32"), {}, ("ulp", 2.0, "elementwise, each side within 1 ULP of the true value: within 2 ULP of float32")),
        (("exp", "complex64"), {}, ("ulp", 4.0, "elementwise, each side within 2 ULP of the true value: within 4 ULP of float32, componentwise or relative to |z|")),
        (("sign", "complex64"), {"inputs": ("complex64",)}, ("ulp", 4.0, "sign of a complex input is z / |z|, rounded math: within 4 ULP of float32, componentwise or relative to |z|")),
        (("subtract", "complex128"), {}, ("ulp", 0.0, "IEEE 754 basic operation, correctly rounded in float64: 0 ULP")),
        (("multiply", "complex64"), {}, ("ulp", 4.0, "complex multiply combines several rounded operations: within 4 ULP of float32, componentwise or relative to |z|")),
        (("take", "float32"), {}, ("exact", None, "take moves, selects or compares values: exact")),
        (("sum", "float64"), {}, ("reduction", 2.0, "reduction over 1 elements, a robust sum's bound from n and float64's epsilon: 2 ULP")),
        (("var", "float64"), {"reduced": 4}, ("reduction", 14.0, "reduction over 4 elements, a robust sum's bound from n and float64's epsilon: 14 ULP")),
        (("exp", "float128"), {}, ("exact", None, "float128 result: no float model, exact equality")),
        ((None, "float64"), {}, ("nmse", None, "an unnamed function: NMSE bucket of the storage precision float64 (< 1e-15)")),
    ],
)  # fmt: skip
def test_each_bound_says_where_it_comes_from(
    args: tuple[Any, str], options: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    bound = bound_for(*args, **options)
    assert (bound.kind, bound.ulps, bound.provenance) == expected


def test_a_nan_failure_names_its_first_element_as_its_worst() -> None:
    ref = np.array([complex(1.0, np.nan), complex(np.nan, 1.0)])
    cand = np.array([complex(1.0, 1.0), complex(1.0, 5.0)])
    verdict = compare_values(ref, cand, function="exp")
    assert (verdict.status, verdict.kind, verdict.failing) == ("failed", "nan", 2)
    assert verdict.first is not None
    assert verdict.worst == verdict.first
    assert verdict.first.index == (0,)


@pytest.mark.parametrize(
    ("ref", "cand", "reason"),
    [
        ([1.0, np.nan], [1.0, 1.0], "NaN placement differs in 1 of 2 float32 elements; first at [1]: reference nan, candidate 0x1.0000000000000p+0 (1.0)"),
        ([1.0, np.inf], [1.0, -np.inf], "infinities differ in 1 of 2 float32 elements; first at [1]: reference inf, candidate -inf"),
        ([1.0, 0.0], [1.0, -0.0], "the sign of zero differs in 1 of 2 float32 elements; first at [1]: reference 0x0.0p+0 (0.0), candidate -0x0.0p+0 (-0.0)"),
    ],
)  # fmt: skip
def test_each_special_failure_says_what_differs(
    ref: list[float], cand: list[float], reason: str
) -> None:
    verdict = compare_values(np.array(ref, np.float32), np.array(cand, np.float32), function="exp")
    assert (verdict.status, verdict.reason, verdict.failing) == ("failed", reason, 1)


def test_a_value_failure_and_a_pass_carry_their_counts_and_largest_ulp() -> None:
    ref = np.array([1.0, 2.0], np.float32)
    cand = np.array([1.0 + 8 * 2.0**-23, 2.0], np.float32)  # 8 ULP off
    failed = compare_values(ref, cand, function="exp")
    assert (failed.status, failed.kind, failed.failing, failed.max_ulp) == ("failed", "value", 1, 8)
    near = np.array([1.0 + 2.0**-23, 2.0], np.float32)  # 1 ULP: within 2
    passed = compare_values(ref, near, function="exp")
    assert (passed.status, passed.failing, passed.max_ulp) == ("passed", 0, 1)
    empty = compare_values(np.array([], np.float32), np.array([], np.float32), function="exp")
    assert (empty.status, empty.failing, empty.max_ulp) == ("passed", 0, None)


@pytest.mark.parametrize(
    ("ref", "cand", "worst"),
    [
        (np.array([1, 9]), np.array([-1, 8]), (0,)),  # the larger gap, not the larger sum
        (np.array([True, False]), np.array([True, True]), (1,)),  # the only wrong element
    ],
)
def test_an_exact_failures_worst_element_is_the_wrong_one_furthest_off(
    ref: Any, cand: Any, worst: tuple[int, ...]
) -> None:
    verdict = compare_values(ref, cand)
    assert verdict.worst is not None
    assert verdict.worst.index == worst
    assert verdict.bound == bound_for(None, str(ref.dtype))


@pytest.mark.parametrize("function", ["xp.maximum", "xp.sum", "fft.fft", "xp.fft.fft"])
def test_zero_signs_left_open_are_open_under_any_spelling(function: str) -> None:
    ref, cand = np.array([1.0, 0.0]), np.array([1.0, -0.0])
    assert compare_values(ref, cand, function=function).passed


def test_a_value_failures_worst_element_is_the_furthest_in_ulps() -> None:
    ref = np.array([1.0, 1.0, 1.0], np.float32)
    cand = np.array([1.0 + 8 * 2.0**-23, 1.0, 1.0 + 100 * 2.0**-23], np.float32)
    verdict = compare_values(ref, cand, function="exp")
    assert verdict.first is not None
    assert verdict.worst is not None
    assert (verdict.first.index, verdict.worst.index, verdict.worst.ulp) == ((0,), (2,), 100)


def test_an_exact_failure_locates_its_elements_in_the_first_output() -> None:
    verdict = compare_values(np.array([1, 9]), np.array([-1, 8]))
    assert verdict.first == Location((0,), "1", "-1", None, 0)
    assert verdict.worst == Location((0,), "1", "-1", None, 0)


@pytest.mark.parametrize(
    ("args", "options", "expected"),
    [
        (("std", "float64"), {"reduced": 4}, (14.0, "reduction over 4 elements, a robust sum's bound from n and float64's epsilon: 14 ULP", None)),
        (("sum", "float32"), {"reduced": 4, "magnitude": 2.0}, (8.0, "reduction over 4 elements, a robust sum's bound from n and float32's epsilon: 8 ULP or 8 * eps * sum|x| = 1.91e-06", 8 * 2.0**-23 * 2.0)),
        (("var", "float64"), {"reduced": 4, "atol": 0.5}, (14.0, "reduction over 4 elements, a robust sum's bound from n and float64's epsilon: 14 ULP or 0.5 (two-pass variance bound, the mean's error included)", 0.5)),
        (("prod", "float64"), {"reduced": 4}, (8.0, "reduction over 4 elements, any order's bound from n and float64's epsilon: 8 ULP", None)),
    ],
)  # fmt: skip
def test_a_reductions_bound_says_how_it_was_worked_out(
    args: tuple[str, str], options: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    bound = bound_for(*args, **options)
    assert bound.kind == "reduction"
    assert (bound.ulps, bound.provenance, bound.atol) == expected


def test_a_single_outputs_shape_and_dtype_failures_are_read_whole() -> None:
    f32 = np.zeros(2, np.float32)
    bound = bound_for("exp", "float32")
    shape = compare_values(f32, np.zeros(3, np.float32), function="exp")
    assert (shape.status, shape.kind, shape.reason) == (
        "failed",
        "shape",
        "shape differs: reference (2,), candidate (3,)",
    )
    assert (shape.bound, shape.first, shape.worst, shape.dtype) == (bound, None, None, "float32")
    dtype = compare_values(f32, f32.astype(np.float64), function="exp", expected_dtype="float32")
    assert (dtype.status, dtype.kind, dtype.reason) == (
        "failed",
        "dtype",
        "dtype differs: reference float32, candidate float64; the standard requires float32",
    )
    assert (dtype.bound, dtype.first, dtype.dtype) == (bound, None, "float32")


def test_a_single_outputs_elements_belong_to_output_0() -> None:
    ref = np.ones(2, np.float32)
    verdict = compare_values(ref, np.array([1.0, 2.0], np.float32), function="exp")
    assert verdict.first is not None
    assert verdict.worst is not None
    assert (verdict.first.output, verdict.worst.output) == (0, 0)


def test_sides_of_their_own_default_floats_compare_in_the_narrower_with_its_bound() -> None:
    # the reference's default float is float64, the candidate's float32: both conform
    x = np.array([0.5, 1.0])
    verdict = compare_values(
        np.exp(x),
        np.exp(x).astype(np.float32),
        function="exp",
        expected_dtype="float64",
        candidate_expected_dtype="float32",
    )
    assert (verdict.status, verdict.dtype, verdict.max_ulp) == ("passed", "float32", 0)
    assert verdict.bound == bound_for("exp", "float32")


def test_a_reduction_compared_in_the_narrower_default_keeps_the_bound_of_its_terms() -> None:
    total = np.array(1000.0)
    verdict = compare_values(
        total,
        total.astype(np.float32),
        function="sum",
        expected_dtype="float64",
        candidate_expected_dtype="float32",
        reduced=1000,
    )
    assert (verdict.status, verdict.dtype) == ("passed", "float32")
    assert verdict.bound == bound_for("sum", "float64", reduced=1000)


def test_the_callers_bound_and_reduced_count_are_used() -> None:
    ref = np.array([1.0], np.float32)
    cand = np.array([1.0 + 10 * 2.0**-23], np.float32)  # 10 ULP off
    mine = Bound("ulp", 16.0, None, "sixteen ULP of the caller's")
    several = compare_values((ref,), (cand,), function="exp", bound=mine)
    assert (several.status, several.bound) == ("passed", mine)
    single = compare_values(ref, cand, function="sum", reduced=1000)
    assert (single.status, single.bound) == ("passed", bound_for("sum", "float32", reduced=1000))


def test_required_dtypes_given_as_a_sequence_apply_output_by_output() -> None:
    f32 = np.zeros(2, np.float32)
    one = compare_values(f32, f32, expected_dtype=("float64",))
    assert (one.kind, one.reason) == (
        "dtype",
        "both sides return float32, but the standard requires float64",
    )
    own = compare_values(
        f32, f32, expected_dtype=("float32",), candidate_expected_dtype=("float64",)
    )
    assert own.kind == "dtype"
    # outputs beyond the sequence have no required dtype: only the sides must agree
    assert compare_values((f32, f32), (f32, f32), expected_dtype=("float32",)).passed


def test_own_defaults_with_no_common_dtype_are_a_dtype_failure_naming_each_rule() -> None:
    # each side returns its own required dtype, but real and complex values have no common view
    verdict = compare_values(
        np.zeros(2),
        np.zeros(2, np.complex64),
        function="linalg.det",
        expected_dtype="float64",
        candidate_expected_dtype="complex64",
    )
    assert (verdict.status, verdict.kind, verdict.reason) == (
        "failed",
        "dtype",
        "dtype differs: reference float64, candidate complex64; the standard requires float64 "
        "of the reference and complex64 of the candidate (each side's declared defaults)",
    )
    assert (verdict.bound, verdict.first, verdict.dtype) == (
        bound_for("linalg.det", "float64"),
        None,
        "float64",
    )


@pytest.mark.parametrize(
    ("function", "elementwise"),
    [("exp", True), ("xp.exp", True), ("xp.sum", False), ("linalg.det", False), (None, False)],
)
def test_elementwise_functions_are_known_with_or_without_their_namespace(
    function: str | None, elementwise: bool
) -> None:
    assert is_elementwise(function) is elementwise


#: NumPy's longdouble is float64 on some platforms (Windows, Apple silicon): standard there.
_WIDE_LONGDOUBLE = pytest.mark.skipif(
    np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 on this platform"
)


@pytest.mark.parametrize(
    "reference",
    [
        np.array(["a", "b"]),
        np.array([1, 2], dtype=object),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        (np.array([1.0]), np.array([b"x"])),  # the second of several outputs
        pytest.param(np.array([1.0], dtype=np.longdouble), marks=_WIDE_LONGDOUBLE),
        pytest.param(np.array([1.0 + 2.0j], dtype=np.clongdouble), marks=_WIDE_LONGDOUBLE),
    ],
    ids=["str", "object", "datetime", "second-output-bytes", "longdouble", "clongdouble"],
)
def test_a_reference_outside_the_standards_dtypes_is_refused_in_one_line(reference: Any) -> None:
    with pytest.raises(ConfigError) as raised:
        compare_values(reference, reference)
    message = str(raised.value)
    assert "\n" not in message
    assert "is not an Array API dtype" in message
    last = reference[-1] if isinstance(reference, tuple) else reference
    assert f"dtype {last.dtype}," in message


def test_a_candidate_of_strings_beside_a_float_reference_is_a_dtype_failure() -> None:
    verdict = compare_values(np.array([1.0, 2.0]), np.array(["1.0", "2.0"]))
    assert (verdict.status, verdict.kind) == ("failed", "dtype")
    assert "candidate str" in (verdict.reason or "")


def test_the_refusal_of_a_non_standard_reference_says_what_the_model_compares() -> None:
    with pytest.raises(ConfigError) as raised:
        compare_values(np.array(["x"]), np.array(["x"]))
    assert str(raised.value) == (
        "the reference's result has dtype <U1, which is not an Array API dtype (bool, "
        "integer, real or complex floating): the value model compares only those"
    )
