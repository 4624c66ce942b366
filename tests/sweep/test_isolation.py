"""Each check in its own worker: a killed, hung, aborted or exiting worker fails only its check."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sweep_helpers import FAULT_TIMEOUT_S, FAULTS, HEALTHY, STRICT, SweepRun

from diffcheck.report.replay import load_report, replay

CAUSES = {
    "kill": "worker killed by signal SIGKILL (9)",
    "hang": f"worker exceeded the {FAULT_TIMEOUT_S:g} s timeout; killed",
    "abort": "worker killed by signal SIGABRT (6)",
    "exit": re.compile(
        r"worker exited with status 3: diffcheck sweep worker: test fault 'exit' injected"
        r" \(pid \d+\)"
    ),
}


def _cause(fault: str, reason: str) -> bool:
    expected = CAUSES[fault]
    return (
        bool(expected.fullmatch(reason)) if isinstance(expected, re.Pattern) else reason == expected
    )


def test_faulty_workers_become_failed_reports_with_the_cause(fault_sweep: SweepRun) -> None:
    rows = fault_sweep.rows()
    for check_id, fault in FAULTS.items():
        row = rows[check_id]
        assert row["status"] == "failed", check_id
        assert _cause(fault, row["reason"]), row["reason"]
        assert row["parent_action"] == "completed the worker's incomplete report as failed"
        document = load_report(fault_sweep.directory / f"{check_id}.json")
        assert document.completed
        assert document.result is not None
        assert document.result.status == "failed"
        assert _cause(fault, document.result.reason or "")
        assert document.result.actual is None
        assert document.result.metrics is None
        # A failed record with no outputs is consistent evidence: replay agrees with it.
        assert replay(document).agrees
        log = fault_sweep.directory / f"{check_id}.worker.log"
        assert f"test fault {fault!r} injected" in log.read_text()
    hung = rows[f"{STRICT}/rms-norm/rms-norm-3x33-eps1e-05-f32-s9"]
    assert FAULT_TIMEOUT_S <= hung["worker_wall_s"] < FAULT_TIMEOUT_S + 5


def test_every_other_check_completed_and_replays(fault_sweep: SweepRun) -> None:
    rows = fault_sweep.rows()
    for check_id in HEALTHY:
        assert rows[check_id]["status"] == "passed"
        assert rows[check_id]["worker"] == "exit 0"
        document = load_report(fault_sweep.directory / f"{check_id}.json")
        outcome = replay(document)
        assert outcome.agrees, outcome.disagreements
        assert outcome.status == "passed"
        assert not (fault_sweep.directory / f"{check_id}.worker.log").exists()
    lifecycle = rows[HEALTHY[1]]
    # array_api_strict has no command contexts: the lifecycle ran as four independent
    # chains, and its segments say so rather than claiming submission phases.
    assert [s["name"] for s in lifecycle["segments"]] == ["chain0", "chain1", "chain2", "chain3"]
    assert all(s["nmse"] < lifecycle["tolerance"] for s in lifecycle["segments"])


def test_a_pair_without_an_adapter_is_not_run_with_the_reason(fault_sweep: SweepRun) -> None:
    missing = [r for r in fault_sweep.summary["checks"] if r["candidate"] == "no_such_backend"]
    assert len(missing) == 6
    for row in missing:
        assert row["status"] == "not_run"
        assert 'unsupported required backend "no_such_backend"' in row["reason"]
        assert row["worker"] == "not started: no adapter"
        assert replay(load_report(fault_sweep.directory / row["report"])).agrees


def test_no_report_is_left_incomplete_and_the_sweep_fails(fault_sweep: SweepRun) -> None:
    reports = [
        p
        for p in fault_sweep.directory.rglob("*.json")
        if p.name not in ("summary.json",) and not p.name.startswith(".")
    ]
    assert len(reports) == 12
    assert all(json.loads(p.read_text())["completed"] for p in reports)
    assert not list(fault_sweep.directory.rglob("*.tmp"))
    assert fault_sweep.code == 1
    summary = fault_sweep.summary
    assert summary["counts"] == {"total": 12, "passed": 2, "failed": 4, "known": 0, "not_run": 6}
    assert summary["exit_reasons"] == ["4 checks failed"]
    assert "Sweep failed: 4 checks failed" in fault_sweep.out
    assert f"html: {fault_sweep.directory / 'index.html'}" in fault_sweep.out
    assert fault_sweep.err == ""


def test_groups_give_counts_and_the_worst_ratio(fault_sweep: SweepRun) -> None:
    groups = {(g["candidate"], g["op"]): g for g in fault_sweep.summary["groups"]}
    gemm = groups[("array_api_strict", "gemm")]
    assert (gemm["passed"], gemm["failed"], gemm["not_run"]) == (1, 2, 0)
    assert gemm["worst_check"] == HEALTHY[0]
    assert gemm["worst_ratio"] == gemm["worst_nmse"] / gemm["worst_tolerance"]
    assert groups[("no_such_backend", "gemm")]["worst_ratio"] is None


def test_summary_matches_its_schema(fault_sweep: SweepRun) -> None:
    import jsonschema

    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "reports/schema/summary-v3.json").read_text()
    )
    jsonschema.validate(fault_sweep.summary, schema)
