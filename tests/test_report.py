"""Report schema v1: exact bits, the create-new writer, the checked-in JSON Schema, replay."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from diffcheck import ReportError
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.precision import f32_bits, f32_from_bits
from diffcheck.report import SCHEMA_VERSION, load_report, replay
from diffcheck.report.schema import schema_text
from diffcheck.report.writer import ReportWriter
from diffcheck.runner import run_check
from fakes import FakeAdapter
from forgery import document, output, set_output

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

SCHEMA_DIR = Path(__file__).parents[1] / "reports" / "schema"
SCHEMA_FILE = SCHEMA_DIR / f"v{SCHEMA_VERSION}.json"


def test_nan_payloads_signed_zero_and_infinities_survive_a_json_round_trip() -> None:
    bits = [0x7FC01234, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001, 0x3F800000]
    values = f32_from_bits(bits)
    assert json.loads(json.dumps({"f32_bits": f32_bits(values)}))["f32_bits"] == bits
    assert np.signbit(values[3])
    assert values[3] == 0.0
    assert np.isnan(values[0])
    assert np.isinf(values[1])


@pytest.mark.parametrize("version", [1, 2, 3])
def test_checked_in_schema_matches_the_models(version: int) -> None:
    assert (SCHEMA_DIR / f"v{version}.json").read_text() == schema_text(version), (
        f"run 'nox -s schema' and commit reports/schema/v{version}.json"
    )


def test_reports_validate_against_the_checked_in_schema(tmp_path: Path) -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    for op in ("gemm", "context-lifecycle"):
        path = tmp_path / f"{op}.json"
        run_check(make_check("array_api_strict", op), path)
        jsonschema.validate(json.loads(path.read_text()), schema)
    not_run = tmp_path / "not-run.json"
    run_check(make_check("cupy", "rms-norm"), not_run)
    jsonschema.validate(json.loads(not_run.read_text()), schema)


def test_the_incomplete_record_is_on_disk_before_anything_executes(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    seen: list[dict[str, object]] = []
    candidate = FakeAdapter(on_execute=lambda: seen.append(json.loads(report.read_text())))
    run_check(make_check("array_api_strict", "gemm"), report, candidate=candidate)
    assert len(seen) == 1
    assert seen[0]["completed"] is False
    assert seen[0]["result"] is None
    assert seen[0]["finished_at"] is None
    final = json.loads(report.read_text())
    assert final["completed"] is True
    assert final["started_at"] == seen[0]["started_at"]
    assert final["started_at"].endswith("+00:00")
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"], "no temporary file is left behind"


def test_an_interrupted_check_leaves_an_incomplete_record_that_replay_rejects(
    tmp_path: Path,
) -> None:
    report = tmp_path / "r.json"

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_check(
            make_check("fake", "gemm"),
            report,
            candidate=FakeAdapter(on_execute=interrupt),
        )
    assert json.loads(report.read_text())["completed"] is False
    outcome = replay(load_report(report))
    assert not outcome.agrees
    assert "incomplete" in outcome.disagreements[0]
    assert main(["replay", str(report)]) == 1


def test_the_writer_never_overwrites(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    report.write_bytes(b"evidence")
    with pytest.raises(ReportError, match="create report"):
        ReportWriter(report)
    assert report.read_bytes() == b"evidence"


def test_replay_detects_tampered_metrics_status_and_bits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    # A candidate with command contexts, so the record has submission phases.
    run_check(make_check("fake", "context-lifecycle"), report, candidate=FakeAdapter())
    original = json.loads(report.read_text())
    assert replay(document(original)).agrees

    def tampered(change: str) -> list[str]:
        data = json.loads(json.dumps(original))
        if change == "nmse":
            data["result"]["metrics"]["nmse"] = data["result"]["metrics"]["nmse"] * 1.0001 + 1e-12
        elif change == "status":
            data["result"]["status"] = "failed"
            data["result"]["reason"] = "made up"
        elif change == "bits":
            values = output(data, "actual")
            values.view(np.uint32)[200] ^= 0x00400000
            set_output(data, "actual", values)
        elif change == "phase":
            data["submission_metrics"][2]["max_abs"] = (
                data["submission_metrics"][2]["max_abs"] * 2 + 1e-6
            )
        elif change == "tolerance":
            data["result"]["tolerance_f64_bits"] += 2**52  # a far larger tolerance
        return replay(document(data)).disagreements

    assert any("metrics.nmse" in p for p in tampered("nmse"))
    assert any("status: stored failed, derived passed" in p for p in tampered("status"))
    assert any("derived failed" in p for p in tampered("bits"))
    assert any("submission_metrics[2].max_abs" in p for p in tampered("phase"))
    assert any("result.tolerance_f64_bits" in p for p in tampered("tolerance"))
    bad = tmp_path / "bad.json"
    data = json.loads(json.dumps(original))
    data["result"]["metrics"]["nmse"] = 0.5
    bad.write_text(json.dumps(data))
    assert main(["replay", str(bad)]) == 1
    assert "DISAGREES" in capsys.readouterr().err


def test_unknown_fields_and_phase_names_are_rejected(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    # A candidate with command contexts, so the record has submission phases.
    run_check(make_check("fake", "context-lifecycle"), report, candidate=FakeAdapter())
    data = json.loads(report.read_text())
    data["submission_phases"][0] = "unexecuted"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ReportError, match="does not match schema v4"):
        load_report(bad)
    data = json.loads(report.read_text())
    data["result"]["verdict"] = "trust me"
    bad.write_text(json.dumps(data))
    with pytest.raises(ReportError, match="does not match schema v4"):
        load_report(bad)
