"""Reports made once per session for the hostile-input tests (array_api_strict vs NumPy)."""

from __future__ import annotations

import json
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
