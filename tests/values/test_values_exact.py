"""Answers the standard fixes exactly decide blame before any oracle or vote."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.values import blame, compare_values

#: The empty reductions, with Python's own answer for no terms.
EMPTY = {"prod": math.prod([]), "sum": sum([]), "all": all([]), "any": any([])}


def _judge(function: str, args: list[Any], ref: Any, cand: Any, **kwargs: Any) -> str:
    verdict = compare_values(ref, cand, function=function)
    assert not verdict.passed, "the two sides must differ for blame to judge"
    dtype_args = kwargs.pop("dtype_args", None)
    return blame(function, args, kwargs, ref, cand, verdict, dtype_args=dtype_args).side


@settings(max_examples=40, deadline=None)
@given(
    function=st.sampled_from(sorted(EMPTY)),
    shape=st.sampled_from([(0,), (2, 0), (0, 3), (3, 0, 2)]),
    wrong_side=st.sampled_from(["reference", "candidate"]),
)
def test_an_empty_reduction_has_the_standards_value(
    function: str, shape: tuple[int, ...], wrong_side: str
) -> None:
    dtype = "bool" if function in ("all", "any") else "int64"
    x = np.zeros(shape, dtype)
    axis = next(i for i, n in enumerate(shape) if n == 0)
    out_shape = tuple(n for i, n in enumerate(shape) if i != axis)
    right = np.full(out_shape, EMPTY[function], dtype)
    wrong = np.full(out_shape, not EMPTY[function] if dtype == "bool" else 7, dtype)
    if right.size == 0:
        return  # nothing to compare: no verdict to judge
    ref, cand = (wrong, right) if wrong_side == "reference" else (right, wrong)
    assert _judge(function, [x], ref, cand, axis=axis) == wrong_side


def test_can_cast_follows_the_promotion_table() -> None:
    side = _judge(
        "can_cast",
        [],
        np.asarray(True),
        np.asarray(False),
        dtype_args={"from_": "int16", "to": "int8"},
    )
    assert side == "reference"
    side = _judge(
        "can_cast",
        [],
        np.asarray(True),
        np.asarray(False),
        dtype_args={"from_": "int8", "to": "int16"},
    )
    assert side == "candidate"


def test_isin_of_an_empty_set_inverted_is_true() -> None:
    args = [np.asarray(0, np.int64), np.zeros(0, np.int64)]
    side = _judge("isin", args, np.asarray(True), np.asarray(False), invert=True)
    assert side == "candidate"


@pytest.mark.parametrize(
    ("value", "right", "wrong"),
    [
        (2.5 + 3.5j, 2 + 4j, 3 + 4j),  # half to even, each component
        (-0.5 - 1.5j, -0.0 - 2j, -1 - 2j),
    ],
)
def test_complex_round_is_per_component_half_to_even(
    value: complex, right: complex, wrong: complex
) -> None:
    x = np.asarray([value], np.complex128)
    got_right, got_wrong = np.asarray([right]), np.asarray([wrong])
    assert _judge("round", [x], got_wrong, got_right) == "reference"
    assert _judge("round", [x], got_right, got_wrong) == "candidate"


def test_a_determinant_with_an_exact_answer_blames_the_side_off_it() -> None:
    m = np.asarray([[2.0, 1.0, 0.5], [1.0, 3.0, -0.25], [0.125, 0.0, 4.0]], np.float32)
    exact = 2 * (12 - 0) - 1 * (4 + 0.25 * 0.125) + 0.5 * (0 - 3 * 0.125)
    good = np.asarray(exact, np.float32)
    bad = np.asarray(exact * (1 + 1e-3), np.float32)
    assert _judge("linalg.det", [m], bad, good) == "reference"
    assert _judge("linalg.det", [m], good, bad) == "candidate"


@pytest.mark.parametrize(("source", "target"), [("int8", "float64"), ("bool", "complex64")])
def test_can_cast_across_kinds_the_table_leaves_open_is_not_a_finding(
    source: str, target: str
) -> None:
    from diffcheck.adapters.numpy_ref import NumpyAdapter
    from diffcheck.search.recipes import SpecCall
    from diffcheck.values.call import compare_call

    pytest.importorskip("array_api_strict")
    from diffcheck.adapters import resolve

    call = SpecCall("can_cast", dtypes=(("from_", source), ("to", target)))
    verdict = compare_call(
        call, [], NumpyAdapter(), resolve("array_api_strict"), function="can_cast"
    )
    assert verdict.passed, str(verdict)
    assert "not a finding" in (verdict.reason or "")
