"""diffcheck.compare and diffcheck.run: the Python API for research scripts and tests."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffcheck
from diffcheck import api
from diffcheck.adapters import resolve
from diffcheck.adapters._protocol import Probe
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.config import make_check
from diffcheck.errors import BackendError, ConfigError, ReportError, UnknownBackendError
from diffcheck.report.replay import load_report, replay
from diffcheck.testing import WrappedAdapter, unavailable
from diffcheck.values.spec import STANDARD_FUNCTIONS

CANDIDATE = "array_api_strict"  # installed in the dev environment; float32 only
#: How compare's failure reasons begin: the pair and the precision.
PAIR = f"{CANDIDATE} at f32 against numpy: "
pytest.importorskip("array_api_strict", reason="the API tests run on array-api-strict")
X = np.linspace(1.0, 2.0, 64, dtype=np.float32)


def softmax(xp: Any, x: Any) -> Any:
    shifted = x - xp.max(x, axis=-1, keepdims=True)
    e = xp.exp(shifted)
    return e / xp.sum(e, axis=-1, keepdims=True)


def wrong_on_candidate(xp: Any, x: Any) -> Any:
    """Correct on NumPy, 0.5% high on array-api-strict: a backend bug in miniature."""
    scale = 1.005 if "array_api_strict" in xp.__name__ else 1.0
    return softmax(xp, x) * scale


@pytest.fixture
def x() -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)


def test_compare_passes_for_the_same_function(x: np.ndarray[Any, Any]) -> None:
    verdict = diffcheck.compare(softmax, x, candidate=CANDIDATE)
    assert verdict.passed, str(verdict)
    assert verdict.tolerance == 1e-7
    assert verdict.metrics is not None
    assert verdict.metrics.element_count == x.size


def test_compare_fails_a_wrong_candidate_with_metrics(x: np.ndarray[Any, Any]) -> None:
    verdict = diffcheck.compare(wrong_on_candidate, x, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.nmse > 1e-7
    assert "not below tolerance" in (verdict.reason or "")


def test_a_small_wrong_segment_fails_where_the_aggregate_passes() -> None:
    ones = np.ones(4096, np.float32)

    def mostly_right(xp: Any, v: Any) -> Any:
        if "array_api_strict" not in xp.__name__:
            return v * 1.0
        head = v[:4000] * 1.0
        tail = v[4000:] * 1.001  # NMSE ~ 2.3e-8 overall, 1e-6 within the last segment
        return xp.concat([head, tail])

    whole = diffcheck.compare(mostly_right, ones, candidate=CANDIDATE, max_nmse=1e-7)
    # The aggregate alone is under the tolerance; only the precision floor (a 0.1% error is
    # far above float32's) and the segments see the wrong tail.
    assert whole.metrics is not None
    assert whole.metrics.nmse < 1e-7
    assert whole.reason is not None
    assert "NMSE" not in whole.reason.split("precision floor: ")[0]
    assert whole.floor is not None
    assert not whole.floor.passed
    verdict = diffcheck.compare(
        mostly_right,
        ones,
        candidate=CANDIDATE,
        max_nmse=1e-7,
        segments={"head": (0, 4000), "tail": (4000, 4096)},
    )
    assert verdict.status == "failed"
    assert [s.status for s in verdict.segments] == ["passed", "failed"]
    assert verdict.first_failing_segment is not None
    assert verdict.first_failing_segment.segment.name == "tail"


@pytest.mark.parametrize(
    "segments",
    [4, [diffcheck.Segment("a", 0, 256), diffcheck.Segment("b", 256, 512)], {"a": (0, 512)}],
    ids=["count", "segments", "mapping"],
)
def test_segments_accept_every_form(x: np.ndarray[Any, Any], segments: Any) -> None:
    verdict = diffcheck.compare(softmax, x, candidate=CANDIDATE, segments=segments)
    assert verdict.passed, str(verdict)
    assert verdict.segments
    assert verdict.segments[0].segment.name in ("segment0", "a")


def test_malformed_segments_are_misuse(x: np.ndarray[Any, Any]) -> None:
    with pytest.raises(ValueError, match="cannot be split"):
        diffcheck.compare(softmax, x, candidate=CANDIDATE, segments=5)


def test_several_outputs_are_judged_one_by_one() -> None:
    big = np.full(10_000, 3.0, np.float32)
    small = np.ones(10, np.float32)

    def pair(xp: Any, a: Any, b: Any) -> Any:
        off = 1.01 if "array_api_strict" in xp.__name__ else 1.0
        return a * 1.0, b * off  # the small output is 1% off; the aggregate hides it

    verdict = diffcheck.compare(pair, big, small, candidate=CANDIDATE, max_nmse=1e-5)
    assert verdict.status == "failed"
    assert [s.segment.name for s in verdict.segments] == ["output0", "output1"]
    assert [s.status for s in verdict.segments] == ["passed", "failed"]


def test_a_transposed_output_of_the_same_size_fails() -> None:
    square = np.arange(12, dtype=np.float32).reshape(3, 4)

    def maybe_transposed(xp: Any, m: Any) -> Any:
        return xp.matrix_transpose(m) if "array_api_strict" in xp.__name__ else m

    verdict = diffcheck.compare(maybe_transposed, square, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert "output shape mismatch: reference (3, 4), actual (4, 3)" in (verdict.reason or "")


def test_inputs_may_be_lists_integers_and_dlpack_objects() -> None:
    import array_api_strict

    verdict = diffcheck.compare(
        lambda xp, a, b, c: a * b + c,
        [1.0, 2.0, 3.0],
        np.arange(3),
        array_api_strict.asarray([0.5, 0.25, 0.125]),
        candidate=CANDIDATE,
    )
    assert verdict.passed, str(verdict)


def test_complex_inputs_are_refused() -> None:
    with pytest.raises(ConfigError, match="input 0 has dtype complex64"):
        diffcheck.compare(lambda xp, a: a, np.ones(3, np.complex64), candidate=CANDIDATE)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_invalid_tolerance_is_refused(x: np.ndarray[Any, Any], bad: float) -> None:
    with pytest.raises(ConfigError, match="finite and strictly positive"):
        diffcheck.compare(softmax, x, candidate=CANDIDATE, max_nmse=bad)


def test_unknown_precision_is_refused(x: np.ndarray[Any, Any]) -> None:
    with pytest.raises(ConfigError, match='precision "f8"'):
        diffcheck.compare(softmax, x, candidate=CANDIDATE, precision="f8")  # type: ignore[arg-type]


def test_an_unavailable_backend_raises_with_its_reason(x: np.ndarray[Any, Any]) -> None:
    with pytest.raises(BackendError) as caught:
        diffcheck.compare(softmax, x, candidate="array_api_strict:gpu")
    assert caught.value.adapter == "array_api_strict:gpu"
    assert "no device 'gpu'" in caught.value.reason
    assert "run 'diffcheck backends'" in str(caught.value)


def test_an_unavailable_adapter_instance_raises(x: np.ndarray[Any, Any]) -> None:
    gone = unavailable(resolve(CANDIDATE), "the device was unplugged")
    with pytest.raises(BackendError, match="the device was unplugged"):
        diffcheck.compare(softmax, x, candidate=gone)
    assert gone.calls == 0


def test_a_precision_the_candidate_lacks_raises(x: np.ndarray[Any, Any]) -> None:
    with pytest.raises(BackendError, match="does not execute precision f16"):
        diffcheck.compare(softmax, x, candidate=CANDIDATE, precision="f16")


def test_an_unknown_backend_name_raises(x: np.ndarray[Any, Any]) -> None:
    with pytest.raises(UnknownBackendError):
        diffcheck.compare(softmax, x, candidate="no-such-backend")


def test_the_reference_is_selectable_and_default_tolerance_follows_precision(
    x: np.ndarray[Any, Any],
) -> None:
    verdict = diffcheck.compare(softmax, x, reference=CANDIDATE, candidate="numpy", precision="f16")
    assert verdict.tolerance == 1e-6
    assert verdict.passed, str(verdict)


# -- run -------------------------------------------------------------------------------------


def test_run_takes_a_mapping_and_writes_a_new_report(tmp_path: Path) -> None:
    path = tmp_path / "gemm.json"
    document = diffcheck.run({"require_backend": CANDIDATE, "op": "gemm", "m": 8}, report=path)
    assert document.result is not None
    assert document.result.status == "passed"
    assert json.loads(path.read_text())["result"]["status"] == "passed"
    assert replay(load_report(path)).agrees
    with pytest.raises(ReportError, match="create report"):
        diffcheck.run({"require_backend": CANDIDATE, "op": "gemm"}, report=path)


def test_run_takes_a_check_and_records_an_unavailable_backend_as_not_run() -> None:
    check = make_check("array_api_strict:gpu", "silu-mul", tokens=2, intermediate=8)
    document = diffcheck.run(check)
    assert document.result is not None
    assert document.result.status == "not_run"
    assert "no device 'gpu'" in (document.result.reason or "")


def test_run_rejects_an_incomplete_or_invalid_mapping() -> None:
    with pytest.raises(ConfigError, match="require_backend"):
        diffcheck.run({"op": "gemm"})
    with pytest.raises(ConfigError, match="nonzero"):
        diffcheck.run({"require_backend": CANDIDATE, "op": "gemm", "m": 0})


# -- the exact words of compare()'s refusals -------------------------------------------------


def _probed(status: str, reason: str | None) -> WrappedAdapter:
    return WrappedAdapter(resolve(CANDIDATE), probe=Probe(status, reason))  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["nmse", "values"])
@pytest.mark.parametrize("role", ["candidate", "reference"])
def test_a_failed_probe_says_which_side_and_why(role: str, mode: str) -> None:
    broken = _probed("error", "driver query timed out")
    sides = {"candidate": broken, "reference": "numpy"}
    if role == "reference":
        sides = {"candidate": "numpy", "reference": broken}
    with pytest.raises(BackendError) as caught:
        diffcheck.compare(lambda xp, v: v, X, mode=mode, **sides)  # type: ignore[call-overload]
    assert caught.value.adapter == CANDIDATE
    assert caught.value.reason == f"{role} availability query failed: driver query timed out"


def test_a_misspelt_name_on_a_reference_that_cannot_answer_says_it_is_the_reference() -> None:
    with pytest.raises(BackendError) as caught:
        diffcheck.compare(
            "expp", X, reference=_probed("error", "no driver"), candidate="numpy", mode="values"
        )
    assert caught.value.reason == "reference availability query failed: no driver"


@pytest.mark.parametrize("reason", [None, ""])
def test_an_unavailable_backend_without_a_reason_says_so(reason: str | None) -> None:
    with pytest.raises(BackendError) as caught:
        diffcheck.compare(lambda xp, v: v, X, candidate=_probed("unavailable", reason))
    assert caught.value.reason == "unavailable (no reason given)"


def test_a_precision_the_candidate_lacks_names_it_and_what_it_executes() -> None:
    with pytest.raises(BackendError) as caught:
        diffcheck.compare(lambda xp, v: v, X, candidate=CANDIDATE, precision="f16")
    assert caught.value.adapter == CANDIDATE
    assert caught.value.reason == "it does not execute precision f16 (it executes: f32)"


def test_an_unknown_precision_lists_the_supported_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        diffcheck.compare(lambda xp, v: v, X, candidate=CANDIDATE, precision="f8")  # type: ignore[call-overload]
    assert str(caught.value) == 'precision "f8" is not supported; it must be one of f32, f16, bf16'


@pytest.mark.parametrize(
    "option",
    [{"function": "exp"}, {"signed_zero": False}, {"kwargs": {"axis": 0}}, {"voters": ["numpy"]}],
    ids=["function", "signed_zero", "kwargs", "voters"],
)
def test_each_values_option_alone_is_refused_in_nmse_mode(option: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as caught:
        diffcheck.compare(lambda xp, v: v, X, candidate=CANDIDATE, **option)
    assert str(caught.value) == (
        'function, signed_zero, kwargs and voters belong to mode="values"; '
        'pass mode="values" to use them'
    )


def test_segments_are_refused_in_values_mode() -> None:
    with pytest.raises(ConfigError, match='segments belong to mode="nmse"'):
        diffcheck.compare(lambda xp, v: v, X, candidate=CANDIDATE, mode="values", segments=2)  # type: ignore[call-overload]


def test_values_mode_takes_signed_zero() -> None:
    zeros = np.zeros(4, np.float32)

    def negated_on_candidate(xp: Any, v: Any) -> Any:
        return -v if "array_api_strict" in xp.__name__ else v

    strict = diffcheck.compare(negated_on_candidate, zeros, candidate=CANDIDATE, mode="values")
    assert not strict.passed
    assert strict.kind == "signed-zero"
    lenient = diffcheck.compare(
        negated_on_candidate, zeros, candidate=CANDIDATE, mode="values", signed_zero=False
    )
    assert lenient.passed, str(lenient)


def test_a_self_test_refusal_names_both_sides_by_their_specs() -> None:
    for candidate, reference in [("numpy", "numpy"), (resolve("numpy"), resolve("numpy"))]:
        with pytest.raises(ConfigError) as caught:
            diffcheck.compare(lambda xp, v: v, X, candidate=candidate, reference=reference)
        assert str(caught.value) == (
            'candidate "numpy" and reference "numpy" are the same backend; a backend cannot '
            "vouch for itself (pass allow_self_test=True for a self-test)"
        )


def test_a_reference_returning_an_integer_is_refused_naming_its_dtype_and_backend() -> None:
    with pytest.raises(ConfigError) as caught:
        diffcheck.compare(lambda xp, v: 3, X, candidate=CANDIDATE)
    assert str(caught.value).startswith(
        "output 0 of the reference numpy has dtype int64, but nmse mode compares real "
        "floating outputs as float32 (a int64 output would be cast with loss)"
    )


def test_the_run_mapping_names_every_missing_key() -> None:
    with pytest.raises(ConfigError) as caught:
        diffcheck.run({"m": 3})
    assert str(caught.value) == (
        "config {'m': 3} has no require_backend or op; it needs at least require_backend and op"
    )


# -- what the verdict says -------------------------------------------------------------------


def test_a_lossy_candidate_output_fails_naming_both_dtypes_at_the_tolerance() -> None:
    def integer_on_candidate(xp: Any, v: Any) -> Any:
        return xp.astype(v, xp.int32) if "array_api_strict" in xp.__name__ else v

    verdict = diffcheck.compare(integer_on_candidate, X, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.tolerance == 1e-7
    assert verdict.reason == (
        f"{PAIR}output 0 has dtype int32 on the candidate but float32 on the reference; nmse mode "
        "does not compare a lossy cast to float32"
    )


def test_an_extra_lossy_candidate_output_has_none_on_the_reference() -> None:
    def extra_on_candidate(xp: Any, v: Any) -> Any:
        if "array_api_strict" in xp.__name__:
            return v, xp.astype(v, xp.int32)
        return v

    verdict = diffcheck.compare(extra_on_candidate, X, candidate=CANDIDATE)
    assert verdict.reason == (
        f"{PAIR}output 1 has dtype int32 on the candidate but none on the reference; nmse mode "
        "does not compare a lossy cast to float32"
    )


def test_an_output_with_no_elements_fails_as_empty() -> None:
    verdict = diffcheck.compare(lambda xp, v: (), X, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.reason == f"{PAIR}reference output is empty"


def test_a_float16_candidate_is_cast_and_measured_in_float16_ulps() -> None:
    x = np.linspace(1.0, 2.0, 8, dtype=np.float32)
    verdict = diffcheck.compare(
        lambda xp, v: v * 2, x, reference=CANDIDATE, candidate="numpy", precision="f16"
    )
    assert verdict.passed, str(verdict)
    assert verdict.metrics is not None
    assert verdict.metrics.max_abs > 0  # float16 rounds what float32 holds
    assert verdict.metrics.max_ulp == 0  # ... to the nearest float16: no float16 ulp off


class _StoresFloat32(NumpyAdapter):
    """Claims float16 but stores float32: values alone cannot show it."""

    def storage_dtype(self, xp: Any, precision: Any) -> Any:
        return xp.float32


def test_a_candidate_storing_another_precision_fails_and_keeps_any_other_reason() -> None:
    problem = "executed precision differs from the configured f16: inputs stored as f32"
    right = diffcheck.compare(
        lambda xp, v: v, X, reference=CANDIDATE, candidate=_StoresFloat32(), precision="f16"
    )
    assert right.status == "failed"
    assert right.reason is not None
    assert right.reason.endswith(f" at f16 against {CANDIDATE}: {problem}")

    def off(xp: Any, v: Any) -> Any:
        return v * (1.0 if "array_api_strict" in xp.__name__ else 1.1)

    wrong = diffcheck.compare(
        off, X, reference=CANDIDATE, candidate=_StoresFloat32(), precision="f16"
    )
    assert wrong.reason is not None
    measured = wrong.reason.partition("; executed")[0]
    assert "is not below tolerance" in measured
    locate = "; locate=True names the call inside the function that went wrong"
    assert f"{measured}; {problem}{locate}" == wrong.reason


def test_a_single_output_gets_no_segments_and_its_verdict_no_hint(x: np.ndarray[Any, Any]) -> None:
    passed = diffcheck.compare(softmax, x, candidate=CANDIDATE)
    assert passed.segments == ()
    failed = diffcheck.compare(wrong_on_candidate, x, candidate=CANDIDATE)
    assert failed.reason is not None
    assert "values" not in failed.reason


def test_a_segment_count_applies_to_several_outputs_too() -> None:
    def pair(xp: Any, v: Any) -> Any:
        return v, v * 2

    verdict = diffcheck.compare(pair, X, candidate=CANDIDATE, segments=4)
    assert [s.segment.name for s in verdict.segments] == [f"segment{i}" for i in range(4)]


def test_as_many_named_segments_as_elements_are_taken() -> None:
    four = np.arange(4, dtype=np.float32)
    named = {f"e{i}": (i, i + 1) for i in range(4)}
    verdict = diffcheck.compare(lambda xp, v: v, four, candidate=CANDIDATE, segments=named)
    assert verdict.passed, str(verdict)
    assert len(verdict.segments) == 4
    with pytest.raises(
        ValueError, match=r"^segments names 5 segments, more than the 4 elements compared$"
    ):
        diffcheck.compare(
            lambda xp, v: v, four, candidate=CANDIDATE, segments=named | {"e4": (0, 1)}
        )


def test_outputs_split_differently_fail_listing_every_shape() -> None:
    def split_on_candidate(xp: Any, v: Any) -> Any:
        return (v[:32], v[32:]) if "array_api_strict" in xp.__name__ else v

    verdict = diffcheck.compare(split_on_candidate, X, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.reason == f"{PAIR}output shapes differ: reference [(64,)], actual [(32,), (32,)]"


# -- next steps: a candidate must be named, a misspelt function, NaN at the same places -----


def test_a_candidate_must_be_named() -> None:
    with pytest.raises(ConfigError) as caught:
        diffcheck.compare(lambda xp, x: x, np.ones(3, np.float32))
    assert str(caught.value) == (
        'compare() needs candidate=, the backend under test, such as "mlx:cpu", "torch:cpu" or '
        "\"array_api_strict\"; 'diffcheck backends' lists the backends available here"
    )


@pytest.mark.parametrize("mode", ["nmse", "values"])
def test_a_misspelt_function_is_an_error_naming_the_nearest(mode: str) -> None:
    with pytest.raises(ConfigError, match=r'function "argmaxx" .* \(did you mean "argmax"\?\)'):
        diffcheck.compare("argmaxx", np.ones(3, np.float32), candidate=CANDIDATE, mode=mode)  # type: ignore[call-overload]


_ELEMENTWISE = ["exp", "sin", "cos", "tanh", "sqrt", "abs", "floor", "negative", "square"]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(_ELEMENTWISE), st.data())
def test_any_standard_name_with_a_letter_doubled_is_refused(name: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(name) - 1))
    typo = name[: at + 1] + name[at:]
    all_names = {n for names in STANDARD_FUNCTIONS.values() for n in names}
    if typo in all_names:
        return
    with pytest.raises(ConfigError, match="did you mean"):
        diffcheck.compare(typo, np.ones(3, np.float32), candidate=CANDIDATE, mode="values")


def test_a_correct_name_still_runs() -> None:
    verdict = diffcheck.compare("exp", np.ones(3, np.float32), candidate=CANDIDATE, mode="values")
    assert verdict.passed


def test_nan_at_the_same_places_hints_at_values_mode() -> None:
    x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)
    verdict = diffcheck.compare(lambda xp, v: v * 2, x, candidate=CANDIDATE)
    assert not verdict.passed
    assert verdict.reason is not None
    measured = verdict.reason.partition("; both sides")[0]
    assert measured.startswith(
        f"{PAIR}reference contains"
    )  # the differ's own reason, then the hint
    assert verdict.reason == (
        f"{measured}; both sides are NaN at the same places; nmse mode measures finite "
        'values only, while mode="values" compares NaN placement'
    )
    assert diffcheck.compare(lambda xp, v: v * 2, x, candidate=CANDIDATE, mode="values").passed


def test_nan_at_different_places_gives_no_hint() -> None:
    x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)

    def moved(xp: object, v: object) -> object:
        import array_api_strict

        if xp is array_api_strict:  # the candidate puts its NaN elsewhere
            return xp.asarray([np.nan, 2.0, 4.0, 6.0], dtype=xp.float32)
        return v * 2  # type: ignore[operator]

    verdict = diffcheck.compare(moved, x, candidate=CANDIDATE)
    assert not verdict.passed
    assert verdict.reason is not None
    assert "values" not in verdict.reason


# -- large inputs: the NumPy reference runs beside the candidate, same verdicts --------------

LARGE = api.OVERLAP_ELEMENTS  # the smallest input that overlaps


@pytest.fixture(scope="module")
def large() -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.random.default_rng(1).standard_normal(LARGE).astype(np.float32)


def _threads_seen(record: list[tuple[str, str]]) -> Any:
    def fn(xp: Any, x: Any) -> Any:
        dtype = str(x.dtype).rsplit(".", 1)[-1]  # array_api_strict's reads "...float32"
        record.append((f"{xp.__name__}:{dtype}", threading.current_thread().name))
        scale = 1.001 if "array_api_strict" in xp.__name__ else 1.0
        return xp.exp(x * 0.5) * scale

    return fn


def test_a_large_reference_runs_once_on_its_own_thread_and_a_wrong_candidate_still_fails(
    large: np.ndarray[Any, Any],
) -> None:
    seen: list[tuple[str, str]] = []
    verdict = diffcheck.compare(_threads_seen(seen), large, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.nmse > 1e-7
    assert verdict.metrics.element_count == LARGE
    numpy_threads = [name for lib, name in seen if "numpy" in lib]
    candidate_threads = [name for lib, name in seen if "strict" in lib]
    second = [lib for lib, name in seen if name.startswith("diffcheck-reference")]
    # The reference once, then the floor's float64 truth, on the second thread.
    assert second == ["array_api_compat.numpy:float32", "array_api_compat.numpy:float64"]
    # The floor's other NumPy runs (its twins) follow on the calling thread.
    assert set(numpy_threads) - {threading.main_thread().name} == {second_thread(seen)}
    assert candidate_threads == [threading.main_thread().name]


def second_thread(seen: list[tuple[str, str]]) -> str:
    """The one thread other than the calling one that ``seen`` names."""
    (name,) = {name for _, name in seen} - {threading.main_thread().name}
    return name


def test_a_small_input_runs_both_sides_in_order_on_the_calling_thread() -> None:
    seen: list[tuple[str, str]] = []
    small = np.linspace(0, 1, 64, dtype=np.float32)
    verdict = diffcheck.compare(_threads_seen(seen), small, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert [lib for lib, _ in seen[:2]] == [
        "array_api_compat.numpy:float32",
        "array_api_strict:float32",
    ]
    assert {name for _, name in seen} == {threading.main_thread().name}
    # Then the precision floor's runs, all through NumPy.
    assert all("numpy" in lib for lib, _ in seen[2:])


def test_a_large_input_with_another_reference_runs_in_order(large: np.ndarray[Any, Any]) -> None:
    seen: list[tuple[str, str]] = []
    diffcheck.compare(_threads_seen(seen), large, reference=CANDIDATE, candidate="numpy")
    main = threading.main_thread().name
    # Both sides in order on the calling thread; only the floor's NumPy truth (float64) and
    # its honest float32 twin (the reference is not NumPy) on the second thread.
    assert [lib for lib, name in seen if name == main][:2] == [
        "array_api_strict:float32",
        "array_api_compat.numpy:float32",
    ]
    assert [lib for lib, name in seen if name != main] == [
        "array_api_compat.numpy:float64",
        "array_api_compat.numpy:float32",
    ]


def test_a_small_input_computes_its_truth_on_the_calling_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[str, str]] = []
    small = np.linspace(0, 1, 64, dtype=np.float32)
    monkeypatch.setattr(api, "TRUTH_OVERLAP_ELEMENTS", 65)
    diffcheck.compare(_threads_seen(seen), small, candidate=CANDIDATE)
    assert ("array_api_compat.numpy:float64", threading.main_thread().name) in seen
    monkeypatch.setattr(api, "TRUTH_OVERLAP_ELEMENTS", 64)
    seen.clear()
    diffcheck.compare(_threads_seen(seen), small, candidate=CANDIDATE)
    assert [lib for lib, name in seen if name != threading.main_thread().name] == [
        "array_api_compat.numpy:float64"
    ]


def test_overlapped_and_ordered_runs_give_the_same_verdict(
    large: np.ndarray[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fn(xp: Any, x: Any) -> Any:
        return xp.sin(x) * xp.cos(x)

    def wrong(xp: Any, x: Any) -> Any:  # within the f32 bucket, far past the float32 floor
        scale = 1 + 2**-12 if "strict" in xp.__name__ else 1.0
        return xp.sin(x) * xp.cos(x) * scale

    overlapped = [diffcheck.compare(f, large, candidate=CANDIDATE) for f in (fn, wrong)]
    monkeypatch.setattr(api, "OVERLAP_ELEMENTS", 10 * LARGE)
    monkeypatch.setattr(api, "TRUTH_OVERLAP_ELEMENTS", 10 * LARGE)
    ordered = [diffcheck.compare(f, large, candidate=CANDIDATE) for f in (fn, wrong)]
    assert overlapped[0].passed, str(overlapped[0])
    assert overlapped[1].floor is not None
    assert not overlapped[1].floor.passed
    assert overlapped == ordered


def test_a_reference_error_propagates_even_when_the_candidate_fails_too(
    large: np.ndarray[Any, Any],
) -> None:
    def broken(xp: Any, x: Any) -> Any:
        if "numpy" in xp.__name__:
            raise ZeroDivisionError("reference side broke")
        raise RuntimeError("candidate side broke")

    with pytest.raises(ZeroDivisionError, match="reference side broke"):
        diffcheck.compare(broken, large, candidate=CANDIDATE)


def test_a_candidate_error_is_a_failed_verdict_after_the_reference_ran(
    large: np.ndarray[Any, Any],
) -> None:
    def candidate_breaks(xp: Any, x: Any) -> Any:
        if "strict" in xp.__name__:
            raise RuntimeError("kernel launch failed")
        return x * 2

    verdict = diffcheck.compare(candidate_breaks, large, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert "kernel launch failed" in (verdict.reason or "")


def _cuda_candidates() -> list[str]:
    found = []
    try:
        import torch

        if torch.cuda.is_available():
            found.append("torch:cuda")
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append("cupy")
    except Exception:  # cupy absent, or no driver: nothing to stage through
        pass
    return found


@pytest.mark.parametrize(
    "candidate",
    _cuda_candidates()
    or [pytest.param("none", marks=pytest.mark.skip(reason="no CUDA device (torch or CuPy) here"))],
)
def test_staged_copies_reuse_one_buffer_and_never_show_stale_values(candidate: str) -> None:
    # The page-locked buffer outlives a call: a later, smaller output must be judged on its
    # own values, and a wrong one must fail, also after a right one filled the buffer.
    big = np.random.default_rng(2).standard_normal(LARGE).astype(np.float32)
    small = big[: LARGE // 2].copy()

    def right(xp: Any, x: Any) -> Any:
        return x * 2

    def wrong(xp: Any, x: Any) -> Any:
        off = 1.001 if "numpy" not in xp.__name__ else 1.0
        return x * 2 * off

    assert diffcheck.compare(right, big, candidate=candidate).passed
    failed = diffcheck.compare(wrong, small, candidate=candidate)
    assert failed.status == "failed"
    assert failed.metrics is not None
    assert failed.metrics.element_count == small.size
    assert diffcheck.compare(right, small, candidate=candidate).passed


def test_a_bfloat16_candidate_output_is_read_by_its_own_dtype() -> None:
    pytest.importorskip("torch", reason="bfloat16 storage comes from torch here")
    verdict = diffcheck.compare(lambda xp, v: v * 2, X, candidate="torch:cpu", precision="bf16")
    assert verdict.passed, str(verdict)


class _WithoutExp(NumpyAdapter):
    """A reference whose namespace lacks one standard function."""

    def namespace(self) -> Any:
        inner = super().namespace()

        class Namespace:
            __name__ = "without_exp"

            def __getattr__(self, name: str) -> Any:
                if name == "exp":
                    raise AttributeError(name)
                return getattr(inner, name)

        return Namespace()


def test_a_standard_name_the_reference_lacks_is_a_missing_verdict_not_a_typo() -> None:
    verdict = diffcheck.compare(
        "exp", X, reference=_WithoutExp(), candidate=CANDIDATE, mode="values"
    )
    assert not verdict.passed
    assert verdict.kind == "missing"


# -- a candidate whose outputs live on a device (as a GPU library's do), here on the host ----


class _DeviceArray:
    """An output held on a device: not a NumPy array, with a device that is not the CPU."""

    device = "gpu:0"

    def __init__(self, values: Any) -> None:
        self.values = np.asarray(values)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return np.asarray(self.values, dtype=dtype)


class _OnDevice(NumpyAdapter):
    """NumPy whose outputs are read back through the staged copy when they are on a device."""

    def __init__(self) -> None:
        super().__init__()
        self.staged: list[Any] = []

    @contextlib.contextmanager
    def host_float32_staged(self, array: Any) -> Iterator[np.ndarray[Any, Any]]:
        self.staged.append(array)
        yield np.asarray(array, np.float32).reshape(-1)

    def host_float32(self, array: Any) -> np.ndarray[Any, Any]:
        return np.asarray(array, np.float32).reshape(-1)


def _on_device(body: Any) -> Any:
    """``body`` on both sides, its result moved to the device on the candidate (NumPy)."""

    def fn(xp: Any, *arrays: Any) -> Any:
        out = body(xp, *arrays)
        return out if "strict" in xp.__name__ else _DeviceArray(out)

    return fn


GRID = np.linspace(1.0, 2.0, 24, dtype=np.float32).reshape(4, 6)


def test_a_single_output_on_a_device_is_read_once_through_the_staged_copy() -> None:
    device = _OnDevice()
    verdict = diffcheck.compare(
        _on_device(lambda xp, v: v * 2), GRID, reference=CANDIDATE, candidate=device
    )
    assert verdict.passed, str(verdict)
    assert verdict.metrics is not None
    assert verdict.metrics.element_count == GRID.size
    assert len(device.staged) == 1
    assert isinstance(device.staged[0], _DeviceArray)
    assert device.staged[0].shape == GRID.shape


def test_a_wrong_output_on_a_device_fails_at_the_tolerance_asked() -> None:
    def off(xp: Any, v: Any) -> Any:
        return v * (1.0 if "strict" in xp.__name__ else 1.001)

    args: dict[str, Any] = {"reference": CANDIDATE, "candidate": _OnDevice()}
    failed = diffcheck.compare(_on_device(off), GRID, **args)
    assert failed.status == "failed"
    assert failed.tolerance == 1e-7
    assert failed.metrics is not None
    assert 1e-7 < failed.metrics.nmse < 1e-5
    assert failed.metrics.max_abs == pytest.approx(0.002, rel=1e-3)  # 0.1% of 2.0
    loose = diffcheck.compare(_on_device(off), GRID, max_nmse=1e-5, **args)
    assert loose.passed, str(loose)
    assert loose.tolerance == 1e-5


def test_a_float16_output_on_a_device_is_measured_in_float16_ulps() -> None:
    verdict = diffcheck.compare(
        _on_device(lambda xp, v: v * 2),
        GRID,
        reference=CANDIDATE,
        candidate=_OnDevice(),
        precision="f16",
    )
    assert verdict.passed, str(verdict)
    assert verdict.metrics is not None
    assert verdict.metrics.max_abs > 0  # float16 rounds what float32 holds
    assert verdict.metrics.max_ulp == 0  # ... to the nearest float16: no float16 ulp off


def test_a_transposed_output_on_a_device_fails_naming_both_shapes() -> None:
    def transposed(xp: Any, v: Any) -> Any:
        return v if "strict" in xp.__name__ else np.ascontiguousarray(np.asarray(v).T)

    verdict = diffcheck.compare(
        _on_device(transposed), GRID, reference=CANDIDATE, candidate=_OnDevice()
    )
    assert verdict.status == "failed"
    assert verdict.reason is not None
    assert "; output shape mismatch: reference (4, 6), actual (6, 4)" in verdict.reason


def test_segments_of_an_output_on_a_device_are_judged_from_a_host_copy() -> None:
    device = _OnDevice()

    def last_wrong(xp: Any, v: Any) -> Any:
        if "strict" in xp.__name__:
            return v * 1.0
        out = np.array(v, copy=True)
        out[-1, -1] *= 1.5
        return out

    verdict = diffcheck.compare(
        _on_device(last_wrong), GRID, reference=CANDIDATE, candidate=device, segments=2
    )
    assert [s.status for s in verdict.segments] == ["passed", "failed"]
    assert device.staged == []


def test_the_candidate_gets_the_moved_inputs_themselves_when_already_in_storage_dtype() -> None:
    moved: list[Any] = []
    seen: list[Any] = []

    class Recording(NumpyAdapter):
        def to_device(self, host: Any) -> Any:
            moved.append(super().to_device(host))
            return moved[-1]

    def fn(xp: Any, v: Any) -> Any:
        if "strict" not in xp.__name__:
            seen.append(v)  # the candidate's argument
        return v * 2

    verdict = diffcheck.compare(fn, X, reference=CANDIDATE, candidate=Recording())
    assert verdict.passed, str(verdict)
    # The candidate's run comes first; the precision floor's NumPy runs take copies after it.
    assert any(seen[0] is m for m in moved)  # no copy: the input was float32 already
    assert not any(later is m for later in seen[1:] for m in moved)


def test_outputs_of_different_ranks_are_joined_flat() -> None:
    def pair(xp: Any, m: Any) -> Any:
        return m * 2, xp.sum(m, axis=1)

    square = np.arange(12, dtype=np.float32).reshape(3, 4)
    verdict = diffcheck.compare(pair, square, candidate=CANDIDATE)
    assert verdict.passed, str(verdict)
    assert verdict.metrics is not None
    assert verdict.metrics.element_count == 12 + 3


def test_a_transposed_output_with_nan_at_the_same_flat_places_keeps_every_reason() -> None:
    x = np.array([[np.nan, 1.0, 2.0], [3.0, 4.0, 5.0]], np.float32)  # NaN at flat 0 either way

    def maybe_transposed(xp: Any, m: Any) -> Any:
        return xp.matrix_transpose(m) if "array_api_strict" in xp.__name__ else m

    verdict = diffcheck.compare(maybe_transposed, x, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.reason is not None
    measured = verdict.reason.partition("; both sides")[0]
    assert measured.startswith(f"{PAIR}reference contains")
    assert verdict.reason == (
        f"{measured}; both sides are NaN at the same places; nmse mode measures finite "
        'values only, while mode="values" compares NaN placement; '
        "output shape mismatch: reference (2, 3), actual (3, 2)"
    )


def test_a_precision_the_candidate_lacks_lists_each_it_executes() -> None:
    with pytest.raises(BackendError) as caught:
        diffcheck.compare(
            lambda xp, v: v, X, reference=CANDIDATE, candidate="numpy", precision="bf16"
        )
    assert caught.value.reason == "it does not execute precision bf16 (it executes: f32, f16)"


def test_nan_at_the_same_places_on_a_device_hints_at_values_mode_too() -> None:
    x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)
    host = diffcheck.compare(lambda xp, v: v * 2, x, reference=CANDIDATE, candidate="numpy")
    device = _OnDevice()
    on_device = diffcheck.compare(
        _on_device(lambda xp, v: v * 2), x, reference=CANDIDATE, candidate=device
    )
    assert len(device.staged) == 1
    assert host.reason is not None
    assert "both sides are NaN at the same places" in host.reason
    assert on_device.reason == host.reason
