"""jax holds the dtypes diffcheck asks for: no float64/int64 truncation warning on a run,
and a library that quietly narrows a dtype is not said to store it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.adapters.array_api import ArrayApiAdapter

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="jax is not installed here (pip install jax to run this check)",
)
@pytest.mark.parametrize("op", ["gemm", "attention"])  # attention draws int64 positions
def test_a_run_on_jax_prints_no_truncation_warning(tmp_path: Path, op: str) -> None:
    # A fresh process: jax's 64-bit switch is process-wide.
    report = tmp_path / "report.json"
    argv = ["run", "--op", op, "--require-backend", "jax", "--report", str(report)]
    done = subprocess.run(
        [sys.executable, "-W", "always", "-m", "diffcheck", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "truncated" not in done.stderr
    assert "jax_enable_x64" not in done.stderr
    assert "status: passed" in done.stdout
    probe = "from diffcheck.adapters.array_api import ArrayApiAdapter as A; print(A('jax').capabilities().float64)"
    stores = subprocess.run(
        [sys.executable, "-W", "error", "-c", probe],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert stores.stdout.strip() == "True", stores.stderr  # a real float64, not a float32


class _Narrowing:
    """A namespace whose float64 is a float32 in disguise, as jax's is without x64."""

    float32, float16, bfloat16, float64 = np.float32, np.float16, None, np.float64

    def asarray(self, values: Any, dtype: Any = None, **_: Any) -> Any:
        narrowed = np.float32 if dtype is np.float64 else dtype
        return np.asarray(values, dtype=narrowed)

    def astype(self, array: Any, dtype: Any) -> Any:
        return array.astype(dtype)


def test_a_dtype_the_library_quietly_narrows_is_not_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = ArrayApiAdapter("array_api_strict")
    monkeypatch.setattr(adapter, "namespace", _Narrowing)
    capabilities = adapter.capabilities()
    assert not capabilities.float64
    assert "no float64 on this device" in capabilities.notes
    assert "f32" in capabilities.precisions
