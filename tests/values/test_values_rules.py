"""The standard's rules as data: promotion, result dtypes, bounds, special cases, oracle."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from diffcheck.values import blame, bound_for, compare_values, expected_result_dtype, promote
from diffcheck.values.judges import judge_element
from diffcheck.values.model import Blame, Bound, Location
from diffcheck.values.oracle import (
    complex_ulps_from_truth,
    true_complex,
    true_value,
    ulps_from_truth,
)
from diffcheck.values.rules import exact_element, expected_shape
from diffcheck.values.special_cases import special_case


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        ("int8", "uint8", "int16"),
        ("uint16", "int32", "int32"),
        ("uint32", "int32", "int64"),
        ("int64", "uint64", None),
        ("uint8", "uint32", "uint32"),
        ("float32", "complex128", "complex128"),
        ("float64", "complex64", "complex128"),
        ("bool", "int8", None),
        ("int32", "float32", None),
        ("float16", "float32", "float32"),
        ("float16", "bfloat16", None),
    ],
)
def test_promotion_follows_the_standards_table(a: str, b: str, result: str | None) -> None:
    assert promote([a, b]) == result
    assert promote([b, a]) == result


@pytest.mark.parametrize(
    ("function", "inputs", "kwargs", "result"),
    [
        ("sum", ("int8",), {}, "int64"),
        ("sum", ("uint8",), {}, "uint64"),
        # bool is not numeric: the standard leaves its sum open
        ("cumulative_sum", ("bool",), {"default_int": "int32"}, None),
        # under a declared int32 default (MLX): narrower integers widen to it, others keep theirs
        ("cumulative_sum", ("int8",), {"default_int": "int32"}, "int32"),
        ("sum", ("uint8",), {"default_int": "int32"}, "uint32"),
        ("sum", ("int32",), {"default_int": "int32"}, "int32"),
        ("sum", ("uint32",), {"default_int": "int32"}, "uint32"),
        ("prod", ("int64",), {"default_int": "int32"}, "int64"),
        ("prod", ("uint64",), {"default_int": "int32"}, "uint64"),
        ("sum", ("uint32",), {}, "uint64"),
        ("sum", ("int64",), {}, "int64"),
        ("count_nonzero", ("int64",), {"default_int": "int32"}, "int32"),
        ("argmax", ("int8",), {"default_int": "int64", "default_index": "int32"}, "int32"),
        ("sum", ("float32",), {}, "float32"),
        ("sum", ("int8",), {"dtype": "int16"}, "int16"),
        ("argmax", ("float32",), {}, "int64"),
        ("abs", ("complex64",), {}, "float32"),
        # the stubs: a complex input's norm is real
        ("linalg.vector_norm", ("complex64",), {}, "float32"),
        ("linalg.matrix_norm", ("complex128",), {}, "float64"),
        ("linalg.vector_norm", ("float32",), {}, "float32"),
        ("equal", ("float32", "float32"), {}, "bool"),
        ("divide", ("int32", "int32"), {}, None),
        ("bitwise_left_shift", ("int8", "uint8"), {}, "int16"),
        ("fft.rfft", ("float32",), {}, "complex64"),
        ("fft.irfft", ("complex128",), {}, "float64"),
        ("linalg.vecdot", ("float32", "float64"), {}, "float64"),
        ("no_such_function", ("float32",), {}, None),
    ],
)
def test_expected_result_dtype(
    function: str, inputs: tuple[str, ...], kwargs: dict[str, Any], result: str | None
) -> None:
    assert expected_result_dtype(function, *inputs, **kwargs) == result


def test_bounds_carry_their_provenance() -> None:
    assert bound_for("add", "int32").kind == "exact"
    assert bound_for("floor", "float32").kind == "exact"
    basic = bound_for("divide", "float32")
    assert (basic.kind, basic.ulps) == ("ulp", 0.0)
    assert "correctly rounded" in basic.provenance
    exp = bound_for("exp", "float32")
    assert exp.ulps == 2
    assert exp.provenance.endswith("within 2 ULP of float32")
    total = bound_for("sum", "float32", reduced=100, magnitude=10.0)
    assert total.kind == "reduction"
    assert "reduction over 100 elements" in total.provenance
    # A robust sum of 100 terms: ceil(log2 100) + 32 steps and the final rounding, two sides.
    assert total.atol == pytest.approx(2 * 40 * 2.0**-23 * 10.0)
    scan = bound_for("cumulative_sum", "float32", reduced=100, magnitude=10.0)
    assert scan.atol == pytest.approx(200 * 2.0**-23 * 10.0)  # any order: n steps
    other = bound_for(None, "bfloat16")
    assert (other.kind, other.nmse) == ("nmse", 1e-4)
    assert "NMSE bucket" in other.provenance


@pytest.mark.parametrize(
    ("function", "args", "expected"),
    [
        ("exp", [-math.inf], 0.0),
        ("log", [-0.0], -math.inf),
        ("sqrt", [-1.0], math.nan),
        ("expm1", [-0.0], -0.0),
        ("tanh", [math.inf], 1.0),
        ("multiply", [-0.0, 2.0], -0.0),
        ("divide", [-1.0, 0.0], -math.inf),
        ("add", [-0.0, -0.0], -0.0),
        ("subtract", [-0.0, 0.0], -0.0),
        ("subtract", [3.0, 3.0], 0.0),
        ("pow", [math.nan, 0.0], 1.0),
        ("pow", [-0.0, -3.0], -math.inf),
        ("pow", [-8.0, 1 / 3], math.nan),
        ("hypot", [math.inf, math.nan], math.inf),
        ("atan2", [-0.0, 1.0], -0.0),
        ("atan2", [1.0, -math.inf], math.pi),
        ("remainder", [-1.0, math.inf], math.inf),
        ("remainder", [-0.0, 2.0], 0.0),
        ("floor_divide", [-0.0, 2.0], -0.0),
        ("copysign", [3.0, -math.nan], -3.0),
        ("logaddexp", [math.inf, -5.0], math.inf),
        ("sign", [-2.5], -1.0),
    ],
)
def test_special_cases_give_the_standards_result(
    function: str, args: list[float], expected: float
) -> None:
    found = special_case(function, args)
    assert found is not None
    value, rule, exact = found
    assert exact == (function != "atan2" or value == 0)
    assert function in rule
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == expected
        assert math.copysign(1.0, value) == math.copysign(1.0, expected)
    assert special_case("exp", [1.0]) is None
    assert special_case("floor_divide", [math.inf, 2.0]) is None  # the standard allows NaN too


def test_the_oracle_measures_distance_from_the_truth() -> None:
    truth = true_value("exp", [1.0])
    assert truth is not None
    assert ulps_from_truth(float(np.float32(math.e)), truth, "float32") <= 0.5
    assert (
        ulps_from_truth(float(np.nextafter(np.float32(math.e), np.float32(3))), truth, "float32")
        > 0.5
    )
    assert true_value("log", [-1.0]) is None  # complex: no real truth
    assert true_value("no_such", [1.0]) is None


def test_integer_rules_of_the_standard() -> None:
    assert exact_element("bitwise_left_shift", [1, 40], "int32") == 0
    assert exact_element("bitwise_left_shift", [3, 31], "int32") == -(2**31)
    assert exact_element("bitwise_right_shift", [-5, 70], "int64") == -1
    assert exact_element("bitwise_left_shift", [1, -1], "int32") is None
    assert exact_element("add", [2**31 - 1, 1], "int32") is None  # overflow: unspecified
    assert exact_element("remainder", [-7, 3], "int8") == 2
    assert exact_element("floor_divide", [1, 0], "int8") is None
    assert exact_element("less", [1.0, math.nan], "bool") is False
    assert expected_shape("add", [(3, 1), (4,)], {}) == (3, 4)
    assert expected_shape("sum", [(2, 3, 4)], {"axis": 1, "keepdims": True}) == (2, 1, 4)


def test_rounding_to_bfloat16_is_to_nearest_even() -> None:
    from diffcheck.values.ulp import round_to_bfloat16

    values = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-9, -0.0, np.inf], np.float32)
    rounded = round_to_bfloat16(values)
    assert rounded.tolist()[:3] == [1.0, 1 + 2**-6, 1.0]
    assert np.signbit(rounded[3])
    assert rounded[4] == np.inf
    assert np.isnan(round_to_bfloat16(np.array([np.nan], np.float32))[0])


def test_several_outputs_have_their_own_required_dtypes() -> None:
    from diffcheck.values.dtypes import expected_result_dtypes

    assert expected_result_dtypes("unique_counts", "float32") == ("float32", "int64")
    assert expected_result_dtypes("linalg.eigh", "complex64") == ("float32", "complex64")
    assert expected_result_dtypes("nonzero", "bool", outputs=2) == ("int64", "int64")
    assert expected_result_dtypes("broadcast_arrays", "int8", "float32", outputs=2) == (
        "int8",
        "float32",
    )
    values = np.array([1.0, 2.0], np.float32)
    ref = (values, np.array([1, 3], np.int64))
    cand = (values, np.array([1, 3], np.int32))
    wanted = expected_result_dtypes("unique_counts", "float32")
    verdict = compare_values(ref, cand, function="unique_counts", expected_dtype=wanted)
    assert verdict.kind == "dtype"
    assert "output 1" in (verdict.reason or "")
    judged = blame("unique_counts", [np.array([1.0, 2, 2, 2], np.float32)], {}, ref, cand, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "standard-rule")
    assert "output 1" in judged.why


def test_the_oracle_knows_when_the_correct_result_overflows() -> None:
    truth = true_value("exp", [100.0])  # e**100 is beyond float32's range
    assert ulps_from_truth(math.inf, truth, "float32") == 0.0
    assert ulps_from_truth(-math.inf, truth, "float32") == math.inf
    assert ulps_from_truth(float(np.finfo(np.float32).max), truth, "float32") > 0.5
    assert ulps_from_truth(math.inf, true_value("exp", [10.0]), "float64") == math.inf
    x = np.array([100.0], np.float32)
    right, wrong = np.array([np.inf], np.float32), np.array([np.finfo(np.float32).max], np.float32)
    verdict = compare_values(right, wrong, function="exp")
    assert verdict.kind == "inf"
    judged = blame("exp", [x], {}, right, wrong, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "oracle")


def test_python_scalars_of_another_kind_leave_the_dtype_open() -> None:
    from diffcheck.values.dtypes import scalars_fit

    assert scalars_fit("int8", [np.ones(2, np.int8), 1])
    assert not scalars_fit("int8", [np.ones(2, np.int8), 1.5])
    assert not scalars_fit("float32", [np.ones(2, np.float32), 1j])
    assert not scalars_fit("bool", [np.ones(2, bool), 1])
    x = np.array([1, 2], np.int8)
    ref, cand = np.array([2.5, 3.5]), np.array([2.5, 3.5], np.float32)
    verdict = compare_values(ref, cand, function="add")
    assert verdict.kind == "dtype"
    assert blame("add", [x, 1.5], {}, ref, cand, verdict).side == "undecided"


def test_the_standards_names_include_the_2024_12_additions() -> None:
    from diffcheck.values.spec import is_standard_name

    assert is_standard_name("linalg.vecdot")
    assert is_standard_name("nextafter")
    assert is_standard_name("int8")
    assert not is_standard_name("bfloat16")
    assert not is_standard_name("left_shift")
    assert expected_result_dtype("diff", "int16") == "int16"
    assert expected_result_dtype("count_nonzero", "float32") == "int64"


def test_complex_special_cases_agree_with_c99_numpy_and_blame_a_side() -> None:
    import itertools

    from diffcheck.values.complex_cases import complex_special_case
    from diffcheck.values.judges import _complex_matches

    edges = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.5]
    checked = 0
    for name in ("exp", "log", "sqrt", "abs"):
        for a, b in itertools.product(edges, edges):
            case = complex_special_case(name, complex(a, b))
            if case is None:
                continue
            with np.errstate(all="ignore"):
                numpy_result = complex(getattr(np, name)(np.complex128(complex(a, b))))
            assert _complex_matches(numpy_result, case, "float64", 1.0), (name, a, b, case)
            checked += 1
    assert checked > 150
    z = np.array([complex(-math.inf, 1.0)], np.complex64)
    right = np.exp(z)
    wrong = np.array([complex(math.nan, math.nan)], np.complex64)
    verdict = compare_values(right, wrong, function="exp")
    judged = blame("exp", [z], {}, right, wrong, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "special-case")


def test_abs_of_a_complex_input_is_rounded_math() -> None:
    assert bound_for("abs", "float32").kind == "exact"
    complex_abs = bound_for("abs", "float32", inputs=("complex64",))
    assert (complex_abs.kind, complex_abs.ulps) == ("ulp", 2.0)
    assert "hypot" in complex_abs.provenance


# Each side of one located element, judged on its own: the element judge at a chosen bound.
AT = Location((1,), "r", "c", None)
TINY32, SMALL32 = float(np.float32(6e-45)), float(np.float32(1e-19))


def _ulp_bound(ulps: float | None) -> Bound:
    return Bound("ulp", ulps, None, "chosen")


def _up(k: float) -> float:
    """1 + k ULPs of float32 at 1."""
    return 1.0 + k * 2.0**-23


def _judged(found: Blame | None) -> tuple[str, str, str] | None:
    return None if found is None else (found.side, found.evidence, found.why)


@pytest.mark.parametrize("swap", [False, True])
def test_an_integer_rule_blames_whichever_side_breaks_it(swap: bool) -> None:
    ref, cand = (127, 126) if swap else (126, 127)
    found = judge_element("add", [100, 27], {}, ref, cand, "int8", AT, _ulp_bound(None))
    assert _judged(found) == (
        "candidate" if swap else "reference",
        "standard-rule",
        f"add(100, 27) must be 127 by the standard's rules; reference {ref}, candidate {cand} "
        "at [1]",
    )


@pytest.mark.parametrize(
    ("ulps", "ref_k", "cand_k", "side", "shares"),
    [
        # 1 + 2**-24 lies halfway: a correctly rounded 1.0 is 0.5 ULP off, within the least
        # share; 1.5 ULPs is outside it, with or without an exact bound.
        (None, 0, 2, "candidate", ("0.5", "1.5", "0.5")),
        (1.0, 0, 2, "candidate", ("0.5", "1.5", "0.5")),
        # Each side has half the bound: 1.5 ULPs is within half of 4, 2.5 is not.
        (4.0, 2, 3, "candidate", ("1.5", "2.5", "2")),
    ],
)
@pytest.mark.parametrize("swap", [False, True])
def test_each_side_of_an_element_has_half_the_bound_and_at_least_half_an_ulp(
    ulps: float | None, ref_k: int, cand_k: int, side: str, shares: tuple[str, ...], swap: bool
) -> None:
    ref, cand = _up(ref_k), _up(cand_k)
    off_ref, off_cand, share = shares
    if swap:
        ref, cand, off_ref, off_cand = cand, ref, off_cand, off_ref
        side = "reference"
    found = judge_element("add", [1.0, 2.0**-24], {}, ref, cand, "float32", AT, _ulp_bound(ulps))
    assert _judged(found) == (
        side,
        "oracle",
        f"true add(1.0, {2.0**-24!r}) = {1 + 2.0**-24!r}; reference is {off_ref} ULP off, "
        f"candidate {off_cand} ULP (each side may be {share}) at [1]",
    )


@pytest.mark.parametrize(
    ("ulps", "k", "side"),
    [
        (2.0, 2, "candidate"),  # the finite side within the whole bound: the infinity is wrong
        (2.0, 3, "both"),  # beyond the whole bound: both are wrong
        (None, 1, "both"),  # an exact bound allows no ULP beyond the finite side's half
    ],
)
@pytest.mark.parametrize("swap", [False, True])
def test_an_infinity_for_a_finite_truth_leaves_a_finite_side_its_whole_bound(
    ulps: float | None, k: int, side: str, swap: bool
) -> None:
    ref, cand = _up(k), math.inf
    if swap:
        ref, cand = cand, ref
        side = {"candidate": "reference"}.get(side, side)
    found = judge_element("add", [0.75, 0.25], {}, ref, cand, "float32", AT, _ulp_bound(ulps))
    assert found is not None
    assert (found.side, found.evidence) == (side, "oracle")


BIG32 = float(np.finfo(np.float32).max)
TOP32 = 2.0**104  # float32's spacing at its largest value


def test_a_correct_overflow_is_judged_by_its_own_share_alone() -> None:
    # max + 1.5 spacings rounds to +inf; with 4 ULPs each side may be 2 off: the largest
    # finite value (1.5 off) and the infinity (0 off) both pass, so neither is blamed.
    args = [BIG32, 1.5 * TOP32]
    assert judge_element("add", args, {}, BIG32, math.inf, "float32", AT, _ulp_bound(4.0)) is None
    # A finite value 2.5 spacings off is wrong even within the whole bound: the infinity
    # is the rounded truth, not an overflow to excuse.
    found = judge_element("add", args, {}, math.inf, BIG32 - TOP32, "float32", AT, _ulp_bound(4.0))
    assert found is not None
    assert (found.side, found.evidence) == ("candidate", "oracle")


def test_the_oracles_sentence_lists_every_argument() -> None:
    found = judge_element(
        "multiply", [0.75, 2.5], {}, 1.875, _up(1) * 1.875, "float32", AT, _ulp_bound(None)
    )
    assert found is not None
    assert found.why.startswith("true multiply(0.75, 2.5) = 1.875; reference is 0 ULP off")
    found = judge_element(
        "multiply",
        [complex(1, 2), complex(3, 4)],
        {},
        complex(-5, 10),
        complex(-5, 10.5),
        "complex128",
        AT,
        _ulp_bound(None),
    )
    assert found is not None
    assert found.why.startswith("true multiply((1+2j), (3+4j)) = (-5+10j); reference is 0 ULP")


@pytest.mark.parametrize("swap", [False, True])
def test_a_zero_whose_sign_the_standard_leaves_open_is_not_blamed_for_it(swap: bool) -> None:
    """exp(-inf + inf j) is 0 + 0j with either signs: a -0 real part is right, 1 is not."""
    ref, cand = complex(-0.0, 0.0), complex(1.0, 0.0)
    if swap:
        ref, cand = cand, ref
    found = judge_element(
        "exp", [complex(-math.inf, math.inf)], {}, ref, cand, "complex64", AT, _ulp_bound(None)
    )
    assert found is not None
    assert (found.side, found.evidence) == ("reference" if swap else "candidate", "special-case")
    assert found.why.startswith("special case exp: a is -inf and b is +inf -> 0? + 0?j at [1]")


@pytest.mark.parametrize("swap", [False, True])
def test_a_complex128_pi_is_judged_in_float64_ulps(swap: bool) -> None:
    """log(-0 + 0j) is -inf + pi j: float32's pi in a complex128 result is far off."""
    pi32 = float(np.float32(math.pi))
    ref, cand = complex(-math.inf, pi32), complex(-math.inf, math.pi)
    if swap:
        ref, cand = cand, ref
    found = judge_element(
        "log", [complex(-0.0, 0.0)], {}, ref, cand, "complex128", AT, _ulp_bound(None)
    )
    assert found is not None
    assert (found.side, found.evidence) == ("candidate" if swap else "reference", "special-case")


def test_a_nonzero_complex_part_is_not_judged_by_the_sign_of_zero() -> None:
    """A tiny negative imaginary part beside a zero: both within their share, neither blamed."""
    args = [complex(1.0, TINY32), complex(SMALL32, 0.0)]
    ref, cand = complex(SMALL32, 0.0), complex(SMALL32, -(2.0**-149))
    for r, c in ((ref, cand), (cand, ref)):
        assert judge_element("multiply", args, {}, r, c, "complex64", AT, _ulp_bound(None)) is None


def test_a_nonzero_real_result_is_not_judged_by_the_sign_of_zero() -> None:
    """-2**-149 beside +0 for a true +5.6e-64: 1 ULP, within half of 2 ULPs: not blamed."""
    args = [TINY32, SMALL32]
    for r, c in ((0.0, -(2.0**-149)), (-(2.0**-149), 0.0)):
        assert judge_element("multiply", args, {}, r, c, "float32", AT, _ulp_bound(2.0)) is None


@pytest.mark.parametrize(("ref", "cand"), [(-0.0, 0.0), (0.0, -0.0)])
def test_an_exact_zero_truth_leaves_the_sign_to_the_special_cases(ref: float, cand: float) -> None:
    """sign(±0) is 0 exactly and no special case fixes its sign: neither zero is blamed."""
    for x in (0.0, -0.0):
        assert judge_element("sign", [x], {}, ref, cand, "float64", AT, _ulp_bound(None)) is None


@pytest.mark.parametrize("swap", [False, True])
def test_an_approximate_special_case_blames_whichever_side_misses_it(swap: bool) -> None:
    """atan2(+0, -0) is pi, which float32 can only approximate: each side within its share."""
    ref, cand = 3.0, float(np.float32(math.pi))
    if swap:
        ref, cand = cand, ref
    found = judge_element("atan2", [0.0, -0.0], {}, ref, cand, "float32", AT, _ulp_bound(None))
    assert found is not None
    assert (found.side, found.evidence) == ("candidate" if swap else "reference", "special-case")


def _bound_with_share(share: float) -> float:
    """The bound whose half plus the judges' 1e-9 slack is exactly ``share`` ULPs."""
    half = share - 1e-9
    for _ in range(16):
        if half + 1e-9 == share:
            return 2 * half
        half = math.nextafter(half, math.inf if half + 1e-9 < share else 0.0)
    raise AssertionError(share)


PI32_UP = float(np.nextafter(np.float32(math.pi), np.float32(4)))  # 1.37 ULP above pi
PI32_UP2 = float(np.nextafter(np.float32(PI32_UP), np.float32(4)))  # 2.37 ULP above pi


@pytest.mark.parametrize(
    ("function", "args", "dtype", "edge", "beyond", "evidence"),
    [
        ("add", [1.0, 2.0**-24], "float32", 1.0 + 2.0**-22, 1.0 + 3 * 2.0**-23, "oracle"),
        ("atan2", [0.0, -0.0], "float32", PI32_UP, PI32_UP2, "special-case"),
        (
            "log",
            [complex(-0.0, 0.0)],
            "complex64",
            complex(-math.inf, PI32_UP),
            complex(-math.inf, PI32_UP2),
            "special-case",
        ),
        (
            "multiply",
            [complex(1, 2), complex(3, 4)],
            "complex64",
            complex(-5, 10 + 2.0**-19),
            complex(-5, 10 + 2.0**-18),
            "oracle",
        ),
    ],
)
@pytest.mark.parametrize("swap", [False, True])
def test_a_side_exactly_at_its_share_of_the_bound_is_within_it(
    function: str, args: list[Any], dtype: str, edge: Any, beyond: Any, evidence: str, swap: bool
) -> None:
    """Each side may be half the bound off (plus 1e-9): a side exactly that far is right."""
    if evidence == "special-case":  # pi, as the special case requires, in float32's ULPs
        ulps = ulps_from_truth(
            complex(edge).imag if dtype == "complex64" else edge, math.pi, "float32"
        )
    elif dtype == "complex64":
        ulps = complex_ulps_from_truth(edge, true_complex(function, args), dtype)
    else:
        ulps = ulps_from_truth(edge, true_value(function, args), dtype)
    assert ulps > 1.0  # beyond the least share of half an ULP
    bound = _ulp_bound(_bound_with_share(ulps))
    ref, cand = (beyond, edge) if swap else (edge, beyond)
    found = judge_element(function, args, {}, ref, cand, dtype, AT, bound)
    assert found is not None
    assert (found.side, found.evidence) == ("reference" if swap else "candidate", evidence)


@pytest.mark.parametrize("swap", [False, True])
def test_a_finite_side_exactly_at_the_whole_bound_is_within_it(swap: bool) -> None:
    """Beside an infinity, a finite side may be the whole bound (plus 1e-9) off: 2 ULPs here."""
    whole = 2.0 - 1e-9
    while whole + 1e-9 != 2.0:
        whole = math.nextafter(whole, math.inf if whole + 1e-9 < 2.0 else 0.0)
    ref, cand = (math.inf, _up(2)) if swap else (_up(2), math.inf)
    found = judge_element("add", [0.75, 0.25], {}, ref, cand, "float32", AT, _ulp_bound(whole))
    assert found is not None
    assert (found.side, found.evidence) == ("reference" if swap else "candidate", "oracle")
    assert "reference is " + ("inf" if swap else "2") + " ULP off" in found.why


@pytest.mark.parametrize(
    ("function", "dtype", "kind", "tolerance", "precision"),
    [
        ("exp", "complex128", "ulp", 4.0, "float64"),
        ("exp", "complex64", "ulp", 4.0, "float32"),
        ("multiply", "complex128", "ulp", 4.0, "float64"),
        ("sum", "complex128", "reduction", 2.0, "float64"),
        ("fft.fft", "complex128", "nmse", 1e-15, "float64"),
        ("fft.fft", "complex64", "nmse", 1e-7, "float32"),
    ],
)
def test_a_complex_result_is_bounded_in_the_precision_of_its_parts(
    function: str, dtype: str, kind: str, tolerance: float, precision: str
) -> None:
    # A complex result is two floats: its bound is that float's, never exact equality.
    bound = bound_for(function, dtype)
    assert bound.kind == kind
    assert (bound.ulps if kind != "nmse" else bound.nmse) == tolerance
    assert precision in bound.provenance


_ROBUST = "a robust sum's bound from n and"


@pytest.mark.parametrize(
    ("function", "dtype", "options", "expected"),
    [
        ("exp", "bool", {}, Bound("exact", None, None, "bool result: exact equality")),
        ("add", "int32", {}, Bound("exact", None, None, "int32 result: exact equality")),
        (
            "exp",
            "float8",
            {},
            Bound("exact", None, None, "float8 result: no float model, exact equality"),
        ),
        (
            "abs",
            "float32",
            {"inputs": ("complex64",)},
            Bound(
                "ulp",
                2.0,
                None,
                "abs of a complex input is hypot(real, imag): within 2 ULP of float32",
            ),
        ),
        (
            "sign",
            "float64",
            {"inputs": ("complex128",)},
            Bound(
                "ulp",
                4.0,
                None,
                "sign of a complex input is z / |z|, rounded math: within 4 ULP of float64, "
                "componentwise or relative to |z|",
            ),
        ),
        (
            "sign",
            "float32",
            {"inputs": ("float32",)},
            Bound("exact", None, None, "sign moves, selects or compares values: exact"),
        ),
        (
            "exp",
            "complex64",
            {"inputs": ("complex64",)},
            Bound(
                "ulp",
                4.0,
                None,
                "elementwise, each side within 2 ULP of the true value: within 4 ULP of "
                "float32, componentwise or relative to |z|",
            ),
        ),
        (
            "subtract",
            "complex128",
            {},
            Bound(
                "ulp", 0.0, None, "IEEE 754 basic operation, correctly rounded in float64: 0 ULP"
            ),
        ),
        (
            "xp.where",
            "float32",
            {},
            Bound("exact", None, None, "where moves, selects or compares values: exact"),
        ),
        (
            "multiply",
            "complex64",
            {},
            Bound(
                "ulp",
                4.0,
                None,
                "complex multiply combines several rounded operations: within 4 ULP of "
                "float32, componentwise or relative to |z|",
            ),
        ),
        (
            "add",
            "complex64",
            {},
            Bound(
                "ulp", 0.0, None, "IEEE 754 basic operation, correctly rounded in float32: 0 ULP"
            ),
        ),
        (
            "exp",
            "float16",
            {},
            Bound(
                "ulp",
                2.0,
                None,
                "elementwise, each side within 1 ULP of the true value: within 2 ULP of float16",
            ),
        ),
        (
            "exp",
            "complex128",
            {},
            Bound(
                "ulp",
                4.0,
                None,
                "elementwise, each side within 2 ULP of the true value: within 4 ULP of "
                "float64, componentwise or relative to |z|",
            ),
        ),
        (
            "sum",
            "float32",
            {"reduced": 1000, "magnitude": 10.0},
            Bound(
                "reduction",
                86.0,
                None,
                f"reduction over 1000 elements, {_ROBUST} float32's epsilon: 86 ULP or "
                "86 * eps * sum|x| = 0.000103",
                86 * 2.0**-23 * 10.0,
            ),
        ),
        (
            "sum",
            "float64",
            {"reduced": 0},
            Bound(
                "reduction",
                2.0,
                None,
                f"reduction over 1 elements, {_ROBUST} float64's epsilon: 2 ULP",
            ),
        ),
        (
            "var",
            "float32",
            {"reduced": 8, "atol": 1e-3, "magnitude": 5.0},
            Bound(
                "reduction",
                22.0,
                None,
                f"reduction over 8 elements, {_ROBUST} float32's epsilon: 22 ULP or 0.001 "
                "(two-pass variance bound, the mean's error included)",
                1e-3,
            ),
        ),
        (
            "std",
            "float64",
            {"reduced": 8},
            Bound(
                "reduction",
                22.0,
                None,
                f"reduction over 8 elements, {_ROBUST} float64's epsilon: 22 ULP",
            ),
        ),
        (
            "cumulative_sum",
            "float32",
            {"reduced": 16},
            Bound(
                "reduction",
                32.0,
                None,
                "reduction over 16 elements, any order's bound from n and float32's epsilon: "
                "32 ULP",
            ),
        ),
        (
            "prod",
            "bfloat16",
            {"reduced": 4, "magnitude": 2.0},
            Bound(
                "reduction",
                8.0,
                None,
                "reduction over 4 elements, any order's bound from n and bfloat16's epsilon: "
                "8 ULP or 8 * eps * sum|x| = 0.125",
                0.125,
            ),
        ),
        (
            "fft.fft",
            "bfloat16",
            {},
            Bound(
                "nmse",
                None,
                1e-4,
                "fft.fft: NMSE bucket of the storage precision bfloat16 (< 0.0001)",
            ),
        ),
        (
            None,
            "float32",
            {},
            Bound(
                "nmse",
                None,
                1e-7,
                "an unnamed function: NMSE bucket of the storage precision float32 (< 1e-07)",
            ),
        ),
    ],
)
def test_each_branch_of_the_bound_model_states_its_bound_and_why(
    function: str | None, dtype: str, options: dict[str, Any], expected: Bound
) -> None:
    # The bound and its provenance are stored with every verdict and printed beside it.
    assert bound_for(function, dtype, **options) == expected


@pytest.mark.parametrize(
    ("function", "elementwise"),
    [(None, False), ("exp", True), ("xp.exp", True), ("sum", False), ("", False)],
)
def test_only_the_standards_elementwise_functions_are_elementwise(
    function: str | None, elementwise: bool
) -> None:
    from diffcheck.values.bounds import is_elementwise

    assert is_elementwise(function) is elementwise
