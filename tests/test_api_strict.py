"""The Python API must not pass by accident: truthiness, lossy casts, tolerance types, self-tests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffcheck
from diffcheck.adapters import resolve
from diffcheck.config import Check, make_check
from diffcheck.differ.tolerance import positive_tolerance, strict_tolerance
from diffcheck.errors import ConfigError
from diffcheck.fuzz import FuzzResult
from diffcheck.pytest_plugin import DiffcheckCompare

CANDIDATE = "array_api_strict"
pytest.importorskip("array_api_strict", reason="the API tests run on array-api-strict")


def _on_candidate(xp: Any) -> bool:
    return "array_api_strict" in xp.__name__


def wrong_on_candidate(xp: Any, x: Any) -> Any:
    return x * (1.01 if _on_candidate(xp) else 1.0)


X = np.linspace(1.0, 2.0, 64, dtype=np.float32)


# -- 1. truth means passed -------------------------------------------------------------------


def test_a_failed_nmse_verdict_is_false_and_assert_fails() -> None:
    verdict = diffcheck.compare(wrong_on_candidate, X, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert not verdict
    with pytest.raises(AssertionError):
        assert diffcheck.compare(wrong_on_candidate, X, candidate=CANDIDATE)
    with pytest.raises(AssertionError):
        assert diffcheck.diff(X, X * 1.01, max_nmse=1e-7)


def test_a_passed_verdict_is_true() -> None:
    assert diffcheck.compare(lambda xp, x: x * 2, X, candidate=CANDIDATE)
    assert diffcheck.diff(X, X, max_nmse=1e-7)


def test_a_failed_segment_makes_the_verdict_false() -> None:
    """A one-element gap between segments is judged: 10% off there fails, the rest passes."""
    wrong = X.copy()
    wrong[32] *= np.float32(1.1)
    whole = diffcheck.diff(X, wrong, max_nmse=1e-3)
    assert whole  # the aggregate alone hides it
    verdict = diffcheck.diff(X, wrong, max_nmse=1e-3, segments=[(0, 32), (33, 64)])
    assert verdict.status == "failed"
    assert not verdict
    failing = verdict.first_failing_segment
    assert failing is not None
    assert (failing.segment.start, failing.segment.stop) == (32, 33)


def test_a_failed_values_verdict_is_false() -> None:
    ints = np.arange(8, dtype=np.int32)

    def off_by_one(xp: Any, x: Any) -> Any:
        return x + (1 if _on_candidate(xp) else 0)

    verdict = diffcheck.compare(off_by_one, ints, candidate=CANDIDATE, mode="values")
    assert verdict.status == "failed"
    assert not verdict
    assert diffcheck.compare(lambda xp, x: x + 1, ints, candidate=CANDIDATE, mode="values")


def test_not_run_and_failed_fuzz_results_are_false() -> None:
    common = {"op": "gemm", "candidate": "x", "reference": "numpy", "precision": "f32"}
    for status in ("failed", "not_run"):
        result = FuzzResult(status, max_nmse=1e-7, examples=1, **common)  # type: ignore[arg-type]
        assert not result
    assert FuzzResult("passed", max_nmse=1e-7, examples=1, **common)  # type: ignore[arg-type]


def test_report_documents_are_true_only_for_a_pass_that_is_not_a_self_test() -> None:
    passed = diffcheck.run({"require_backend": CANDIDATE, "op": "gemm", "m": 8})
    assert passed
    assert passed.result is not None
    failed = passed.model_copy(
        update={"result": passed.result.model_copy(update={"status": "failed"})}
    )
    assert not failed
    not_run = diffcheck.run(make_check("array_api_strict:gpu", "gemm", m=8))
    assert not_run.result is not None
    assert not_run.result.status == "not_run"
    assert not not_run
    own = diffcheck.run(
        {"require_backend": "numpy:cpu", "op": "gemm", "m": 8}, allow_self_test=True
    )
    assert own.result is not None
    assert own.result.status == "passed"
    assert not own  # a self-test is never a pass


def test_a_check_built_directly_cannot_be_a_silent_self_test() -> None:
    base = make_check(CANDIDATE, "gemm", m=8)
    check = replace(base, require_backend="numpy:cpu", reference="numpy")
    with pytest.raises(ConfigError, match="cannot vouch for itself"):
        diffcheck.run(check)
    marked = Check(**{**check.__dict__, "allow_self_test": True})
    assert diffcheck.run(marked).coverage.count("SELF-TEST:") == 1


# -- 2. no lossy cast in nmse mode -----------------------------------------------------------


def test_integer_outputs_are_refused_in_nmse_mode() -> None:
    big = np.array([16777216], dtype=np.int64)

    def plus(xp: Any, x: Any) -> Any:
        return xp.astype(x, xp.int64) + (1 if _on_candidate(xp) else 0)

    with pytest.raises(ConfigError, match='mode="values"'):
        diffcheck.compare(plus, big.astype(np.float32), candidate=CANDIDATE)
    # values mode sees 16777217 against 16777216
    values = diffcheck.compare(plus, big, candidate=CANDIDATE, mode="values")
    assert not values


def test_an_inexact_integer_input_is_refused() -> None:
    with pytest.raises(ConfigError, match="16777217"):
        diffcheck.compare(lambda xp, x: x, np.array([1, 16777217]), candidate=CANDIDATE)
    exact = np.array([-(2**24), 2**24, 2**30], dtype=np.int64)  # all exact float32 values
    assert diffcheck.compare(lambda xp, x: x, exact, candidate=CANDIDATE)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_integer_inputs_pass_exactly_when_float32_holds_them(value: int) -> None:
    host = np.array([value], dtype=np.int64)
    if int(np.float32(value)) == value:
        assert diffcheck.compare(lambda xp, x: x, host, candidate=CANDIDATE)
    else:
        with pytest.raises(ConfigError, match="cannot hold exactly"):
            diffcheck.compare(lambda xp, x: x, host, candidate=CANDIDATE)


def test_complex_outputs_are_refused_and_a_complex_candidate_fails() -> None:
    def to_complex(xp: Any, x: Any) -> Any:
        return xp.astype(x, xp.complex64) * (1j if _on_candidate(xp) else 1)

    with pytest.raises(ConfigError, match="complex64"):
        diffcheck.compare(to_complex, X, candidate=CANDIDATE)

    def complex_on_candidate(xp: Any, x: Any) -> Any:
        return xp.astype(x, xp.complex64) * 1j if _on_candidate(xp) else x

    verdict = diffcheck.compare(complex_on_candidate, X, candidate=CANDIDATE)
    assert not verdict
    assert "complex64 on the candidate" in (verdict.reason or "")


def test_the_pytest_fixture_refuses_an_integer_output() -> None:
    fixture = DiffcheckCompare(resolve(CANDIDATE), reference="numpy", precision="f32")

    def plus(xp: Any, x: Any) -> Any:
        return xp.astype(x, xp.int64) + (1 if _on_candidate(xp) else 0)

    with pytest.raises(ConfigError, match='mode="values"'):
        fixture(plus, np.array([16777216.0], dtype=np.float32))


# -- tolerances ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), "0.5", b"1", [1e-7], 1j])
def test_non_number_tolerances_are_refused(bad: Any) -> None:
    with pytest.raises(ConfigError, match="not a number"):
        diffcheck.compare(wrong_on_candidate, X, candidate=CANDIDATE, max_nmse=bad)
    with pytest.raises(ConfigError, match="not a number"):
        diffcheck.diff(X, X, max_nmse=bad)
    with pytest.raises(ConfigError, match="not a number"):
        diffcheck.diff(X, X, max_nmse=None)  # type: ignore[arg-type]


def test_a_numpy_scalar_tolerance_is_taken_and_rendered() -> None:
    verdict = diffcheck.diff(X, X * 1.01, max_nmse=np.float32(1e-7))
    assert not verdict
    assert type(verdict.tolerance) is float
    assert "FAILED" in str(verdict)
    assert "FAILED" in verdict._repr_html_()
    compared = diffcheck.compare(
        wrong_on_candidate, X, candidate=CANDIDATE, max_nmse=np.float32(1e-7)
    )
    assert not compared
    assert "FAILED" in str(compared)
    assert diffcheck.compare(lambda xp, x: x, X, candidate=CANDIDATE, max_nmse=np.float64(1e-7))
    assert diffcheck.diff(X, X, max_nmse=np.int64(1))


@pytest.mark.parametrize("bad", [0, 0.0, -1e-7, float("inf"), float("nan"), np.float32(0)])
def test_tolerances_must_be_finite_and_positive(bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"^max_nmse=.*, but it must be finite and strictly"):
        diffcheck.compare(wrong_on_candidate, X, candidate=CANDIDATE, max_nmse=bad)


def test_tolerance_messages_say_what_was_given_and_what_to_pass() -> None:
    with pytest.raises(ConfigError, match=r"^max_nmse='0\.5' \(str\) is not a number; pass a"):
        diffcheck.compare(wrong_on_candidate, X, candidate=CANDIDATE, max_nmse="0.5")
    with pytest.raises(ConfigError, match=r"^max_nmse=True \(bool\) is not a number; pass a"):
        diffcheck.diff(X, X, max_nmse=True)
    with pytest.raises(ConfigError, match=r"^tol=None \(NoneType\) .* such as tol=1e-7$"):
        strict_tolerance(None, "tol")
    assert positive_tolerance(np.float32(0.5), "tol") == 0.5
    with pytest.raises(ConfigError, match=r"^tol='x' \(str\)"):
        positive_tolerance("x", "tol")


def test_a_function_name_in_neither_the_standard_nor_the_reference_is_refused() -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(ConfigError) as raised:
        diffcheck.compare("adds", x, candidate="array_api_strict", mode="values")
    assert str(raised.value) == (
        'function "adds" is neither in the Array API standard nor in the reference\'s '
        'namespace (did you mean "add"?); pass a standard name or a callable'
    )
    # A name of the reference's own namespace is compared: the candidate lacks it.
    verdict = diffcheck.compare("nanmean", x, candidate="array_api_strict", mode="values")
    assert (verdict.status, verdict.kind) == ("failed", "missing")
    assert (
        verdict.reason == "array_api_strict: module 'array_api_strict' has no attribute 'nanmean'"
    )


def test_an_inexact_integer_is_named_by_its_flat_index_in_any_shape() -> None:
    host = np.zeros((2, 3), np.int64)
    host[1, 1] = 2**24 + 1
    with pytest.raises(ConfigError) as raised:
        diffcheck.compare(lambda xp, x: x, host, candidate=CANDIDATE)
    assert str(raised.value).startswith(
        "input 0 holds 16777217 at flat index 4, which float32 cannot hold exactly"
    )


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (0, "segments=0 is not a count of segments; give 1 or more"),
        (True, "segments=True is not a count of segments; give 1 or more"),
        (7, "segments=7 asks for more segments than the 6 elements compared; give at most 6"),
    ],
)
def test_a_segment_count_that_cannot_be_judged_is_refused(count: int, message: str) -> None:
    x = np.ones(6, np.float32)
    with pytest.raises(ValueError, match="segments=") as raised:
        diffcheck.diff(x, x, max_nmse=1e-3, segments=count)
    assert str(raised.value) == message
    assert diffcheck.diff(x, x, max_nmse=1e-3, segments=6)


@pytest.mark.parametrize(
    ("segments", "message"),
    [
        ({"a": (0, 2.0)}, "segments['a'] = (0, 2.0) is not a (start, stop) pair of ints"),
        ({"a": (True, 2)}, "segments['a'] = (True, 2) is not a (start, stop) pair of ints"),
        ({"a": (0,)}, "segments['a'] = (0,) is not a (start, stop) pair of ints"),
        ({"a": [0, 2, 3]}, "segments['a'] = [0, 2, 3] is not a (start, stop) pair of ints"),
        ({"a": 5}, "segments['a'] = 5 is not a (start, stop) pair of ints"),
        (
            {"a": (0, 7)},
            "segments['a'] = (0, 7) is not a non-empty range inside the 6 elements compared",
        ),
        (
            {"a": (2, 2)},
            "segments['a'] = (2, 2) is not a non-empty range inside the 6 elements compared",
        ),
        (
            {"a": (-1, 2)},
            "segments['a'] = (-1, 2) is not a non-empty range inside the 6 elements compared",
        ),
        ({3: (0, 2)}, "segments: the name 3 is not a str"),
    ],
)
def test_named_segments_are_refused_unless_exact_int_ranges_inside_the_output(
    segments: Any, message: str
) -> None:
    x = np.ones(6, np.float32)
    with pytest.raises(ValueError, match="segments") as raised:
        diffcheck.compare(lambda xp, x: x, x, candidate=CANDIDATE, segments=segments)
    assert str(raised.value) == message
    whole = diffcheck.compare(lambda xp, x: x, x, candidate=CANDIDATE, segments={"a": (0, 6)})
    assert whole.passed
