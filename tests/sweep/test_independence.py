"""A sweep never counts a check whose two sides were one library as a pass.

``fastlib`` is NumPy registered under another name (tests/fakes.py): its reports say
``status: passed`` and ``computed_by`` names numpy on both sides. The sweep's summary,
JUnit, page and exit status count it as failed (not independent), ``replay SWEEP_DIR``
derives the same and names a summary that calls it passed, and ``--resume`` runs it again
instead of reusing it as a pass.

The adapter is registered for the worker processes too: a distribution's metadata
(``entry_points.txt``) in a directory on ``PYTHONPATH``, beside tests/ for ``fakes``.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import load_report
from diffcheck.runner import run_check
from diffcheck.sweep.reuse import independence_problem, reuse_problem
from forgery import as_v2

TESTS = Path(__file__).resolve().parents[1]
ONE_LIBRARY = "numpy-vs-fastlib/gemm/gemm-4x8x6-f32-s42"
GENUINE = "numpy-vs-array_api_strict/gemm/gemm-4x8x6-f32-s42"

MATRIX = """
schema_version = 1
[[pairs]]
candidate = "fastlib"
required = true
[[pairs]]
candidate = "array_api_strict"
required = true
[ops.gemm]
shapes = [{ m = 4, n = 8, k = 6 }]
"""


def _install(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    target: str,
) -> str:
    """Backend ``name`` (``target``, in tests/fakes.py) installed in this process and in
    every worker it starts."""
    site = tmp_path_factory.mktemp("site")
    info = site / f"{name}_test-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-test\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(f"[diffcheck.adapters]\n{name} = {target}\n")
    monkeypatch.syspath_prepend(str(site))
    path = [str(site), str(TESTS), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in path if p))
    return name


@pytest.fixture
def fastlib(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> str:
    """``fastlib`` installed as a backend in this process and in every worker it starts."""
    return _install(tmp_path_factory, monkeypatch, "fastlib", "fakes:NumpyUnderAnotherName")


@pytest.fixture
def swept(
    fastlib: str, tmp_path: Path, sweep_cli: Callable[..., SweepRun]
) -> tuple[Path, SweepRun]:
    matrix = write_matrix(tmp_path, MATRIX)
    return matrix, sweep_cli(matrix, tmp_path / "out")


def _replay(directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["replay", str(directory)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _junit_case(directory: Path, name: str) -> ET.Element:
    root = ET.fromstring((directory / "junit.xml").read_bytes())
    (case,) = [c for c in root.iter("testcase") if c.get("name") == name]
    return case


def test_a_one_library_pass_fails_the_sweep_in_every_view(swept: tuple[Path, SweepRun]) -> None:
    _, run = swept
    assert run.code == 1
    summary = run.summary
    assert summary["schema_version"] == 3
    rows = run.rows()
    one = rows[ONE_LIBRARY]
    assert one["status"] == "passed"  # the report's own status, kept
    assert one["not_independent"] == (
        "NOT INDEPENDENT: both sides returned numpy arrays (the candidate computed with the "
        "reference's own library); like a self-test, never a pass for the backend"
    )
    assert rows[GENUINE]["not_independent"] is None  # a wrapper with arrays of its own
    assert summary["counts"] == {"total": 2, "passed": 1, "failed": 1, "known": 0, "not_run": 0}
    groups = {g["candidate"]: g for g in summary["groups"]}
    assert (groups["fastlib"]["passed"], groups["fastlib"]["failed"]) == (0, 1)
    assert summary["exit_status"] == 1
    assert summary["exit_reasons"] == [
        "1 check passed with both sides from one library (NOT INDEPENDENT: never a pass for "
        "the backend)"
    ]

    case = _junit_case(run.directory, ONE_LIBRARY)
    (failure,) = list(case)
    assert (failure.tag, failure.get("type")) == ("failure", "not_independent")
    assert failure.get("message", "").startswith("NOT INDEPENDENT: both sides returned numpy")
    assert [child.tag for child in _junit_case(run.directory, GENUINE)] == ["system-out"]
    root = ET.fromstring((run.directory / "junit.xml").read_bytes())
    assert root.get("failures") == "1"

    page = (run.directory / "index.html").read_text()
    assert f"data-status='failed' id='{ONE_LIBRARY}'" in page
    assert "NOT INDEPENDENT: both sides returned numpy" in page


def test_replay_of_the_sweep_derives_the_same(
    swept: tuple[Path, SweepRun], capsys: pytest.CaptureFixture[str]
) -> None:
    _, run = swept
    code, out, err = _replay(run.directory, capsys)
    assert (code, err) == (0, "")
    assert "sweep exit status 1" in out
    assert main(["replay", "--require-pass", str(run.directory)]) == 1


def _forge_green(directory: Path) -> None:
    """The summary and JUnit as an older sweep (or a forger) wrote them: the pass counted."""
    path = directory / "summary.json"
    summary: dict[str, Any] = json.loads(path.read_text())
    for row in summary["checks"]:
        row["not_independent"] = None
    summary["counts"] |= {"passed": 2, "failed": 0}
    for group in summary["groups"]:
        group |= {"passed": 1, "failed": 0}
    summary |= {"exit_status": 0, "exit_reasons": []}
    path.write_text(json.dumps(summary))
    junit = directory / "junit.xml"
    text = junit.read_text()
    start = text.index('<failure message="NOT INDEPENDENT')
    end = text.index("</failure>", start) + len("</failure>")
    green = text[:start] + "<system-out>passed</system-out>" + text[end:]
    junit.write_text(green.replace('failures="1"', 'failures="0"'))


def test_a_summary_that_calls_it_passed_disagrees_where_it_does(
    swept: tuple[Path, SweepRun], capsys: pytest.CaptureFixture[str]
) -> None:
    _, run = swept
    _forge_green(run.directory)
    code, out, err = _replay(run.directory, capsys)
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    expected = [
        "summary.json: counts.passed: stored 2, derived 1",
        "summary.json: counts.failed: stored 0, derived 1",
        "summary.json: exit_status: stored 0, derived 1",
        f'summary.json: {ONE_LIBRARY}.not_independent: stored None, derived "NOT INDEPENDENT',
        f"junit.xml: test case {ONE_LIBRARY}: stored passed, derived failure: NOT INDEPENDENT",
        "junit.xml: failures: stored 0, derived 1",
    ]
    for part in expected:
        assert any(part in line for line in lines), (part, err)


def test_a_v1_summary_that_counted_it_passed_disagrees(
    swept: tuple[Path, SweepRun], capsys: pytest.CaptureFixture[str]
) -> None:
    # What a diffcheck before summary v2 wrote for this sweep: v1 rows have no
    # not_independent, and it counted the pass.
    _, run = swept
    _forge_green(run.directory)
    path = run.directory / "summary.json"
    summary = json.loads(path.read_text())
    for row in summary["checks"]:
        del row["not_independent"]
    path.write_text(json.dumps(summary | {"schema_version": 1}))
    code, _, err = _replay(run.directory, capsys)
    assert code == 1
    assert "summary.json: exit_status: stored 0, derived 1" in err
    assert f"{ONE_LIBRARY}.not_independent: stored None" in err


def test_a_v1_summary_of_independent_pairs_still_agrees(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun], capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = write_matrix(tmp_path, MATRIX.replace('candidate = "fastlib"', 'candidate = "mlx"'))
    pytest.importorskip("mlx")
    run = sweep_cli(matrix, tmp_path / "out")
    assert run.code == 0, run.err
    path = run.directory / "summary.json"
    summary = json.loads(path.read_text())
    for row in summary["checks"]:
        assert row.pop("not_independent") is None
    path.write_text(json.dumps(summary | {"schema_version": 1}))
    code, out, err = _replay(run.directory, capsys)
    assert (code, err) == (0, ""), err
    assert "sweep exit status 0" in out


def test_resume_runs_a_one_library_report_again_instead_of_reusing_it(
    swept: tuple[Path, SweepRun], sweep_cli: Callable[..., SweepRun]
) -> None:
    matrix, run = swept
    report = run.directory / f"{ONE_LIBRARY}.json"
    before = report.read_bytes()
    again = sweep_cli(matrix, run.directory, "--resume")
    assert again.code == 1
    rows = again.rows()
    assert rows[GENUINE]["resumed"] is True  # the independent pass is reused
    assert rows[ONE_LIBRARY]["resumed"] is False  # this one ran again
    assert rows[ONE_LIBRARY]["not_independent"] is not None
    assert again.summary["counts"]["failed"] == 1
    # The earlier report was moved aside, never deleted or overwritten.
    (aside,) = report.parent.glob("gemm-4x8x6-f32-s42.*.json")
    assert aside.read_bytes() == before


def test_a_planted_one_library_report_is_not_reused_as_a_pass(fastlib: str, tmp_path: Path) -> None:
    check = make_check(fastlib, "gemm", m=4, n=8, k=6)
    report = tmp_path / "r.json"
    run_check(check, report)
    document = load_report(report)
    assert document.result is not None
    assert document.result.status == "passed"
    problem = reuse_problem(check, document)
    assert problem == "both sides are one library (NOT INDEPENDENT): it is never reused as a pass"


def _strict_report(tmp_path: Path) -> tuple[Any, Path]:
    check = make_check("array_api_strict", "gemm", m=4, n=8, k=6)
    report = tmp_path / "strict.json"
    run_check(check, report)
    return check, report


def test_a_pass_without_computed_by_is_never_reused(tmp_path: Path) -> None:
    check, report = _strict_report(tmp_path)
    assert reuse_problem(check, load_report(report)) is None  # v3, two libraries: reused
    data = json.loads(report.read_text())
    old = tmp_path / "v2.json"
    old.write_text(json.dumps(as_v2(data)))
    problem = reuse_problem(check, load_report(old))
    assert problem == (
        "a pass of schema v2 that does not record which library computed each side "
        "(computed_by) is never reused"
    )
    # A v3 report whose computed_by was removed (or upgraded from v2) is the same.
    data["computed_by"] = None
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data))
    problem = reuse_problem(check, load_report(bare))
    assert problem is not None
    assert problem.startswith("a pass of schema v4 that does not record which library ")


def test_a_failure_without_computed_by_may_be_reused(tmp_path: Path) -> None:
    # Reusing a failure cannot pass anything: only passes need an independent pair.
    _, report = _strict_report(tmp_path)
    document = load_report(report)
    assert document.result is not None
    failed = document.result.model_copy(update={"status": "failed"})
    for computed_by in (document.computed_by, None):  # type: ignore[attr-defined]
        passed = document.model_copy(update={"computed_by": computed_by})
        assert (independence_problem(passed) is None) == (computed_by is not None)
        assert independence_problem(passed.model_copy(update={"result": failed})) is None


def test_numpy_behind_a_namespace_with_a_sum_of_its_own_is_no_pass_in_a_sweep(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    sweep_cli: Callable[..., SweepRun],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # wraplib's float64 sum differs from NumPy's; its exp and matmul are NumPy's bits: one
    # library by the probes, so not counted passed (one sum alone counted it).
    _install(tmp_path_factory, monkeypatch, "wraplib", "fakes:WrapLib")
    matrix = write_matrix(
        tmp_path, MATRIX.replace('candidate = "fastlib"', 'candidate = "wraplib"')
    )
    run = sweep_cli(matrix, tmp_path / "out")
    assert run.code == 1
    row = run.rows()["numpy-vs-wraplib/gemm/gemm-4x8x6-f32-s42"]
    assert row["status"] == "passed"
    assert (row["not_independent"] or "").startswith("NOT INDEPENDENT: both sides returned numpy")
    assert run.summary["counts"] == {
        "total": 2,
        "passed": 1,
        "failed": 1,
        "known": 0,
        "not_run": 0,
    }
    code, out, _ = _replay(run.directory, capsys)
    assert code == 0
    assert "sweep exit status 1" in out
