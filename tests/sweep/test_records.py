"""The parent's records: complete only what is incomplete, never overwrite, never delete."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.errors import ReportError
from diffcheck.report.replay import load_report, replay
from diffcheck.report.writer import ReportWriter
from diffcheck.runner import run_check
from diffcheck.sweep.isolate import WorkerOutcome, describe_exit, prepare_report_path
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.records import (
    ReportState,
    new_document,
    read_state,
    set_aside,
    set_aside_latest,
    settle_report,
)
from diffcheck.sweep.summary import build_row

CHECK = make_check("array_api_strict", "gemm", m=1, n=3, k=5)


def test_a_complete_report_is_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    run_check(CHECK, path)
    before = path.read_bytes()
    settled = settle_report(path, CHECK, "worker killed by signal SIGKILL (9)")
    assert settled.action is None
    assert settled.document.result is not None
    assert settled.document.result.status == "passed"
    assert path.read_bytes() == before


def test_an_incomplete_report_is_completed_as_failed_from_its_own_record(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    incomplete = new_document(CHECK)
    ReportWriter(path).write(incomplete)
    settled = settle_report(
        path, CHECK, "worker exceeded the 60 s timeout; killed", elapsed_ms=12.5
    )
    document = load_report(path)
    assert settled.action == "completed the worker's incomplete report as failed"
    assert settled.document == document  # what was written is what the sweep summarizes
    assert document.completed
    assert document.finished_at is not None
    assert document.started_at == incomplete.started_at
    assert document.execution_elapsed_ms == 12.5
    assert document.result is not None
    assert document.result.reason == "worker exceeded the 60 s timeout; killed"
    assert document.result.tolerance == CHECK.max_nmse
    assert replay(document).agrees
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("content", [None, b"", b"{not json", b'{"schema_version": 1}'])
def test_a_missing_or_unreadable_report_gets_a_new_failed_one_and_the_old_is_kept(
    tmp_path: Path, content: bytes | None
) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_bytes(content)
    settled = settle_report(path, CHECK, None, elapsed_ms=7.5)
    document = load_report(path)
    assert settled.document == document
    assert document.execution_elapsed_ms == 7.5  # the worker's wall time
    assert document.result is not None
    assert document.result.status == "failed"
    assert document.result.reason == "worker exited without completing its report"
    assert settled.action == "wrote a failed report (the worker left none)"
    if content is None:
        assert settled.moved_aside is None
    else:
        assert settled.moved_aside == tmp_path / "r.incomplete.json"
        assert settled.moved_aside.read_bytes() == content


def test_an_incomplete_report_of_another_check_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    other = make_check("array_api_strict", "gemm", m=2, n=3, k=5)
    ReportWriter(path).write(new_document(other))
    settled = settle_report(path, CHECK, "worker killed by signal SIGKILL (9)")
    assert settled.moved_aside is not None
    assert json.loads(settled.moved_aside.read_text())["config"]["m"] == 2
    assert load_report(path).config.m == 1  # type: ignore[attr-defined]


def test_set_aside_never_overwrites_earlier_evidence(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    moved = []
    for index in range(3):
        path.write_text(str(index))
        moved.append(set_aside(path))
    assert [p.name for p in moved] == [
        "r.incomplete.json",
        "r.incomplete-2.json",
        "r.incomplete-3.json",
    ]
    assert [p.read_text() for p in moved] == ["0", "1", "2"]
    assert not path.exists()


def test_prepare_keeps_complete_and_moves_incomplete(tmp_path: Path) -> None:
    complete, incomplete = tmp_path / "a.json", tmp_path / "b.json"
    run_check(CHECK, complete)
    ReportWriter(incomplete).write(new_document(CHECK))
    assert prepare_report_path(complete) == (True, None)
    assert prepare_report_path(incomplete) == (False, tmp_path / "b.incomplete.json")
    assert read_state(incomplete) == (ReportState.MISSING, None)
    assert prepare_report_path(tmp_path / "none.json") == (False, None)


def test_exit_descriptions() -> None:
    assert describe_exit(0) == "exit 0"
    assert describe_exit(3) == "exit 3"
    assert describe_exit(-9) == "killed by signal SIGKILL (9)"
    assert describe_exit(-11) == "killed by signal SIGSEGV (11)"


def test_set_aside_gives_up_after_9999_earlier_reports(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    for attempt in range(1, 10_000):
        suffix = ".incomplete" if attempt == 1 else f".incomplete-{attempt}"
        os.close(os.open(tmp_path / f"r{suffix}.json", os.O_CREAT | os.O_WRONLY))
    path.write_text("evidence")
    with pytest.raises(ReportError) as refused:
        set_aside(path)
    assert str(refused.value) == f"move {path} aside: too many earlier incomplete reports"
    assert path.read_text() == "evidence"  # nothing was overwritten, nothing removed


def test_a_report_that_cannot_be_moved_aside_is_one_line(tmp_path: Path) -> None:
    absent = tmp_path / "absent.json"
    with pytest.raises(ReportError) as refused:
        set_aside(absent)
    assert str(refused.value) == f"move {absent} aside: No such file or directory"
    with pytest.raises(ReportError) as refused:
        set_aside_latest(absent, label="not_run")
    assert str(refused.value) == f"move {absent} aside: No such file or directory"
    (tmp_path / "file").write_text("")
    inside = tmp_path / "file" / "r.json"  # under a regular file: nothing can be looked up
    with pytest.raises(ReportError) as refused:
        set_aside_latest(inside, label="not_run")
    assert str(refused.value) == f"move {inside} aside: Not a directory"


def test_a_lifecycle_rows_segments_carry_each_phases_nmse(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(
        "schema_version = 1\n[[pairs]]\ncandidate = 'array_api_strict'\n"
        "[ops.context-lifecycle]\nshapes = [{ tokens = 3, intermediate = 33, k = 35 }]\n"
    )
    [planned] = plan_matrix(load_matrix(matrix)).checks
    document = run_check(planned.check, tmp_path / "r.json")
    row = build_row(planned, document, WorkerOutcome(planned.id, "r.json", "exit 0", 0.1))
    assert document.segments
    expected = [
        (s.name, s.status, None if s.metrics is None else s.metrics.nmse) for s in document.segments
    ]
    assert [(s.name, s.status, s.nmse) for s in row.segments] == expected
    assert any(nmse is not None for _, _, nmse in expected)


def _lifecycle_row_parts(tmp_path: Path) -> tuple[Any, Any]:
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(
        "schema_version = 1\n[[pairs]]\ncandidate = 'array_api_strict'\n"
        "[ops.context-lifecycle]\nshapes = [{ tokens = 3, intermediate = 33, k = 35 }]\n"
    )
    [planned] = plan_matrix(load_matrix(matrix)).checks
    return planned, run_check(planned.check, tmp_path / "r.json")


def _with_nmse(document: Any, nmse: float) -> Any:
    metrics = document.result.metrics.model_copy(update={"nmse": nmse})
    return document.model_copy(
        update={"result": document.result.model_copy(update={"metrics": metrics})}
    )


def test_a_rows_ratio_and_time_are_its_reports_nmse_over_the_tolerance_and_its_elapsed(
    tmp_path: Path,
) -> None:
    planned, document = _lifecycle_row_parts(tmp_path)
    outcome = WorkerOutcome(planned.id, "r.json", "exit 0", 0.1)
    row = build_row(planned, document, outcome)
    tolerance = planned.check.max_nmse
    assert 0.0 < tolerance < 1.0
    assert row.nmse is not None
    assert row.nmse > 0.0
    assert row.ratio == row.nmse / tolerance
    assert document.execution_elapsed_ms is not None
    assert row.elapsed_ms == document.execution_elapsed_ms
    # An NMSE that is no number is infinitely far over any tolerance.
    assert build_row(planned, _with_nmse(document, float("nan")), outcome).ratio == math.inf
    # With no positive tolerance there is no ratio to give.
    untolerant = replace(planned, check=replace(planned.check, max_nmse=0.0))
    assert build_row(untolerant, document, outcome).ratio is None


def test_a_segment_without_metrics_has_no_nmse_in_its_row(tmp_path: Path) -> None:
    planned, document = _lifecycle_row_parts(tmp_path)
    first = document.segments[0].model_copy(update={"metrics": None})
    bare = document.model_copy(update={"segments": [first, *document.segments[1:]]})
    row = build_row(planned, bare, WorkerOutcome(planned.id, "r.json", "exit 0", 0.1))
    assert (row.segments[0].name, row.segments[0].nmse) == (first.name, None)
    assert row.segments[1].nmse == document.segments[1].metrics.nmse
