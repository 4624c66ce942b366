"""Replay re-derives what it can from config and bits: forged fields never replay as agreeing.

Each test starts from an honest failing report, edits it the way a forger would (outputs
re-encoded consistently, so sizes and digests still match), and shows that ``diffcheck
replay`` refuses to agree. They are the false passes a stored field used to buy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.differ import compare_outputs
from diffcheck.report import MetricsRecord, replay
from diffcheck.runner import run_check
from fakes import FakeAdapter, fake_name
from forgery import document, output, set_output

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

CANDIDATE = "array_api_strict"


def _report(tmp_path: Path, op: str, fault: str, **params: Any) -> dict[str, Any]:
    path = tmp_path / f"{op}-{fault}.json"
    run_check(make_check(fake_name(fault), op, **params), path, candidate=FakeAdapter(fault))
    return dict(json.loads(path.read_text()))


def _as_passed(data: dict[str, Any]) -> None:
    data["result"]["status"], data["result"]["reason"] = "passed", None


def _disagreements(data: dict[str, Any]) -> list[str]:
    return replay(document(data)).disagreements


@pytest.fixture
def failing_gemm(tmp_path: Path) -> dict[str, Any]:
    data = _report(tmp_path, "gemm", "scale_segment", m=4, n=8, k=5)
    assert data["result"]["status"] == "failed"
    assert replay(document(data)).agrees
    return data


def test_a_loosened_tolerance_does_not_replay_while_config_keeps_its_own(
    failing_gemm: dict[str, Any],
) -> None:
    loose = 1e3
    failing_gemm["result"]["tolerance"] = loose
    failing_gemm["result"]["tolerance_f64_bits"] = int(np.array(loose, np.float64).view(np.uint64))
    _as_passed(failing_gemm)
    problems = _disagreements(failing_gemm)
    assert any(p.startswith("result.tolerance_f64_bits: stored") for p in problems), problems
    assert any(p.startswith("result.tolerance: stored 1000.0") for p in problems), problems


def test_a_lowered_element_count_with_outputs_cut_to_a_clean_prefix_does_not_replay(
    failing_gemm: dict[str, Any],
) -> None:
    reference, actual = output(failing_gemm, "reference"), output(failing_gemm, "actual")
    clean = int(np.argmax(reference != actual))  # the scaled last quarter starts here
    assert 0 < clean < reference.size
    set_output(failing_gemm, "reference", reference[:clean])
    set_output(failing_gemm, "actual", actual[:clean])
    failing_gemm["expected_output_elements"] = clean
    verdict = compare_outputs(reference[:clean], actual[:clean], 1e-7, ulp_dtype="f32")
    assert verdict.passed
    assert verdict.metrics is not None
    failing_gemm["result"]["metrics"] = MetricsRecord.of(verdict.metrics).model_dump()  # type: ignore[union-attr]
    _as_passed(failing_gemm)
    problems = _disagreements(failing_gemm)
    assert f"expected_output_elements: stored {clean}, derived from config 32" in problems


@pytest.mark.parametrize("field", ["nmse", "max_abs", "reference_mse"])
@pytest.mark.parametrize("value", ["Infinity", "-Infinity"])
def test_an_infinite_stored_metric_never_matches_a_finite_one(
    failing_gemm: dict[str, Any], field: str, value: str
) -> None:
    failing_gemm["result"]["metrics"][field] = value
    problems = _disagreements(failing_gemm)
    assert any(p.startswith(f"metrics.{field}: stored") for p in problems), problems


@pytest.mark.parametrize(
    ("where", "value"),
    [("op", "rms_norm"), ("backend", "mlx:cpu"), ("seed", 7), ("schema_version", 1)],
)
def test_result_fields_are_checked_against_config(
    failing_gemm: dict[str, Any], where: str, value: object
) -> None:
    failing_gemm["result"][where] = value
    if where == "schema_version":  # a v1 result inside a v4 report is a schema error
        with pytest.raises(Exception, match="schema v4"):
            document(failing_gemm)
        return
    assert any(p.startswith(f"result.{where}: stored") for p in _disagreements(failing_gemm))


def test_a_lifecycle_stripped_of_its_phases_and_segments_does_not_replay(tmp_path: Path) -> None:
    data = _report(tmp_path, "context-lifecycle", "scale_segment")
    assert data["result"]["status"] == "failed"
    assert "submission_phases" in data
    assert "segments" in data
    for key in ("submission_phases", "segments", "submission_metrics"):
        data.pop(key, None)
    _as_passed(data)
    problems = _disagreements(data)
    # Without phases the report would claim four independent chains; its coverage says not,
    # and the chains it would then be judged as still fail where the phase failed.
    assert any(p.startswith("coverage: stored") for p in problems), problems
    assert any(p.startswith("status: stored passed, derived failed") for p in problems), problems
    assert "segments: derivable but not stored" in problems


def test_an_edited_segment_record_does_not_replay(tmp_path: Path) -> None:
    data = _report(tmp_path, "context-lifecycle", "scale_segment")
    last = data["segments"][-1]
    assert last["status"] == "failed"
    last["status"], last["reason"] = "passed", None
    assert any(
        p.startswith("segments[3] (drop_flush): stored passed") for p in _disagreements(data)
    )
    data = _report(tmp_path, "context-lifecycle", "none", seed=3)
    data["segments"][1]["metrics"]["max_ulp"] += 1
    assert "segments[1].metrics.max_ulp" in " ".join(_disagreements(data))


def test_submission_phases_added_to_a_gemm_report_is_a_disagreement_not_a_crash(
    failing_gemm: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing_gemm["submission_phases"] = [
        "initial",
        "reused_context",
        "independent_context",
        "drop_flush",
    ]
    assert any(p.startswith("submission_phases: stored") for p in _disagreements(failing_gemm))
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(failing_gemm))
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "DISAGREES" in err
    assert "Traceback" not in err


def test_a_failed_report_turned_into_not_run_is_never_evidence(
    failing_gemm: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = failing_gemm["result"]
    result["status"], result["reason"] = "not_run", "backend unavailable"
    result["reference"] = result["actual"] = result["metrics"] = None
    for key in ("segments", "submission_metrics"):
        failing_gemm.pop(key, None)
    failing_gemm["executed_precision"] = failing_gemm["computed_by"] = None
    outcome = replay(document(failing_gemm))
    # Nothing ran that replay could re-derive: it says so, and it never reads as a pass.
    assert outcome.agrees
    assert outcome.notes
    assert "cannot be re-derived" in outcome.notes[0]
    path = tmp_path / "not-run.json"
    path.write_text(json.dumps(failing_gemm))
    assert main(["replay", "--require-pass", str(path)]) == 1
    out = capsys.readouterr().out
    assert "agrees: not_run" in out
    assert "note: nothing ran that left an output" in out


def test_a_forged_pass_without_the_candidates_output_does_not_replay(
    failing_gemm: dict[str, Any],
) -> None:
    failing_gemm["result"]["actual"] = None
    failing_gemm["executed_precision"] = None
    _as_passed(failing_gemm)
    problems = _disagreements(failing_gemm)
    assert "a passed result must store both outputs" in problems


def test_a_forged_reason_on_a_numerical_failure_does_not_replay(
    failing_gemm: dict[str, Any],
) -> None:
    failing_gemm["result"]["reason"] = "known upstream divergence, ignore"
    problems = _disagreements(failing_gemm)
    assert any(p.startswith("status: stored failed, derived failed (reason") for p in problems)


def test_a_loose_tolerance_chosen_in_config_is_pointed_out(tmp_path: Path) -> None:
    path = tmp_path / "loose.json"
    run_check(make_check(CANDIDATE, "gemm", max_nmse=1e-2, m=2, n=3, k=4), path)
    outcome = replay(document(json.loads(path.read_text())))
    assert outcome.agrees
    assert outcome.notes == ["the tolerance 0.01 is looser than gemm's default 1e-07 at f32"]
