"""run_isolated on its own: an interrupted worker leaves its report incomplete for --resume."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from diffcheck.config import make_check
from diffcheck.report.replay import load_report
from diffcheck.sweep.isolate import run_isolated
from diffcheck.sweep.spec import WorkerSpec
from diffcheck.sweep.worker import FAULT_ENV


def test_an_interrupted_worker_is_killed_and_its_report_stays_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    report = tmp_path / "r.json"
    monkeypatch.setenv(FAULT_ENV, "r:hang")
    spec = WorkerSpec.of("r", check, str(report)).model_dump_json()
    stop = threading.Event()

    def stop_once_the_incomplete_record_exists() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (report.exists() and report.stat().st_size):
            time.sleep(0.02)
        time.sleep(0.1)  # the worker is now inside the hanging execute (or about to be)
        stop.set()

    stopper = threading.Thread(target=stop_once_the_incomplete_record_exists)
    stopper.start()
    try:
        outcome = run_isolated(spec, 60.0, stop=stop)
    finally:
        stop.set()
        stopper.join()
    assert outcome.exit == "interrupted: the sweep was stopped; worker killed"
    assert outcome.wall_s is not None
    assert outcome.wall_s < 30
    assert outcome.action is None
    assert not load_report(report).completed
    log = tmp_path / "r.worker.log"
    assert "test fault 'hang' injected" in log.read_text()

    # The rerun moves the incomplete report aside and appends to (never truncates) the log.
    monkeypatch.delenv(FAULT_ENV)
    rerun = run_isolated(spec, 60.0)
    assert rerun.exit == "exit 0"
    assert rerun.moved_aside == str(tmp_path / "r.incomplete.json")
    assert load_report(report).completed
    assert not load_report(tmp_path / "r.incomplete.json").completed
    text = log.read_text()
    assert "test fault 'hang' injected" in text
    assert "--- rerun of r at " in text


def test_a_complete_report_is_reused_without_a_worker(tmp_path: Path) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    spec = WorkerSpec.of("r", check, str(tmp_path / "r.json")).model_dump_json()
    first = run_isolated(spec, 60.0)
    again = run_isolated(spec, 60.0)
    assert (first.exit, first.reused) == ("exit 0", False)
    assert (again.exit, again.reused, again.wall_s) == (
        "not run: report already complete",
        True,
        None,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
