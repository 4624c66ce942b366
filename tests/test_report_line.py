"""A report document shows as one line in a REPL: what ran, how it came out, and where.

``diffcheck.run(...)`` returns the report document; its repr and str name the op, backend,
precision, status, NMSE against the tolerance, the floor ratio and the report path when
there is one, instead of pydantic's repr of every field. The JSON is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import diffcheck
from diffcheck.config import make_check
from diffcheck.report import read_report
from diffcheck.report.line import REASON_CHARS, document_line
from diffcheck.report.replay import load_report

CANDIDATE = "array_api_strict"  # installed in the test environment; float32 only


@pytest.fixture(scope="module")
def passed() -> diffcheck.report.ReportDocument:
    return diffcheck.run({"require_backend": CANDIDATE, "op": "gemm", "m": 8})


def test_a_run_shows_as_one_short_line_with_its_figures(
    passed: diffcheck.report.ReportDocument,
) -> None:
    assert passed.result is not None
    assert passed.result.metrics is not None
    text = repr(passed)
    assert "\n" not in text
    assert len(text) < 200, text
    assert text.startswith(f"<{type(passed).__name__} gemm on {CANDIDATE} at f32: passed; nmse ")
    assert str(passed) == document_line(passed)
    assert text == f"<{type(passed).__name__} {passed}>"
    # the figures are the document's own, at three significant digits
    assert f"nmse {passed.result.metrics.nmse:.3g} < tolerance 1e-07" in text
    floor = passed.result.floor
    assert floor is not None
    ratio = floor.candidate_nmse / floor.floor_nmse
    assert f"; {ratio:.3g}x the {floor.honest_twin} floor {floor.floor_nmse:.3g}" in text
    assert "report " not in text  # kept in memory: no path to name


def test_the_json_is_unchanged_by_the_line(passed: diffcheck.report.ReportDocument) -> None:
    dumped = json.loads(passed.model_dump_json())
    assert dumped["config"]["op"] == "gemm"
    assert "_where" not in dumped
    assert "where" not in json.dumps(dumped["result"])
    assert json.loads(passed.to_json())["result"]["status"] == "passed"


def test_a_written_or_read_report_names_its_path(tmp_path: Path) -> None:
    path = tmp_path / "gemm.json"
    written = diffcheck.run({"require_backend": CANDIDATE, "op": "gemm", "m": 8}, report=path)
    assert repr(written).endswith(f"; report {path}>")
    read = read_report(path)
    assert str(read).endswith(f"; report {path}")
    assert load_report(path) == written  # where a document is does not make it differ
    assert "report" not in json.loads(path.read_text())["result"]


def test_a_not_run_check_says_why_in_a_bounded_line() -> None:
    document = diffcheck.run(make_check("array_api_strict:gpu", "silu-mul", tokens=2))
    text = str(document)
    assert text.startswith("silu-mul on array_api_strict:gpu at f32: not_run; ")
    assert "no device 'gpu'" in text
    assert len(text) <= len("silu-mul on array_api_strict:gpu at f32: not_run; ") + REASON_CHARS


def test_a_self_test_pass_says_it_is_no_pass() -> None:
    document = diffcheck.run(
        {"require_backend": "numpy", "op": "gemm", "m": 8, "allow_self_test": True}
    )
    assert not document
    assert ": passed (a self-test or one library on both sides: not a pass); " in str(document)
