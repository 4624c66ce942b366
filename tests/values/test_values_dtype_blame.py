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
