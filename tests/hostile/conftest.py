"""Reports made once per session for the hostile-input tests (array_api_strict vs NumPy)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.runner import run_check


@pytest.fixture(scope="session")
def report_texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A passing gemm and a passing attention report, as bytes."""
    root = tmp_path_factory.mktemp("reports")
    run_check(make_check("array_api_strict", "gemm", m=2, n=3, k=4), root / "gemm.json")
    run_check(
        make_check(
            "array_api_strict", "attention", tokens=1, kv_len=1, heads=1, kv_heads=1, head_dim=1
        ),
        root / "attention.json",
    )
    return {name: (root / f"{name}.json").read_bytes() for name in ("gemm", "attention")}


@pytest.fixture
def report_json(report_texts: dict[str, bytes]) -> dict[str, Any]:
    """A fresh decoded copy of the passing gemm report, to be edited by a test."""
    parsed: dict[str, Any] = json.loads(report_texts["gemm"])
    return parsed


@pytest.fixture(scope="module")
def session_dir() -> Iterator[Path]:
    """One directory for the module's cases: a case may create files only in its ``out``."""
    # In memory where the machine has it: thousands of small files, no disk in the way.
    memory = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="hostile-", dir=memory) as directory:
        session = Path(directory)
        root = session / "case"
        root.mkdir()
        (root / "out").mkdir()
        (root / "dir").mkdir()
        os.mkfifo(root / "fifo")
        yield session
