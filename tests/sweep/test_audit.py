"""``diffcheck replay SWEEP_DIR``: summary.json and junit.xml are re-derived from the reports.

A genuine sweep agrees; every derived field of summary.json, edited (generated cases), is a
disagreement line and exit 1; so is a junit.xml verdict turned green, a report that is not
the planned check's, and a matrix that is not the one swept.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.errors import ConfigError, ReportError
from diffcheck.runner import run_check
from diffcheck.sweep.audit import audit_sweep
from diffcheck.sweep.summary import SweepSummary

MATRIX = """
schema_version = 1
description = "audit"
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7], max_nmse = 1e-30 }]
"""
PASSING, FAILING = f"{STRICT}/gemm/gemm-1x3x5-f32-s42", f"{STRICT}/gemm/gemm-4x3x5-f32-s7"

#: What a summary claims and replay cannot derive: how workers ended, times, options.
CLAIMED_TOP = {
    "matrix",  # a path: replaced, the matrix is not found (a one-line error, tested apart)
    "matrix_sha256",
    "diffcheck_version",
    "executor",
    "timeout_s",
    "started_at",
    "finished_at",
    "elapsed_s",
    "strict_known",
    "left_out",
    "schema_version",
}
CLAIMED_ROW = {"worker", "worker_wall_s", "parent_action", "resumed"}

Sweep = Callable[..., SweepRun]


def _replay(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["replay", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def swept(tmp_path: Path, sweep_cli: Sweep) -> Path:
    matrix = write_matrix(tmp_path, MATRIX)
    run = sweep_cli(matrix, tmp_path / "out")
    assert run.code == 1  # the second check fails its 1e-30 tolerance, honestly
    return tmp_path / "out"


def test_a_genuine_sweep_agrees(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _replay(str(swept), capsys=capsys)
    assert (code, err) == (0, "")
    assert out == f"{swept}: agrees: 2 checks re-derived from their reports, sweep exit status 1\n"
    code, _, _ = _replay(str(swept), "--require-pass", capsys=capsys)
    assert code == 1  # the sweep it re-derived failed


def test_a_summary_turned_green_disagrees(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = swept / "summary.json"
    data = json.loads(path.read_text())
    data.update(exit_status=0, exit_reasons=[])
    data["counts"].update(passed=2, failed=0)
    for row in data["checks"]:
        row.update(status="passed", reason=None)
    path.write_text(json.dumps(data))
    code, out, err = _replay(str(swept), capsys=capsys)
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert f"{swept}: DISAGREES: summary.json: exit_status: stored 0, derived 1" in lines
    assert (
        f"{swept}: DISAGREES: summary.json: {FAILING}.status: stored 'passed', derived 'failed'"
        in lines
    )
    assert all(line.startswith(f"{swept}: DISAGREES: ") for line in lines)


def test_a_junit_failure_removed_disagrees(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = swept / "junit.xml"
    text = re.sub(r"<failure[^>]*>.*?</failure>", "", path.read_text(), flags=re.S)
    path.write_text(text)
    code, _, err = _replay(str(swept), capsys=capsys)
    assert code == 1
    assert err.startswith(
        f"{swept}: DISAGREES: junit.xml: test case {FAILING}: stored passed, derived failure: NMSE"
    )
    assert err.count("\n") == 1


def test_a_report_of_another_check_disagrees(
    swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = swept / f"{FAILING}.json"
    other = make_check(
        "array_api_strict",
        "gemm",
        m=4,
        n=3,
        k=5,
        seed=7,
        max_nmse=1e-30,
        reference="array_api_strict",
        allow_self_test=True,
    )
    report.unlink()
    run_check(other, report)  # a self-test (bit-identical: it passes) under the planned name
    code, _, err = _replay(str(swept), capsys=capsys)
    assert code == 1
    assert err == (
        f"{swept}: DISAGREES: {FAILING}.json: not a report of the planned check: "
        "reference_backend is 'array_api_strict', the plan's is 'numpy'\n"
    )


def test_a_changed_matrix_is_one_line(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = swept.parent / "matrix.toml"
    matrix.write_text(MATRIX.replace("1e-30", "1e-3"))
    code, out, err = _replay(str(swept), capsys=capsys)
    assert (code, out) == (1, "")
    assert err == (
        f"diffcheck: sweep {swept}: the matrix {matrix} is not the one swept (its SHA-256 "
        "differs from the summary's); the summary cannot be re-derived from it\n"
    )


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path


def _claimed(path: tuple[str | int, ...]) -> bool:
    if path[0] in CLAIMED_TOP:
        return True
    return path[0] == "checks" and len(path) >= 3 and path[2] in CLAIMED_ROW


def _mutated(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 if value else 1.0
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return 0.5
    return None  # an empty list


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("audit")
    matrix = write_matrix(base, MATRIX)
    assert main(["sweep", str(matrix), "--out", str(base / "out"), "--quiet"]) == 1
    return base


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_every_derived_summary_field_edited_disagrees(
    genuine: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    summary = json.loads((genuine / "out" / "summary.json").read_text())
    paths = sorted((p for p in _leaves(summary) if not _claimed(p)), key=str)
    path = data.draw(st.sampled_from(paths), label="field")
    copy = tmp_path_factory.mktemp("edited")
    shutil.copy(genuine / "matrix.toml", copy / "matrix.toml")
    shutil.copytree(genuine / "out", copy / "out")
    summary["matrix"] = str(copy / "matrix.toml")
    target: Any = summary
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = _mutated(target[path[-1]])
    (copy / "out" / "summary.json").write_text(json.dumps(summary))
    try:
        agrees, refused = audit_sweep(copy / "out").agrees, ""
    except ReportError as error:  # a value of the wrong type: not a summary at all
        agrees, refused = False, str(error)
    assert not agrees, path
    assert refused == "" or "not a sweep summary" in refused, refused


def test_every_claimed_field_is_used_as_stored(genuine: Path, tmp_path: Path) -> None:
    # The other side of the property: the claimed fields are the only ones that may change.
    shutil.copy(genuine / "matrix.toml", tmp_path / "matrix.toml")
    shutil.copytree(genuine / "out", tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary["matrix"] = str(tmp_path / "matrix.toml")
    summary.update(executor="elsewhere", elapsed_s=1e6, diffcheck_version="0")
    summary["checks"][0].update(worker="exit 0 (claimed)", worker_wall_s=9.0)
    (tmp_path / "out" / "summary.json").write_text(json.dumps(summary))
    assert audit_sweep(tmp_path / "out").agrees


def _junit_lines(swept: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, err = _replay(str(swept), capsys=capsys)
    assert (code, out) == (1, "")
    prefix = f"{swept}: DISAGREES: "
    assert all(line.startswith(prefix) for line in err.splitlines())
    return [line.removeprefix(prefix) for line in err.splitlines()]


def test_each_edit_of_junit_is_named_case_by_case_and_in_the_totals(
    swept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = swept / "junit.xml"
    genuine = path.read_text()
    failure = re.search(r"<failure message=\"([^\"]*)\"", genuine)
    assert failure is not None
    message = failure.group(1).replace("&lt;", "<").replace("&gt;", ">")
    # A test case removed, and one without a name: each side's missing case is 'absent'.
    path.write_text(re.sub(rf'<testcase [^>]*name="{PASSING}"', "<testcase", genuine))
    assert _junit_lines(swept, capsys) == [
        f"junit.xml: test case {PASSING}: stored absent, derived passed",
        "junit.xml: test case : stored passed, derived absent",
    ]
    # A failure reported as an error, without its message; totals edited.
    edited = genuine.replace("<failure ", "<error ").replace("</failure>", "</error>")
    edited = re.sub(r'(<error )message="[^"]*"', r"\1", edited)
    for attribute in ("tests", "failures", "errors", "skipped"):
        edited = re.sub(rf'(<testsuites[^>]* {attribute}=")(\d+)"', r'\g<1>7"', edited)
    path.write_text(edited)
    lines = _junit_lines(swept, capsys)
    assert lines[0] == f"junit.xml: test case {FAILING}: stored error: , derived failure: {message}"
    assert lines[1:] == [
        "junit.xml: tests: stored 7, derived 2",
        "junit.xml: failures: stored 7, derived 1",
        "junit.xml: errors: stored 7, derived 0",
        "junit.xml: skipped: stored 7, derived 0",
    ]


def test_a_junit_that_is_a_link_is_unreadable(
    swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = swept / "junit.xml"
    elsewhere = tmp_path / "elsewhere.xml"
    shutil.copy(path, elsewhere)
    path.unlink()
    path.symlink_to(elsewhere)
    lines = _junit_lines(swept, capsys)
    assert len(lines) == 1
    assert lines[0] == f"{path}: unreadable ({path} is a symbolic link; it is not followed)"


def test_a_swept_directory_moved_with_its_matrix_beside_it_is_re_derived(
    swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = swept / "summary.json"
    data = json.loads(summary.read_text())
    shutil.copy(swept.parent / "matrix.toml", swept / "copied.toml")
    data["matrix"] = "copied.toml"  # relative, and not found from the current directory
    summary.write_text(json.dumps(data))
    code, out, err = _replay(str(swept), capsys=capsys)
    assert (code, err) == (0, "")
    data["matrix"] = "gone.toml"
    summary.write_text(json.dumps(data))
    code, out, err = _replay(str(swept), capsys=capsys)
    assert (code, out) == (1, "")
    assert err == (
        f"diffcheck: sweep {swept}: its matrix gone.toml is not here; the summary cannot be "
        "re-derived without it (run replay where the matrix is)\n"
    )


def test_junit_carries_the_summarys_counts_times_and_each_failures_detail(swept: Path) -> None:
    summary = json.loads((swept / "summary.json").read_text())
    root = ET.fromstring((swept / "junit.xml").read_bytes())
    assert (root.tag, root.attrib) == (
        "testsuites",
        {
            "name": "diffcheck sweep",
            "tests": "2",
            "failures": "1",
            "errors": "0",
            "skipped": "0",
            "time": f"{summary['elapsed_s']:.3f}",
        },
    )
    rows = {row["id"]: row for row in summary["checks"]}
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert list(cases) == [PASSING, FAILING]
    for name, case in cases.items():
        assert case.get("time") == f"{rows[name]['worker_wall_s']:.3f}"
        assert case.get("classname") == "diffcheck.array_api_strict.gemm"
    failure = cases[FAILING].find("failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == ("failed", rows[FAILING]["reason"])
    assert (failure.text or "").startswith("gemm 4x3x5 f32 seed 7: nmse ")
    assert (failure.text or "").endswith(f"; worker exit 0; report {FAILING}.json")
    passed = cases[PASSING].find("system-out")
    assert passed is not None
    assert (passed.text or "").startswith("gemm 1x3x5 f32 seed 42: nmse ")


def _copy_of(genuine: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    shutil.copy(genuine / "matrix.toml", tmp_path / "matrix.toml")
    shutil.copytree(genuine / "out", tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary["matrix"] = str(tmp_path / "matrix.toml")
    return tmp_path / "out", summary


def test_each_rows_ratio_and_time_come_from_its_report(genuine: Path) -> None:
    summary = json.loads((genuine / "out" / "summary.json").read_text())
    for row in summary["checks"]:
        report = json.loads((genuine / "out" / row["report"]).read_text())
        assert row["ratio"] == row["nmse"] / row["tolerance"], row["id"]
        assert row["elapsed_ms"] == report["execution_elapsed_ms"], row["id"]
    gemm = summary["groups"][0]
    assert (gemm["worst_check"], gemm["worst_ratio"]) == (FAILING, summary["checks"][1]["ratio"])


def test_what_the_parent_did_and_a_resume_are_used_as_stored(genuine: Path, tmp_path: Path) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    summary["checks"][0].update(parent_action="completed the report as failed", resumed=True)
    (out / "summary.json").write_text(json.dumps(summary))
    audit = audit_sweep(out)
    assert audit.disagreements == []
    assert audit.derived is not None
    first = audit.derived.checks[0]
    assert (first.parent_action, first.resumed) == ("completed the report as failed", True)


def test_a_row_missing_from_the_summary_is_named_and_its_worker_unknown(
    genuine: Path, tmp_path: Path
) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    del summary["checks"][0]  # the first: every later row is still compared
    summary["checks"][0].update(worker="exit 3", seed=8)
    (out / "summary.json").write_text(json.dumps(summary))
    audit = audit_sweep(out)
    assert audit.disagreements == [
        "summary.json: the rows are not the plan's checks in order",
        f"summary.json: no row for check {PASSING}",
        f"summary.json: {FAILING}.seed: stored 8, derived 7",
    ]
    assert audit.derived is not None
    assert [(row.id, row.worker, row.worker_wall_s) for row in audit.derived.checks] == [
        (PASSING, "unknown", None),
        (FAILING, "exit 3", summary["checks"][0]["worker_wall_s"]),
    ]


def test_a_row_twice_and_a_row_of_no_planned_check_are_named(genuine: Path, tmp_path: Path) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    summary["checks"].append(summary["checks"][0])
    summary["checks"].append({**summary["checks"][1], "id": "elsewhere"})
    (out / "summary.json").write_text(json.dumps(summary))
    assert audit_sweep(out).disagreements == [
        "summary.json: row elsewhere is not a check of the plan",
        "summary.json: a check has more than one row",
    ]


def test_each_missing_unreadable_or_incomplete_report_is_one_line(
    genuine: Path, tmp_path: Path
) -> None:
    out, _ = _copy_of(genuine, tmp_path)
    (out / f"{PASSING}.json").unlink()
    (out / f"{FAILING}.json").unlink()
    assert audit_sweep(out).disagreements == [
        f"{PASSING}.json: the planned check has no report",
        f"{FAILING}.json: the planned check has no report",
    ]
    (out / f"{PASSING}.json").write_text("not json\nsecond line")
    (out / f"{FAILING}.json").write_text("[]")
    lines = audit_sweep(out).disagreements
    assert len(lines) == 2
    assert all(line.startswith(f"report {out}/") for line in lines), lines
    assert all("\n" not in line and "None" not in line for line in lines), lines
    for check in (PASSING, FAILING):
        report = json.loads((genuine / "out" / f"{check}.json").read_text())
        report["completed"] = False
        (out / f"{check}.json").write_text(json.dumps(report))
    assert audit_sweep(out).disagreements == [
        f"{PASSING}.json: it is incomplete",
        f"{FAILING}.json: it is incomplete",
    ]


def test_a_summary_that_is_a_link_or_missing_is_refused(genuine: Path, tmp_path: Path) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(summary))
    (out / "summary.json").unlink()
    with pytest.raises(ReportError) as missing:
        audit_sweep(out)
    assert str(missing.value) == f"sweep {out}: no summary.json"
    (out / "summary.json").symlink_to(elsewhere)
    with pytest.raises(ReportError, match="is a symbolic link; it is not followed"):
        audit_sweep(out)


def test_a_summary_that_is_not_json_says_what_the_file_is(genuine: Path, tmp_path: Path) -> None:
    out, _ = _copy_of(genuine, tmp_path)
    (out / "summary.json").write_text("{")
    with pytest.raises(ReportError) as refused:
        audit_sweep(out)
    assert str(refused.value).startswith(f"{out / 'summary.json'}: not a sweep summary (")
    assert "report " not in str(refused.value)


def test_a_junit_case_turned_skipped_disagrees(genuine: Path, tmp_path: Path) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    (out / "summary.json").write_text(json.dumps(summary))
    path = out / "junit.xml"
    text = path.read_text()
    case = re.search(rf'<testcase [^>]*name="{PASSING}"[^>]*>', text)
    assert case is not None
    path.write_text(text.replace(case.group(0), case.group(0) + '<skipped message="later"/>'))
    assert audit_sweep(out).disagreements == [
        f"junit.xml: test case {PASSING}: stored skipped: later, derived passed"
    ]


def test_the_summary_is_indented_json_and_a_v1_row_that_is_no_object_is_refused(
    genuine: Path, tmp_path: Path
) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    assert (out / "summary.json").read_text().startswith('{\n  "schema_version": 3,\n  "matrix": ')
    for row in summary["checks"]:
        del row["not_independent"]
    summary["checks"][1] = "a row"
    (out / "summary.json").write_text(json.dumps(summary | {"schema_version": 1}))
    with pytest.raises(ReportError) as refused:
        audit_sweep(out)
    assert str(refused.value).startswith(f"{out / 'summary.json'}: not a sweep summary (checks.1: ")


def test_a_relative_matrix_is_read_from_the_current_directory_first(
    genuine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    summary["matrix"] = "matrix.toml"  # beside the sweep directory, not inside it
    (out / "summary.json").write_text(json.dumps(summary))
    monkeypatch.chdir(tmp_path)
    audit = audit_sweep(out)
    assert (audit.directory, audit.disagreements, audit.agrees) == (out, [], True)


def test_a_known_divergence_claimed_where_none_applies_is_one_line(
    genuine: Path, tmp_path: Path
) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    note = {"reason": "r", "upstream": "u", "bound": "b"}
    summary["checks"][0]["known_divergence"] = note
    (out / "summary.json").write_text(json.dumps(summary))
    assert audit_sweep(out).disagreements == [
        f"summary.json: {PASSING}.known_divergence: stored {note!r}, derived None"
    ]


@pytest.mark.parametrize(
    ("raised", "says"),
    [
        (MemoryError, "ran out of memory validating a {size}-byte sweep summary"),
        (RecursionError, "nested too deeply to be a sweep summary"),
    ],
)
def test_a_summary_too_large_or_deep_to_validate_is_one_line(
    genuine: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    raised: type[Exception],
    says: str,
) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    (out / "summary.json").write_text(json.dumps(summary))
    size = (out / "summary.json").stat().st_size

    def exhausted(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(SweepSummary, "model_validate", exhausted)
    with pytest.raises(ReportError) as refused:
        audit_sweep(out)
    assert str(refused.value) == f"{out / 'summary.json'}: {says.format(size=size)}"


def test_a_long_unknown_key_is_named_in_at_most_200_characters(
    genuine: Path, tmp_path: Path
) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    key = "k" * 199 + "XY"
    (out / "summary.json").write_text(json.dumps(summary | {key: 1}))
    with pytest.raises(ReportError) as refused:
        audit_sweep(out)
    assert str(refused.value) == (
        f"{out / 'summary.json'}: not a sweep summary ({key[:200]}: Extra inputs are not permitted)"
    )


def test_a_report_that_is_a_link_is_not_followed(genuine: Path, tmp_path: Path) -> None:
    out, _ = _copy_of(genuine, tmp_path)
    report = out / f"{FAILING}.json"
    elsewhere = tmp_path / "elsewhere.json"
    shutil.copy(report, elsewhere)
    report.unlink()
    report.symlink_to(elsewhere)
    assert audit_sweep(out).disagreements == [f"{report} is a symbolic link; it is not followed"]


def test_a_matrix_that_no_longer_plans_is_named_in_the_error(genuine: Path, tmp_path: Path) -> None:
    out, summary = _copy_of(genuine, tmp_path)
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(
        MATRIX.replace(
            'candidate = "array_api_strict"', 'candidate = "array_api_strict"\nprecisions = ["f16"]'
        )
    )
    summary["matrix_sha256"] = hashlib.sha256(matrix.read_bytes()).hexdigest()
    (out / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(ConfigError) as refused:
        audit_sweep(out)
    assert str(refused.value).startswith(f"matrix {matrix}: the matrix expands to no checks")
