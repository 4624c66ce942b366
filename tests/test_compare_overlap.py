"""compare() on large inputs: the NumPy reference runs beside the candidate, same verdicts."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck import api

CANDIDATE = "array_api_strict"
LARGE = api.OVERLAP_ELEMENTS  # the smallest input that overlaps


@pytest.fixture(scope="module")
def x() -> np.ndarray[Any, np.dtype[np.float32]]:
    pytest.importorskip("array_api_strict", reason="the candidate here is array-api-strict")
    return np.random.default_rng(1).standard_normal(LARGE).astype(np.float32)


def _threads_seen(record: dict[str, str]) -> Any:
    def fn(xp: Any, x: Any) -> Any:
        record[xp.__name__] = threading.current_thread().name
        scale = 1.001 if "array_api_strict" in xp.__name__ else 1.0
        return xp.exp(x * 0.5) * scale

    return fn


def test_a_large_reference_runs_on_its_own_thread_and_a_wrong_candidate_still_fails(
    x: np.ndarray[Any, Any],
) -> None:
    seen: dict[str, str] = {}
    verdict = diffcheck.compare(_threads_seen(seen), x, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.nmse > 1e-7
    reference_thread = next(name for lib, name in seen.items() if "numpy" in lib)
    candidate_thread = next(name for lib, name in seen.items() if "strict" in lib)
    assert reference_thread.startswith("diffcheck-reference")
    assert candidate_thread == threading.main_thread().name


def test_a_small_input_runs_both_sides_in_order_on_the_calling_thread() -> None:
    pytest.importorskip("array_api_strict", reason="the candidate here is array-api-strict")
    seen: dict[str, str] = {}
    small = np.linspace(0, 1, 64, dtype=np.float32)
    verdict = diffcheck.compare(_threads_seen(seen), small, candidate=CANDIDATE)
    assert verdict.status == "failed"
    assert set(seen.values()) == {threading.main_thread().name}


def test_overlapped_and_ordered_runs_give_the_same_verdict(
    x: np.ndarray[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fn(xp: Any, x: Any) -> Any:
        return xp.sin(x) * xp.cos(x)

    overlapped = diffcheck.compare(fn, x, candidate=CANDIDATE)
    monkeypatch.setattr(api, "OVERLAP_ELEMENTS", 10 * LARGE)
    ordered = diffcheck.compare(fn, x, candidate=CANDIDATE)
    assert overlapped.passed, str(overlapped)
    assert overlapped == ordered


def test_a_reference_error_propagates_even_when_the_candidate_fails_too(
    x: np.ndarray[Any, Any],
) -> None:
    def broken(xp: Any, x: Any) -> Any:
        if "numpy" in xp.__name__:
            raise ZeroDivisionError("reference side broke")
        raise RuntimeError("candidate side broke")

    with pytest.raises(ZeroDivisionError, match="reference side broke"):
        diffcheck.compare(broken, x, candidate=CANDIDATE)


def test_a_candidate_error_is_a_failed_verdict_after_the_reference_ran(
    x: np.ndarray[Any, Any],
) -> None:
    def candidate_breaks(xp: Any, x: Any) -> Any:
        if "strict" in xp.__name__:
            raise RuntimeError("kernel launch failed")
        return x * 2

    verdict = diffcheck.compare(candidate_breaks, x, candidate=CANDIDATE)
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
