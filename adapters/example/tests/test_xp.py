"""The namespace's own functions, against NumPy, with a wrong answer that must be caught."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from diffcheck_example import DISABLE_VARIABLE, ExampleAdapter, xp

import diffcheck


@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (3, 5, 2), (64, 35, 33)])
def test_naive_matmul_matches_numpy(m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    verdict = diffcheck.diff(a.astype(np.float64) @ b, xp.matmul(a, b), max_nmse=1e-10)
    assert verdict.passed, str(verdict)
    assert xp.matmul(a, b).dtype == np.float32


def test_a_wrong_matmul_is_caught() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 9)).astype(np.float32)
    b = rng.standard_normal((9, 4)).astype(np.float32)
    skipped_last_k = xp.matmul(a[:, :-1], b[:-1, :])
    verdict = diffcheck.diff(a @ b, skipped_last_k, max_nmse=1e-7)
    assert not verdict.passed
    assert "not below tolerance" in (verdict.reason or "")


def test_matmul_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match=r"\[\.\.\., m, k\] @ \[\.\.\., k, n\]"):
        xp.matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="matmul needs"):  # batch axes must match
        xp.matmul(np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32))


def test_batched_matmul_is_one_product_per_batch() -> None:
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    b = np.arange(40, dtype=np.float64).reshape(2, 4, 5)
    assert np.array_equal(xp.matmul(a, b), a @ b)


def test_probe_reports_unavailable_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DISABLE_VARIABLE, "1")
    probe = ExampleAdapter("cpu").probe()
    assert probe.status == "unavailable"
    assert DISABLE_VARIABLE in (probe.reason or "")


def test_compare_runs_a_research_function_on_the_example_backend() -> None:
    x = np.linspace(-2, 2, 96, dtype=np.float32).reshape(8, 12)
    w = np.linspace(0.5, 1.5, 12, dtype=np.float32)

    def scaled_norm(xp: Any, x: Any, w: Any) -> Any:
        mean_square = xp.sum(x * x, axis=1, keepdims=True) / 12
        return x / xp.sqrt(mean_square + 1e-6) * w

    verdict = diffcheck.compare(scaled_norm, x, w, candidate="example:cpu", segments=4)
    assert verdict.passed, str(verdict)
