"""Warm workers: reused across checks, replaced after a crash, a hang or N checks, and a crash
in one check never changes another check's report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import STRICT, write_matrix

from diffcheck.config import make_check
from diffcheck.report.replay import load_report, replay
from diffcheck.sweep.executors import LocalExecutor
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.pool import WarmWorkers
from diffcheck.sweep.run import run_sweep
from diffcheck.sweep.spec import WorkerSpec
from diffcheck.sweep.worker import FAULT_ENV

MATRIX = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 2, n = 3, k = 5 }, { m = 3, n = 3, k = 5 },
          { m = 4, n = 3, k = 5 }, { m = 5, n = 3, k = 5 }, { m = 6, n = 3, k = 5 }]
"""
IDS = [f"{STRICT}/gemm/gemm-{m}x3x5-f32-s42" for m in range(1, 7)]
FAULTED = {IDS[1]: "segv", IDS[3]: "abort", IDS[4]: "hang"}


def _evidence(path: Path) -> dict[str, Any]:
    """What a report says about its check: everything but timings and the environment."""
    data = json.loads(path.read_text())
    result = data["result"]
    return {"config": data["config"], "result": result}


def test_a_crash_or_hang_in_one_check_never_changes_another_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = write_matrix(tmp_path, MATRIX)
    plan = plan_matrix(load_matrix(matrix))
    clean, _ = run_sweep(
        plan, matrix=matrix, out=tmp_path / "clean", executor=LocalExecutor(1), timeout_s=30
    )
    assert clean.counts.passed == 6
    monkeypatch.setenv(FAULT_ENV, ",".join(f"{k}:{v}" for k, v in FAULTED.items()))
    # One job: every check goes through the same warm worker slot, one after the other.
    faulty, _ = run_sweep(
        plan,
        matrix=matrix,
        out=tmp_path / "faulty",
        executor=LocalExecutor(1, worker_checks=100),
        timeout_s=2,
    )
    rows = {row.id: row for row in faulty.checks}
    assert rows[IDS[1]].reason == "worker killed by signal SIGSEGV (11)"
    assert rows[IDS[3]].reason == "worker killed by signal SIGABRT (6)"
    assert rows[IDS[4]].reason == "worker exceeded the 2 s timeout; killed"
    for check_id in IDS:
        if check_id in FAULTED:
            continue
        assert rows[check_id].status == "passed"
        report = tmp_path / "faulty" / f"{check_id}.json"
        assert replay(load_report(report)).agrees
        # Bit for bit the report of a sweep in which nothing crashed.
        assert _evidence(report) == _evidence(tmp_path / "clean" / f"{check_id}.json")


def test_a_worker_is_reused_then_replaced_after_a_crash_or_n_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    warm = WarmWorkers(worker_checks=2)
    pids = []
    try:
        for index, fault in enumerate([None, None, None, "kill", None]):
            spec = WorkerSpec.of(f"c{index}", check, str(tmp_path / f"c{index}.json"))
            if fault is None:
                monkeypatch.delenv(FAULT_ENV, raising=False)
            else:
                monkeypatch.setenv(FAULT_ENV, f"c{index}:{fault}")
            outcome = warm.run(spec.model_dump_json(), 30.0)
            pids.append(warm._local.worker.process.pid if warm._local.worker else None)
            assert outcome.exit == ("killed by signal SIGKILL (9)" if fault else "exit 0")
    finally:
        warm.close()
    # c0 and c1 share a worker; N = 2 replaces it for c2; c3's crash discards c2's worker
    # (no worker left on the slot), and c4 gets a fresh one.
    assert pids[0] == pids[1]
    assert pids[2] != pids[1]
    assert pids[3] is None
    assert pids[4] not in (None, *pids[:3])
    for index in (0, 1, 2, 4):
        assert load_report(tmp_path / f"c{index}.json").result.status == "passed"  # type: ignore[union-attr]
    assert load_report(tmp_path / "c3.json").result.status == "failed"  # type: ignore[union-attr]
