"""compare(mode="values") on a real Array API library: dtypes survive the round trip."""

from __future__ import annotations

import numpy as np
import pytest

import diffcheck

pytest.importorskip("array_api_strict", reason="these tests run on array-api-strict")
STRICT = "array_api_strict"


def test_integer_shifts_keep_int32_and_pass_on_a_faithful_backend() -> None:
    x = np.array([1, 3, -5, 7], np.int32)
    counts = np.array([1, 33, 31, 40], np.int32)
    verdict = diffcheck.compare("bitwise_left_shift", x, counts, candidate=STRICT, mode="values")
    assert verdict.passed, str(verdict)
    assert verdict.dtype == "int32"


def test_a_uint8_cumulative_sum_is_compared_in_its_standard_dtype() -> None:
    x = np.array([200, 100, 7], np.uint8)
    verdict = diffcheck.compare("cumulative_sum", x, candidate=STRICT, mode="values")
    assert verdict.passed, str(verdict)
    assert verdict.dtype == "uint64"


def test_index_dtypes_and_bool_results_are_compared_faithfully() -> None:
    x = np.array([[0.5, -1.0, 3.0], [2.0, 2.0, -0.0]], np.float32)
    index = diffcheck.compare("argmax", x, candidate=STRICT, mode="values", kwargs={"axis": 1})
    assert index.passed, str(index)
    assert index.dtype == "int64"
    flags = diffcheck.compare("signbit", x, candidate=STRICT, mode="values")
    assert flags.passed, str(flags)
    assert flags.dtype == "bool"


def test_a_candidate_error_from_a_real_library_is_a_raises_verdict() -> None:
    # array-api-strict refuses mixed integer and floating operands, which NumPy promotes.
    verdict = diffcheck.compare(
        "add", np.ones(3, np.int32), np.ones(3, np.float32), candidate=STRICT, mode="values"
    )
    assert verdict.kind == "raises"
    assert verdict.blame is not None
    assert verdict.blame.side == "undecided"  # the standard leaves int + float open


def test_bfloat16_inputs_are_rounded_once_and_compared_in_bfloat16() -> None:
    pytest.importorskip("torch", reason="a bfloat16 reference needs torch")
    pytest.importorskip("mlx.core", reason="the bfloat16 candidate is MLX")
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    verdict = diffcheck.compare(
        "exp", (x, "bfloat16"), reference="torch:cpu", candidate="mlx:cpu", mode="values"
    )
    assert verdict.dtype == "bfloat16"
    assert "bfloat16" in verdict.bound.provenance
    assert verdict.passed, str(verdict)


def test_a_dtype_outside_the_standard_that_a_side_lacks_is_not_blamed() -> None:
    verdict = diffcheck.compare(
        "exp", (np.ones(4, np.float32), "bfloat16"), candidate=STRICT, mode="values"
    )
    assert verdict.kind == "missing"
    assert "bfloat16" in (verdict.reason or "")
    assert verdict.blame is not None
    assert verdict.blame.side == "undecided"


def test_a_python_scalar_of_another_kind_may_be_refused() -> None:
    x = np.array([1, 2, 127], np.int8)
    same_kind = diffcheck.compare("add", x, 1, candidate=STRICT, mode="values")
    assert same_kind.passed, str(same_kind)
    assert same_kind.dtype == "int8"
    refused = diffcheck.compare("add", x, 1.5, candidate=STRICT, mode="values")
    assert refused.kind == "raises"
    assert refused.blame is not None
    assert refused.blame.side == "undecided"
