"""The value model's parts: dtype rules, ULPs, bounds, comparison, special cases, blame."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.values import (
    Bound,
    blame,
    compare_values,
    promote,
)
from diffcheck.values.compare import failed_call
from diffcheck.values.model import Blame
from diffcheck.values.ulp import ulp_distance


@settings(max_examples=60, deadline=None)
@given(
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.integers(min_value=0, max_value=5),
)
def test_ulp_distance_counts_representable_steps(x: float, steps: int) -> None:
    start = np.float32(x)
    end = start
    with np.errstate(over="ignore"):  # stepping past float32's max gives inf, skipped below
        for _ in range(steps):
            end = np.nextafter(end, np.float32(np.inf))
    if not np.isfinite(end):
        return
    assert ulp_distance(np.array([start]), np.array([end]), "float32")[0] == steps


def test_ulp_distance_crosses_zero_and_never_overflows() -> None:
    tiny = np.nextafter(np.float32(0), np.float32(1))
    assert ulp_distance(np.array([tiny]), np.array([-tiny]), "float32")[0] == 2
    assert ulp_distance(np.array([0.0]), np.array([-0.0]), "float64")[0] == 0
    huge = ulp_distance(
        np.array([np.finfo(np.float64).max]), np.array([-np.finfo(np.float64).max]), "float64"
    )
    assert huge[0] > 2**63
    half = np.array([1.0, 1.0 + 2**-10], np.float16)
    assert ulp_distance(half[:1], half[1:], "float16")[0] == 1
    bf16 = np.array([1.0, 1.0 + 2**-7], np.float32)  # adjacent bfloat16 values
    assert ulp_distance(bf16[:1], bf16[1:], "bfloat16")[0] == 1


def test_exact_results_are_compared_exactly_and_localized() -> None:
    ref = np.array([[1, 2], [3, 4]], np.int64)
    cand = np.array([[1, 2], [5, 40]], np.int64)
    verdict = compare_values(ref, cand, function="add")
    assert verdict.kind == "value"
    assert verdict.first is not None
    assert verdict.first.index == (1, 0)
    assert verdict.worst is not None
    assert verdict.worst.index == (1, 1)
    assert (verdict.worst.reference, verdict.worst.candidate) == ("4", "40")
    assert verdict.failing == 2
    flags = compare_values(np.array([True, False]), np.array([True, True]))
    assert flags.kind == "value"
    assert flags.first is not None
    assert flags.first.candidate == "True"


def test_dtype_is_bound_before_values_and_shape_before_values() -> None:
    same_values = compare_values(np.arange(3, dtype=np.int64), np.arange(3, dtype=np.int32))
    assert same_values.kind == "dtype"
    shape = compare_values(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))
    assert shape.kind == "shape"
    assert "(2, 3)" in (shape.reason or "")


def test_nan_and_infinities_are_placed_exactly() -> None:
    ref = np.array([np.nan, np.inf, 1.0], np.float32)
    assert compare_values(ref, ref.copy(), function="exp").passed
    flipped = compare_values(ref, np.array([np.nan, -np.inf, 1.0], np.float32), function="exp")
    assert flipped.kind == "inf"
    assert flipped.first is not None
    assert flipped.first.index == (1,)
    extra = compare_values(ref, np.array([np.nan, np.inf, np.nan], np.float32), function="exp")
    assert extra.kind == "nan"


def test_signed_zero_policy_follows_the_function_and_can_be_set() -> None:
    ref, cand = np.array([-0.0]), np.array([0.0])
    assert compare_values(ref, cand, function="negative").kind == "signed-zero"
    assert compare_values(ref, cand, function="sum").passed
    assert compare_values(ref, cand, function="negative", signed_zero=False).passed


def test_complex_results_are_compared_componentwise() -> None:
    ref = np.array([1 + 1j, complex(2.0, -0.0)], np.complex64)
    cand = ref.copy()
    cand[1] = complex(2, 0)
    verdict = compare_values(ref, cand, function="multiply")
    assert verdict.kind == "signed-zero"
    off = ref.copy()
    off.real[0] = np.nextafter(np.float32(1), np.float32(2))
    value = compare_values(ref, off, function="add")
    assert value.kind == "value"
    assert value.first is not None
    assert value.first.ulp == 1


def test_nmse_and_reduction_bounds_can_fail() -> None:
    ref = np.linspace(1, 2, 64, dtype=np.float32)
    nmse = Bound("nmse", None, 1e-7, "test")
    assert compare_values(ref, ref * np.float32(1.0000001), bound=nmse).passed
    loud = compare_values(ref, ref * np.float32(1.01), bound=nmse)
    assert loud.kind == "value"
    assert "NMSE" in (loud.reason or "")
    cancel = Bound("reduction", 4.0, None, "test", atol=1e-3)
    assert compare_values(np.float32(1e-6), np.float32(5e-4), bound=cancel).passed
    assert compare_values(np.float32(1e-6), np.float32(5e-3), bound=cancel).kind == "value"


def test_several_outputs_are_compared_in_turn() -> None:
    ref = (np.array([1, 2]), np.array([0.5, 0.25]))
    assert compare_values(ref, (ref[0].copy(), ref[1].copy())).passed
    verdict = compare_values(ref, (ref[0].copy(), np.array([0.5, 0.5])))
    assert verdict.kind == "value"
    assert verdict.first is not None
    assert verdict.first.output == 1
    assert compare_values(ref, (ref[0],)).kind == "shape"


def test_bfloat16_travels_as_tagged_float32() -> None:
    ref = (np.array([1.0], np.float32), "bfloat16")
    cand = (np.array([1.0 + 2**-7], np.float32), "bfloat16")
    verdict = compare_values(ref, cand, function="exp")
    assert verdict.passed
    assert verdict.max_ulp == 1
    far = (np.array([1.0 + 3 * 2**-7], np.float32), "bfloat16")
    assert compare_values(ref, far, function="exp").kind == "value"
    assert compare_values(ref, np.array([1.0], np.float32)).kind == "dtype"


def test_blame_of_a_reduction_uses_the_exact_sum() -> None:
    x = np.full(1000, 0.1, np.float32)
    truth = np.float32(math.fsum(x.astype(np.float64)))
    wrong = np.float32(truth * np.float32(1.01))
    verdict = compare_values(truth, wrong, function="sum", reduced=1000)
    assert verdict.kind == "value"
    judged = blame("sum", [x], {}, truth, wrong, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "oracle")
    ints = np.array([100, 100, 100], np.uint8)
    ref, cand = np.uint64(300), np.uint64(44)
    integer = blame("sum", [ints], {}, ref, cand, compare_values(ref, cand))
    assert (integer.side, integer.evidence) == ("candidate", "standard-rule")


def test_blame_is_undecided_without_evidence_and_for_a_pass() -> None:
    ref = np.array([1.0, 2.0])
    assert (
        blame("exp", [ref], {}, ref, ref, compare_values(ref, ref, function="exp")).side
        == "undecided"
    )
    weird = compare_values(ref, ref + 1, function="linalg.inv")
    judged = blame("linalg.inv", [ref], {}, ref, ref + 1, weird)
    assert (judged.side, judged.evidence) == ("undecided", "none")
    shape = compare_values(np.zeros((3, 4)), np.zeros((4, 3)), function="add")
    by_rule = blame(
        "add", [np.zeros((3, 1)), np.zeros(4)], {}, np.zeros((3, 4)), np.zeros((4, 3)), shape
    )
    assert (by_rule.side, by_rule.evidence) == ("candidate", "standard-rule")


def test_complex_results_are_blamed_by_the_complex_oracle() -> None:
    z = np.array([0.5 + 0.25j, 1 - 2j], np.complex64)
    good = np.exp(z.astype(np.complex128)).astype(np.complex64)
    bad = good.copy()
    bad.real[1] *= np.float32(1.0001)
    verdict = compare_values(good, bad, function="exp")
    assert verdict.kind == "value"
    judged = blame("exp", [z], {}, good, bad, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "oracle")
    swapped = blame("exp", [z], {}, bad, good, compare_values(bad, good, function="exp"))
    assert swapped.side == "reference"


def test_complex_products_are_judged_relative_to_their_magnitude() -> None:
    z = (3 * np.exp(1j * np.linspace(0, 3, 50))).astype(np.complex64)
    exact = (z.astype(np.complex128) ** 2).astype(np.complex64)
    assert compare_values(z * z, exact, function="multiply").passed
    assert not compare_values(z * z, exact * np.complex64(1.001), function="multiply").passed


def test_an_approximation_to_pi_is_judged_within_the_bound() -> None:
    y = np.array([1.0], np.float32)
    x = np.array([-np.inf], np.float32)
    right = np.array([np.pi], np.float32)
    wrong = np.array([3.0], np.float32)
    verdict = compare_values(right, wrong, function="atan2")
    judged = blame("atan2", [y, x], {}, right, wrong, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "special-case")


def test_importing_the_value_model_loads_no_oracle_and_no_backend() -> None:
    import subprocess
    import sys

    code = (
        "import sys, diffcheck.values\n"
        "print(sorted(m for m in ('mpmath', 'diffcheck.adapters', 'torch', 'mlx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


_DTYPES = ["bool", "int8", "uint16", "int64", "float16", "float32", "float64", "complex64"]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_one_changed_element_is_found_at_its_index(data: st.DataObject) -> None:
    from hypothesis.extra import numpy as hnp

    dtype = np.dtype(data.draw(st.sampled_from(_DTYPES)))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    array = data.draw(hnp.arrays(dtype, shape))
    exact = Bound("exact", None, None, "property")
    assert compare_values(array, array.copy(), bound=exact, signed_zero=True).passed
    flat = array.reshape(-1).copy()
    k = data.draw(st.integers(0, flat.size - 1))
    if dtype == np.bool_:
        flat[k] = not flat[k]
    else:
        raw = flat.view(np.uint8)
        bit = data.draw(st.integers(0, dtype.itemsize * 8 - 1))
        raw[k * dtype.itemsize + bit // 8] ^= np.uint8(1 << (bit % 8))
    changed = flat.reshape(array.shape)
    verdict = compare_values(array, changed, bound=exact, signed_zero=True)
    before, after = array.reshape(-1)[k], flat[k]
    parts = (
        [(before.real, after.real), (before.imag, after.imag)]
        if dtype.kind == "c"
        else [(before, after)]
    )
    changed_part = (
        next((b, a) for b, a in parts if b.tobytes() != a.tobytes()) if dtype.kind in "fc" else None
    )
    if changed_part is not None and np.isnan(changed_part[0]) and np.isnan(changed_part[1]):
        assert verdict.passed  # a NaN whose payload changed is still NaN: the standard's view
        return
    assert not verdict.passed
    assert verdict.first is not None
    expected = tuple(int(i) for i in np.unravel_index(k, array.shape)) if array.shape else ()
    assert verdict.first.index == expected


@pytest.mark.parametrize(
    "args",
    [
        [np.ones(3, np.float32), "float32"],
        [np.ones(3, np.float32), None, (2, 3)],
        [np.ones(3, np.float32), 2.5],
        [],
    ],
)
def test_blame_takes_any_arguments_without_crashing(args: list[Any]) -> None:
    ref = np.ones(3, np.float32)
    for cand in (np.ones(3, np.float64), ref + 1, np.ones(4, np.float32), np.int8(1)):
        for function in ("astype", "add", "exp", "sum", "reshape", "cumulative_sum"):
            verdict = compare_values(ref, cand, function=function)
            assert not verdict.passed
            judged = blame(function, args, {"axis": 0}, ref, cand, verdict)
            assert judged.side in ("candidate", "reference", "both", "undecided")
    assert promote(["float32", "str96"]) is None


_FUNCTIONS = [
    "add",
    "exp",
    "multiply",
    "sum",
    "cumulative_sum",
    "argmax",
    "bitwise_left_shift",
    "linalg.vecdot",
    "atan2",
    "unique_counts",
    "sort",
    None,
]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_compare_and_blame_never_raise_on_any_pair_of_arrays(data: st.DataObject) -> None:
    from hypothesis.extra import numpy as hnp

    def array() -> Any:
        dtype = np.dtype(data.draw(st.sampled_from(_DTYPES)))
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
        return data.draw(hnp.arrays(dtype, shape))

    function = data.draw(st.sampled_from(_FUNCTIONS))
    reference, candidate = array(), array()
    args = [array() for _ in range(data.draw(st.integers(0, 2)))]
    kwargs = data.draw(st.sampled_from([{}, {"axis": 0}, {"axis": -1, "keepdims": True}]))
    with np.errstate(all="ignore"):
        verdict = compare_values(reference, candidate, function=function)
        assert verdict.status in ("passed", "failed")
        if not verdict.passed:
            assert verdict.kind is not None
            judged = blame(function or "exp", args, kwargs, reference, candidate, verdict)
            assert judged.side in ("candidate", "reference", "both", "undecided")


def test_reductions_over_nan_and_infinities_follow_the_standard_and_ieee() -> None:
    x = np.array([1.0, np.nan, 3.0], np.float32)
    right, wrong = np.float32(np.nan), np.float32(3.0)
    verdict = compare_values(right, wrong, function="max")
    assert verdict.kind == "nan"
    judged = blame("max", [x], {}, right, wrong, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "special-case")
    infinities = np.array([np.inf, -np.inf, 1.0], np.float32)
    summed = blame(
        "sum",
        [infinities],
        {},
        np.float32(np.inf),
        np.float32(np.nan),
        compare_values(np.float32(np.inf), np.float32(np.nan), function="sum"),
    )
    assert (summed.side, summed.evidence) == ("reference", "special-case")
    rows = np.array([[1.0, 5.0], [7.0, 2.0]], np.float32)
    ref, cand = np.array([5.0, 7.0], np.float32), np.array([5.0, 2.0], np.float32)
    picked = blame("max", [rows], {"axis": 1}, ref, cand, compare_values(ref, cand, function="max"))
    assert (picked.side, picked.evidence) == ("candidate", "standard-rule")
    assert "[1]" in picked.why


def test_several_outputs_report_their_dtypes_in_order() -> None:
    ref = (np.array([1.0], np.float32), np.array([2], np.int64))
    verdict = compare_values(ref, (ref[0].copy(), ref[1].copy()))
    assert verdict.dtype == "float32, int64"
    assert "float32, int64" in str(verdict)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_narrow_ulp_distance_is_the_difference_of_the_ordered_integers(dtype: str) -> None:
    from diffcheck.values.ulp import ordered

    rng = np.random.default_rng(7)
    width = 16 if dtype in ("float16", "bfloat16") else 32
    patterns = rng.integers(0, 2**width, (2, 4000), dtype=np.uint64)
    specials = np.array([0, 0x8000 << (width - 16), 1, 0x7C00, 0x7F80 << 16], dtype=np.uint64)
    patterns[:, : specials.size] = specials  # both zeros, the smallest subnormal, infinities
    patterns[1, ::3] = patterns[0, ::3]  # some equal pairs
    if dtype == "bfloat16":
        a, b = ((p.astype(np.uint32) << 16).view(np.float32) for p in patterns)
    else:
        view = np.uint16 if width == 16 else np.uint32
        a, b = (p.astype(view).view(np.dtype(dtype)) for p in patterns)
    expected = np.abs(ordered(a, dtype).astype(np.int64) - ordered(b, dtype)).astype(np.float64)
    assert np.array_equal(ulp_distance(a, b, dtype), expected)


# --- blame, read whole: side, why and evidence ---


NO_VOTE = (
    "no special case, oracle or standard rule decides this {kind} failure of {fn}, and no "
    "further backend voted"
)


def test_two_agreeing_sides_are_not_blamed() -> None:
    x = np.array([0.5], np.float32)
    passed = compare_values(np.exp(x), np.exp(x), function="exp")
    assert blame("exp", [x], {}, np.exp(x), np.exp(x), passed) == Blame(
        "undecided", "the two sides agree: nothing to blame", "none"
    )


def test_raising_on_a_python_scalar_of_another_kind_is_allowed() -> None:
    ints = np.array([1, 2], np.int32)
    judged = blame("add", [ints, 1.5], {}, np.array([2.5, 3.5]), None, failed_call("raises", "no"))
    assert judged == Blame(
        "undecided",
        "the standard leaves add of a Python scalar with arrays of another kind open, so "
        "raising is allowed",
        "standard-rule",
    )


@pytest.mark.parametrize("function", ["sum", "argmax"])
def test_a_dtype_failure_is_judged_by_the_default_integer_given(function: str) -> None:
    # sum of int8 gives the default integer, argmax the default index dtype: int32 here
    x = np.array([1, 2], np.int8)
    ref, cand = np.array(1, np.int32), np.array(1, np.int64)
    verdict = compare_values(ref, cand, function=function, expected_dtype="int32")
    assert verdict.kind == "dtype"
    assert blame(function, [x], {}, ref, cand, verdict, default_int="int32") == Blame(
        "candidate",
        f"the standard requires {function}(int8) -> int32; reference returns int32, "
        "candidate int64",
        "standard-rule",
    )


def test_a_value_failure_of_a_later_output_is_judged_on_that_output() -> None:
    matrix = np.array([[2.0, 0.0], [0.0, 3.0]])
    ref = (np.array(1.0), np.array(np.log(6.0)))
    cand = (np.array(1.0), np.array(np.log(6.0) + 1.0))
    verdict = compare_values(ref, cand, function="linalg.slogdet")
    assert verdict.first is not None
    assert verdict.first.output == 1
    assert blame("linalg.slogdet", [matrix], {}, ref, cand, verdict) == Blame(
        "undecided", NO_VOTE.format(kind="value", fn="linalg.slogdet"), "none"
    )


def test_a_bfloat16_value_is_judged_in_bfloat16_ulps() -> None:
    # exp(0.5) = 1.6487...: 1.6484375 is its nearest bfloat16, 1.671875 is 3 bfloat16 ULP
    # above that (within 3 ULP only in bfloat16: thousands of float32 ULP off either way).
    x = (np.array([0.5], np.float32), "bfloat16")
    ref = (np.array([1.6484375], np.float32), "bfloat16")
    cand = (np.array([1.671875], np.float32), "bfloat16")
    verdict = compare_values(ref, cand, function="exp")
    assert verdict.kind == "value"
    judged = blame("exp", [x], {}, ref, cand, verdict)
    assert (judged.side, judged.evidence) == ("candidate", "oracle")


def test_a_side_that_raised_where_the_standard_defines_no_result_is_not_voted_against() -> None:
    ints = np.array([1, 2], np.int32)
    voters = [("other", lambda a: np.sin(a))]
    verdict = failed_call("raises", "TypeError: sin of integers")
    judged = blame("sin", [ints], {}, np.sin(ints), None, verdict, voters=voters)
    assert judged == Blame("undecided", NO_VOTE.format(kind="raises", fn="sin"), "none")


def test_a_value_failure_without_one_sides_output_blames_neither() -> None:
    x = np.array([0.5, 1.0])
    verdict = compare_values(np.exp(x), np.exp(x) + 1.0, function="exp")
    voters = [("other", lambda a: np.exp(a))]
    judged = blame("exp", [x], {}, None, np.exp(x) + 1.0, verdict, voters=voters)
    assert judged == Blame("undecided", NO_VOTE.format(kind="value", fn="exp"), "none")


def test_a_vote_follows_the_functions_signed_zero_policy() -> None:
    # linalg results leave the signs of zeros open: the voter agrees with the reference
    a, b = np.eye(2), np.array([1.0, 0.0])
    ref, cand = np.array([1.0, 0.0]), np.array([2.0, 0.0])
    verdict = compare_values(ref, cand, function="linalg.solve")
    voters = [("other", lambda *_: np.array([1.0, -0.0]))]
    assert blame("linalg.solve", [a, b], {}, ref, cand, verdict, voters=voters) == Blame(
        "candidate",
        "no independent rule decides; vote of further backends (last resort): with the "
        "reference: other; with the candidate: none",
        "vote",
    )
