"""Zero signs the standard leaves open, and the floor_divide results it lets a library choose.

Outside its special cases the standard sets no accuracy for complex results and does not
precisely define the approximate real functions (``exp``, ``log1p``, ``logaddexp``...), so
two zeros of opposite signs there are `undecided` with evidence `standard-rule`; correctly
rounded operations and the special cases keep deciding theirs. ``floor_divide`` of finite
operands may be the floor of the rounded quotient or Python's floor of the exact one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.values import blame, compare_values
from diffcheck.values.may import either_allowed


def _both_ways(function: str, args: list[Any], ref: Any, cand: Any) -> list[tuple[str, str]]:
    """The blame of the two zeros with each side holding each zero."""
    judged = []
    for r, c in ((ref, cand), (cand, ref)):
        verdict = compare_values(r, c, function=function)
        assert verdict.kind == "signed-zero", verdict
        found = blame(function, args, {}, r, c, verdict)
        judged.append((found.side, found.evidence))
    return judged


OPEN = [("undecided", "standard-rule")] * 2


@settings(max_examples=25, deadline=None)
@given(
    st.floats(float(np.float32(1e-38)), float(np.float32(3e-23)), width=32),
    st.sampled_from([1.0, -1.0]),
    st.sampled_from([0.0, -0.0]),
)
def test_a_complex_zero_part_too_small_for_the_dtype_has_no_required_sign(
    b: float, sign: float, real: float
) -> None:
    """log1p(±0 + bj) has the real part log|1 + bj| ~ b**2/2, far below float32's least
    subnormal: a bound relative to |z| admits either sign there (seeds 1 and 2 of mlx:cpu
    blamed MLX's -0 by rounding)."""
    z = np.asarray([complex(real, sign * b)], np.complex64)
    with np.errstate(all="ignore"):
        ref = np.log1p(z)
    assert ref.real[0] == 0
    cand = ref.copy()
    cand.real = -ref.real
    assert _both_ways("log1p", [z], ref, cand) == OPEN


def test_a_complex_products_zero_part_has_no_required_sign() -> None:
    """(1 + 6e-45j)(1e-19 + 0j) in complex64: the imaginary part 5.6e-64 rounds to zero."""
    a = np.asarray([complex(1.0, 6e-45)], np.complex64)
    b = np.asarray([complex(1e-19, 0.0)], np.complex64)
    ref = np.asarray([complex(np.float32(1e-19), 0.0)], np.complex64)
    cand = np.asarray([complex(np.float32(1e-19), -0.0)], np.complex64)
    assert _both_ways("multiply", [a, b], ref, cand) == OPEN


@settings(max_examples=25, deadline=None)
@given(st.floats(-1070.0, -746.0))
def test_a_real_approximation_rounding_to_zero_has_no_required_sign(x: float) -> None:
    """exp(x) below float64's least subnormal: exp is an "implementation-dependent
    approximation", and a bound of 1 ULP admits a nonzero value of either sign there."""
    arg = np.asarray([x])
    assert _both_ways("exp", [arg], np.asarray([0.0]), np.asarray([-0.0])) == OPEN


def test_logaddexp_of_minus_infinity_and_a_zero_has_no_required_sign() -> None:
    """logaddexp(-inf, -0.0) is log(1) = 0 exactly; no special case names it (seed 4)."""
    for zero in (0.0, -0.0):
        for args in ([-np.inf, zero], [zero, -np.inf]):
            arrays = [np.asarray([a]) for a in args]
            assert _both_ways("logaddexp", arrays, np.asarray([0.0]), np.asarray([-0.0])) == OPEN


@settings(max_examples=25, deadline=None)
@given(st.floats(-1e300, 1e300).filter(lambda v: v != 0), st.booleans())
def test_logaddexp_of_minus_infinity_is_the_other_argument(x: float, first: bool) -> None:
    """The oracle's limit: logaddexp(-inf, x) = x exactly, so a value off it is blamed."""
    args = [np.asarray([-np.inf]), np.asarray([x])]
    args = args if first else args[::-1]
    right = np.asarray([x])
    wrong = np.asarray([x + 8 * np.spacing(x)])  # 8 ULP off, subnormal x too
    found = blame(
        "logaddexp", args, {}, right, wrong, compare_values(right, wrong, function="logaddexp")
    )
    assert (found.side, found.evidence) == ("candidate", "oracle"), found


def test_zero_signs_of_correctly_rounded_operations_and_special_cases_stay_decided() -> None:
    tiny, small = np.float32(6e-45), np.float32(1e-19)
    pos, neg = np.asarray([0.0], np.float32), np.asarray([-0.0], np.float32)
    for function, args, right, wrong, evidence in (
        # IEEE 754: -6e-45 * 1e-19 rounds to -0
        ("multiply", [np.asarray([-tiny]), np.asarray([small])], neg, pos, "oracle"),
        ("add", [np.asarray([2.5], np.float32), np.asarray([-2.5], np.float32)], pos, neg,
         "special-case"),  # x + (-x) is +0
        ("log", [np.asarray([1.0], np.float32)], pos, neg, "special-case"),  # log(1) is +0
        ("log1p", [np.asarray([-0.0], np.float32)], neg, pos, "special-case"),
    ):  # fmt: skip
        found = blame(
            function, args, {}, right, wrong, compare_values(right, wrong, function=function)
        )
        assert (found.side, found.evidence) == ("candidate", evidence), (function, found)


def _readings(a: np.float32, b: np.float32) -> tuple[float, float]:
    with np.errstate(all="ignore"):
        rounded = float(np.floor(np.divide(a, b)))
    exact = math.floor(Fraction(float(a)) / Fraction(float(b)))
    python = np.float32(exact)
    if int(python) > exact:
        python = np.nextafter(python, np.float32(-np.inf))
    return rounded, float(python)


@settings(max_examples=40, deadline=None)
@given(
    st.floats(-1e6, 1e6, width=32).filter(lambda v: abs(v) >= 1e-3),
    st.floats(float(np.float32(1e-9)), float(np.float32(1e-5)), width=32),
    st.sampled_from([1.0, -1.0]),
)
def test_floor_divide_may_floor_the_rounded_or_the_exact_quotient(
    a: float, b: float, sign: float
) -> None:
    """The standard "prefers floor division to match floor(divide(x1, x2))", while libraries
    "may choose to more strictly follow Python": where the two floors differ (MLX and
    NumPy on mlx:cpu seeds 1, 2 and 4) either is no finding; a third value still is."""
    x1, x2 = np.asarray([a], np.float32), np.asarray([sign * b], np.float32)
    rounded, python = _readings(x1[0], x2[0])
    if rounded == python:
        return
    ref, cand = np.asarray([python], np.float32), np.asarray([rounded], np.float32)
    assert either_allowed("floor_divide", [x1, x2], ref, cand)
    assert either_allowed("floor_divide", [x1, x2], cand, ref)
    off = np.nextafter(np.asarray([min(rounded, python)], np.float32), np.float32(-np.inf))
    assert either_allowed("floor_divide", [x1, x2], ref, off) is None


def test_floor_divide_rows_of_the_mlx_seeds_are_choices_alone() -> None:
    """Seed 1's row: NaN or infinity for an infinite dividend, -0 or -1 for an infinite
    divisor, and 12924918 (Python) or 12924919 (floor of the rounded quotient)."""
    f32 = np.float32
    x1 = np.asarray([-1.0, -np.inf, np.inf, -1e-45, 6.0], f32)
    x2 = np.asarray([-7.7369926e-08, -1.0, -0.99999994, np.inf, 4.0], f32)
    ref = np.asarray([12924918.0, np.nan, np.nan, -1.0, 1.0], f32)
    cand = np.asarray([12924919.0, np.inf, -np.inf, -0.0, 1.0], f32)
    assert either_allowed("floor_divide", [x1, x2], ref, cand)
    cand[-1] = 2.0  # 6 // 4 is 1 by either reading
    assert either_allowed("floor_divide", [x1, x2], ref, cand) is None


class _FloorOfDivide:
    """NumPy whose floor_divide is floor(divide(x1, x2)) (MLX's), with a wrong value planted
    at ``spoil`` (an index) where given."""

    def __init__(self, spoil: int | None) -> None:
        self.spoil = spoil

    def __getattr__(self, name: str) -> object:
        import array_api_compat.numpy as cnp

        return getattr(cnp, name)

    def floor_divide(self, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = np.floor(np.divide(x1, x2))
        if self.spoil is not None:
            out[self.spoil] += 7
        return out


def _floor_adapter(spoil: int | None) -> Any:
    from diffcheck.adapters.numpy_ref import NumpyAdapter

    class FloorOfDivideAdapter(NumpyAdapter):
        name = "floor-of-divide"

        def __init__(self) -> None:
            super().__init__(None)
            self._namespace = _FloorOfDivide(spoil)

        def namespace(self) -> object:
            return self._namespace

    return FloorOfDivideAdapter()


def test_a_floor_divide_row_is_judged_by_its_elements_outside_the_choices() -> None:
    """An allowed NaN beside a wrong value: the finding is the value, blamed by the rule
    (mlx:cpu's rows were reported at the NaN, undecided without a rule)."""
    from diffcheck.adapters.numpy_ref import NumpyAdapter
    from diffcheck.values.call import compare_call

    f32 = np.float32
    x1 = np.asarray([-np.inf, -1.0, 6.0, -1e-45], f32)
    x2 = np.asarray([-1.0, -7.7369926e-08, 4.0, np.inf], f32)
    fine = compare_call("floor_divide", [x1, x2], NumpyAdapter(), _floor_adapter(None))
    assert fine.passed, str(fine)
    assert "not a finding" in (fine.reason or "")
    spoiled = compare_call("floor_divide", [x1, x2], NumpyAdapter(), _floor_adapter(2))
    assert spoiled.kind == "value", str(spoiled)
    assert spoiled.first is not None
    assert spoiled.first.index == (2,)
    assert spoiled.blame is not None
    assert (spoiled.blame.side, spoiled.blame.evidence) == ("candidate", "standard-rule")
    assert "floor_divide(6.0, 4.0)" in spoiled.blame.why


def test_floor_divide_choices_of_zero_dimensional_arrays() -> None:
    """A 0-d row (the search's shrunk examples are often 0-d): np.nonzero refuses those."""
    from diffcheck.values.may import without_choices

    f32 = np.float32
    args = [np.asarray(f32(-np.inf)), np.asarray(f32(-1.0))]
    ref, cand = np.asarray(f32(np.nan)), np.asarray(f32(np.inf))
    assert either_allowed("floor_divide", args, ref, cand)
    patched = without_choices("floor_divide", args, ref, cand)
    assert patched is not None
    assert np.isnan(patched)
    assert either_allowed("floor_divide", args, ref, np.asarray(f32(0.0))) is None
