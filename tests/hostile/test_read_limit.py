"""The report read limit is the largest report a check within the memory budget writes.

Each constant of :mod:`diffcheck.report.limits` is tied to what it bounds: the budget's own
estimate, the largest segment record the writer serializes, the indented v1 layout. A file
just over the limit is refused in one line from its size, before a byte is read; the
largest reports of real checks admitted by a budget read under that same budget.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.report.limits import (
    OUTPUT_TEXT_BYTES_PER_ELEMENT,
    RUN_BYTES_PER_OUTPUT_ELEMENT,
    SEGMENT_RECORD_BYTES,
    ReadLimit,
    largest_report_bytes,
    report_read_limit,
)
from diffcheck.report.models import MetricsRecord, SegmentRecord
from diffcheck.report.replay import load_document
from diffcheck.runner import run_check
from diffcheck.runner.budget import estimate_memory
from fakes import FakeAdapter
from forgery import as_v1

from ._harness import assert_refused, cli

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

_I32_MAX = 2**31 - 1


def test_the_per_element_bytes_are_the_budget_estimates_least() -> None:
    # gemm with k = 1: inputs are negligible, so the estimate is its per-output terms.
    check = make_check("array_api_strict", "gemm", m=4096, n=4096, k=1)
    estimate = estimate_memory(check)
    elements = 4096 * 4096
    assert estimate.outputs + estimate.report == RUN_BYTES_PER_OUTPUT_ELEMENT * elements
    assert estimate.total >= RUN_BYTES_PER_OUTPUT_ELEMENT * elements


def test_the_largest_segment_record_fits_its_allowance(tmp_path: Path) -> None:
    check = make_check(
        "array_api_strict", "attention", tokens=1, kv_len=1, heads=4, kv_heads=1, head_dim=2
    )
    document = run_check(check, tmp_path / "r.json", candidate=FakeAdapter("nan"))
    assert document.result is not None
    assert document.result.status == "failed"
    longest_reason = max(len(s.reason or "") for s in document.segments or [])
    assert longest_reason > 0
    before = sum(map(len, document.to_json_parts()))
    # The longest name, indices and floats a segment can have, and a longer reason.
    worst_metrics = MetricsRecord(
        element_count=_I32_MAX,
        nmse=-1.2345678901234567e-300,
        max_abs=-1.2345678901234567e-300,
        reference_mse=-1.2345678901234567e-300,
        uses_absolute_mse=False,
        max_abs_index=_I32_MAX,
        max_ulp=2**32 - 1,
    )
    worst = SegmentRecord(
        name=f"head{_I32_MAX}",
        start=_I32_MAX,
        stop=_I32_MAX,
        status="failed",
        reason="x" * (longest_reason + 100),
        metrics=worst_metrics,
    )
    grown = document.model_copy(
        update={
            "segments": [*(document.segments or []), worst],
            "submission_metrics": [*(document.submission_metrics or []), worst_metrics],
        }
    )
    added = sum(map(len, grown.to_json_parts())) - before
    assert 0 < added <= SEGMENT_RECORD_BYTES


def test_an_indented_v1_report_fits_the_per_element_allowance(tmp_path: Path) -> None:
    check = make_check("array_api_strict", "gemm", m=16, n=16, k=2)
    document = run_check(check, tmp_path / "r.json")
    data: dict[str, Any] = json.loads(b"".join(document.to_json_parts()))
    v1 = as_v1(data)
    elements = 16 * 16
    for which in ("reference", "actual"):  # the widest bit patterns: 10 digits each
        v1["result"][which]["f32_bits"] = [2**32 - 1] * elements
    size = len(json.dumps(v1, indent=2).encode())
    assert size <= largest_report_bytes(elements, 0)
    widest = len(json.dumps({"f32_bits": [2**32 - 1] * 2}, indent=2)) - len(
        json.dumps({"f32_bits": [2**32 - 1]}, indent=2)
    )
    assert 2 * widest <= OUTPUT_TEXT_BYTES_PER_ELEMENT


def test_a_file_just_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 64 * 1024**2
    limit = ReadLimit(budget, "--max-memory")
    path = tmp_path / "huge.json"
    with path.open("wb") as file:  # sparse: the size is claimed, not written
        file.truncate(limit.bytes + 1)
    reads: list[int] = []
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr("diffcheck.files.os.read", counted)
    code, _, err = cli(["replay", "--max-memory", str(budget), str(path)])
    assert_refused(code, err)
    assert f"{limit.bytes + 1} bytes, over the {limit.bytes}-byte limit" in err
    assert "memory budget of 64.0 MiB (--max-memory)" in err
    assert reads == []


def test_a_500_byte_file_claiming_gigabytes_is_judged_by_its_content(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    claim = {"schema_version": 2, "expected_output_elements": 10**12, "output_shape": [10**6] * 2}
    path.write_text(json.dumps(claim) + " " * (500 - len(json.dumps(claim))))
    code, _, err = cli(["replay", str(path)])
    assert_refused(code, err)
    assert "does not match schema" in err


@pytest.mark.parametrize(
    ("op", "params"),
    [
        ("gemm", {"m": 512, "n": 512, "k": 1}),
        ("attention", {"tokens": 1, "kv_len": 1, "heads": 3000, "kv_heads": 1, "head_dim": 1}),
    ],
)
def test_a_report_written_under_a_budget_reads_under_it(
    tmp_path: Path, op: str, params: dict[str, int]
) -> None:
    check = make_check("array_api_strict", op, **params)
    budget = estimate_memory(check).total  # the tightest budget that admits the check
    path = tmp_path / "r.json"
    run_check(check, path, max_memory=budget)
    assert path.stat().st_size <= ReadLimit(budget, "--max-memory").bytes
    parsed, size = load_document(path, budget)
    assert size == path.stat().st_size
    assert parsed["completed"] is True
    code, out, err = cli(["replay", "--max-memory", str(budget), str(path)])
    assert code == 0, err
    assert "agrees: passed" in out


def test_the_default_limit_follows_the_default_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("diffcheck.report.limits.default_budget", lambda: 1024**3)
    assert report_read_limit() == ReadLimit(1024**3, "half the memory available now")
    monkeypatch.setattr("diffcheck.report.limits.default_budget", lambda: None)
    assert report_read_limit().budget == 8 * 1024**3
    assert report_read_limit(5).bytes == largest_report_bytes(0, 0)
