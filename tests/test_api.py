"""diffcheck.compare and diffcheck.run: the Python API for research scripts and tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.errors import BackendError, ConfigError, ReportError, UnknownBackendError
from diffcheck.report.replay import load_report, replay
from diffcheck.testing import unavailable

CANDIDATE = "array_api_strict"  # installed in the dev environment; float32 only
pytest.importorskip("array_api_strict", reason="the API tests run on array-api-strict")


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

    assert diffcheck.compare(mostly_right, ones, candidate=CANDIDATE, max_nmse=1e-7).passed
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
