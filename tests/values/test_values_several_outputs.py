"""Functions of several outputs: how many, each one's dtype and values, in order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from diffcheck.values import compare_values
from diffcheck.values.model import Bound, ValueVerdict

VALUES = np.array([1.0, 2.0], np.float32)
COUNTS = np.array([1, 3], np.int64)
WANTED = ("float32", "int64")  # unique_counts of float32 input, by the standard
SEVERAL = Bound("exact", None, None, "several outputs")


def _fields(verdict: ValueVerdict) -> tuple[Any, ...]:
    return (verdict.status, verdict.kind, verdict.reason, verdict.dtype)


def test_a_wrong_number_of_outputs_is_a_shape_failure_held_to_no_bound() -> None:
    one = compare_values((VALUES, COUNTS), VALUES, function="unique_counts")
    assert _fields(one) == (
        "failed",
        "shape",
        "reference returns 2 outputs, candidate returns one array",
        None,
    )
    assert (one.bound, one.first, one.worst) == (SEVERAL, None, None)
    three = compare_values((VALUES, COUNTS), [VALUES, COUNTS, COUNTS], function="unique_counts")
    assert _fields(three) == ("failed", "shape", "reference returns 2 outputs, candidate 3", None)
    assert (three.bound, three.first, three.worst) == (SEVERAL, None, None)


def test_no_outputs_on_both_sides_pass() -> None:
    verdict = compare_values((), (), function="unique_counts")
    assert _fields(verdict) == ("passed", None, None, None)
    assert verdict.bound == SEVERAL


def test_passing_outputs_name_their_dtypes_in_order() -> None:
    verdict = compare_values((VALUES, COUNTS), (VALUES, COUNTS.copy()), function="unique_counts")
    assert _fields(verdict) == ("passed", None, None, "float32, int64")
    assert verdict.bound == Bound("exact", None, None, "int64 result: exact equality")
    single = compare_values((VALUES,), (VALUES.copy(),), function="unique_counts")
    assert _fields(single) == ("passed", None, None, "float32")


def test_the_failing_output_is_named_with_its_own_bound() -> None:
    wrong = np.array([1, 4], np.int64)
    verdict = compare_values((VALUES, COUNTS), (VALUES, wrong), function="unique_counts")
    assert _fields(verdict) == (
        "failed",
        "value",
        "1 of 2 int64 elements differ (exact equality required); first at [1]: reference 3, "
        "candidate 4",
        "int64",
    )


@pytest.mark.parametrize(
    ("ref", "cand", "ref_wanted", "cand_wanted", "reason", "dtype"),
    [
        (
            COUNTS,
            COUNTS.astype(np.int32),
            WANTED,
            WANTED,
            "output 1 dtype differs: reference int64, candidate int32; the standard requires int64",
            "int64",
        ),
        (
            COUNTS.astype(np.int32),
            COUNTS.astype(np.int32),
            WANTED,
            WANTED,
            "output 1 both sides return int32, but the standard requires int64",
            "int32",
        ),
        (
            COUNTS.astype(np.int32),
            COUNTS.astype(np.int32),
            WANTED,
            ("float32", None),
            "output 1 both sides return int32, but the standard requires int64 of the reference "
            "and no fixed dtype of the candidate (each side's declared defaults)",
            "int32",
        ),
        (
            COUNTS.astype(np.int32),
            COUNTS,
            ("float32", None),
            WANTED,
            "output 1 dtype differs: reference int32, candidate int64; the standard requires no "
            "fixed dtype of the reference and int64 of the candidate (each side's declared "
            "defaults)",
            "int32",
        ),
        (
            COUNTS,
            COUNTS.astype(np.int32),
            None,
            None,
            "output 1 dtype differs: reference int64, candidate int32",
            "int64",
        ),
    ],
)
def test_an_output_of_another_dtype_names_the_rule_each_side_is_held_to(
    ref: Any, cand: Any, ref_wanted: Any, cand_wanted: Any, reason: str, dtype: str
) -> None:
    verdict = compare_values(
        (VALUES, ref),
        (VALUES, cand),
        function="unique_counts",
        expected_dtype=ref_wanted,
        candidate_expected_dtype=cand_wanted,
    )
    assert _fields(verdict) == ("failed", "dtype", reason, dtype)
    assert (verdict.first, verdict.worst) == (None, None)


def test_a_tagged_array_is_one_output() -> None:
    """``(array, "bfloat16")`` is one array with its dtype's name, not two outputs."""
    verdict = compare_values((VALUES, COUNTS), (VALUES, "bfloat16"), function="unique_counts")
    assert _fields(verdict) == (
        "failed",
        "shape",
        "reference returns 2 outputs, candidate returns one array",
        None,
    )


def test_each_output_is_held_to_the_functions_bound_and_the_signed_zero_asked_for() -> None:
    zeros = np.array([-0.0, 1.0], np.float32)
    signs = np.array([0.0, 1.0], np.float32)
    assert compare_values((zeros, COUNTS), (signs, COUNTS), function="unique_counts").kind == (
        "signed-zero"
    )
    loose = compare_values(
        (zeros, COUNTS), (signs, COUNTS), function="unique_counts", signed_zero=False
    )
    assert _fields(loose) == ("passed", None, None, "float32, int64")
    off = compare_values((VALUES + 1, COUNTS), (VALUES, COUNTS), function="unique_counts")
    assert off.kind == "value"
    assert str(off.bound) == (
        "NMSE < 1e-07 (unique_counts: NMSE bucket of the storage precision float32 (< 1e-07))"
    )
