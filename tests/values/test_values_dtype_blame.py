"""Blame for a result dtype: the standard's rule, each side held to its own declared defaults."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from diffcheck.values import blame, compare_values
from diffcheck.values.defaults import DefaultDtypes

X = np.array([1, 2, 3], np.int8)
F = np.array([1.0, 2, 2, 2], np.float32)
OWN = (DefaultDtypes(), DefaultDtypes(integral="int32"))  # the candidate's int default: int32


def _judged(
    function: str, args: list[Any], kwargs: dict[str, Any], r: Any, c: Any, **more: Any
) -> tuple[str, str, str]:
    verdict = compare_values(r, c, function=function)
    judged = blame(function, args, kwargs, r, c, verdict, **more)
    return judged.side, judged.evidence, judged.why


def _int(dtype: str) -> Any:
    return np.asarray(np.dtype(dtype).type(6))


@pytest.mark.parametrize(
    ("kwargs", "ref", "cand", "why"),
    [
        (
            {},
            "int64",
            "int8",
            "the standard requires sum(int8) -> int64; reference returns int64, candidate int8",
        ),
        (
            {"dtype": "int16"},
            "int16",
            "int64",
            "the standard requires sum(int8) -> int16; reference returns int16, candidate int64",
        ),
    ],
)
def test_a_wrong_result_dtype_is_blamed_by_the_standards_rule(
    kwargs: dict[str, Any], ref: str, cand: str, why: str
) -> None:
    assert _judged("sum", [X], kwargs, _int(ref), _int(cand)) == ("candidate", "standard-rule", why)
    assert _judged("sum", [X], kwargs, _int(cand), _int(ref))[0] == "reference"


def test_each_side_is_held_to_its_own_declared_default() -> None:
    # Both return their own default integer: neither is wrong.
    assert _judged("sum", [X], {}, _int("int64"), _int("int32"), defaults=OWN)[0] == "undecided"
    assert _judged("sum", [X], {}, _int("int64"), _int("int8"), defaults=OWN) == (
        "candidate",
        "standard-rule",
        "the standard requires sum(int8) -> int64 of the reference and int32 of the candidate "
        "(each side's declared default dtypes); reference returns int64, candidate int8",
    )


def test_the_wrong_output_of_several_is_named() -> None:
    values = np.array([1.0, 2.0], np.float32)
    ref = (values, np.array([1, 3], np.int64))
    cand = (values, np.array([1, 3], np.int32))
    assert _judged("unique_counts", [F], {}, ref, cand) == (
        "candidate",
        "standard-rule",
        "the standard requires unique_counts(float32) output 1 -> int64; reference returns "
        "int64, candidate int32",
    )
    single = _judged("sum", [X], {}, _int("int64"), _int("int8"))[2]
    assert "output" not in single


I8 = np.array([1, 2], np.int8)
F32 = np.array([1.0, 2.0], np.float32)
BF16 = (F32, "bfloat16")  # bfloat16 travels widened to float32, its dtype beside it


@pytest.mark.parametrize(
    ("function", "args", "ref", "cand", "why"),
    [
        # a Python int takes the integer array's dtype
        (
            "add",
            [I8, 3],
            I8,
            I8.astype(np.int16),
            "the standard requires add(int8) -> int8; reference returns int8, candidate int16",
        ),
        # each output is judged; the count of outputs follows the call
        (
            "broadcast_arrays",
            [I8, F32],
            (I8, F32),
            (I8, F32.astype(np.float64)),
            "the standard requires broadcast_arrays(int8, float32) output 1 -> float32; "
            "reference returns float32, candidate float64",
        ),
        (
            "unstack",
            [I8[None]],
            (I8,),
            (I8.astype(np.int16),),
            "the standard requires unstack(int8) -> int8; reference returns int8, candidate int16",
        ),
        # bfloat16, held by name
        (
            "add",
            [BF16, BF16],
            BF16,
            F32,
            "the standard requires add(bfloat16, bfloat16) -> bfloat16; reference returns "
            "bfloat16, candidate float32",
        ),
    ],
)
def test_the_side_with_the_wrong_dtype_is_named_with_the_rule(
    function: str, args: list[Any], ref: Any, cand: Any, why: str
) -> None:
    assert _judged(function, args, {}, ref, cand) == ("candidate", "standard-rule", why)


def test_a_side_whose_default_integer_is_no_integer_dtype_is_held_to_no_sum_dtype() -> None:
    # The standard's rule for sum of int8 needs an integer default; without one it is open.
    odd = (DefaultDtypes(), DefaultDtypes(integral="float32"))
    assert _judged("sum", [X], {}, _int("int64"), _int("int8"), defaults=odd)[:2] == (
        "undecided",
        "none",
    )
    swapped = (odd[1], odd[0])
    assert _judged("sum", [X], {}, _int("int8"), _int("int64"), defaults=swapped)[:2] == (
        "undecided",
        "none",
    )


@pytest.mark.parametrize(
    ("args", "ref", "cand", "side", "why"),
    [
        (
            [I8, I8],
            I8,
            I8[None],
            "candidate",
            "the standard requires shape (2,) from inputs [(2,), (2,)]; reference (2,), "
            "candidate (1, 2)",
        ),
        (
            [I8, I8],
            I8[None],
            I8,
            "reference",
            "the standard requires shape (2,) from inputs [(2,), (2,)]; reference (1, 2), "
            "candidate (2,)",
        ),
        (
            [BF16, BF16],
            BF16,
            (F32[None], "bfloat16"),
            "candidate",
            "the standard requires shape (2,) from inputs [(2,), (2,)]; reference (2,), "
            "candidate (1, 2)",
        ),
        # a side returning outputs where one array is due is judged by its first output
        (
            [I8, I8],
            (I8,),
            I8[None],
            "candidate",
            "the standard requires shape (2,) from inputs [(2,), (2,)]; reference (2,), "
            "candidate (1, 2)",
        ),
        (
            [I8, I8],
            (),
            I8,
            "reference",
            "the standard requires shape (2,) from inputs [(2,), (2,)]; reference (0,), "
            "candidate (2,)",
        ),
        (
            [I8, I8],
            (I8, I8),
            I8,
            "undecided",
            "no special case, oracle or standard rule decides this shape failure of add, and no "
            "further backend voted",
        ),
    ],
)
def test_the_side_with_the_wrong_shape_is_named_with_the_rule(
    args: list[Any], ref: Any, cand: Any, side: str, why: str
) -> None:
    verdict = compare_values(ref, cand, function="add")
    assert verdict.kind == "shape", str(verdict)
    judged = blame("add", args, {}, ref, cand, verdict)
    assert (judged.side, judged.why) == (side, why)
