"""Workers never outlive their sweep, and never replace a report they did not create."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import STRICT, write_matrix

from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.errors import ReportError
from diffcheck.runner import run_check
from diffcheck.sweep.records import run_guarded, set_aside
from diffcheck.sweep.worker import FAULT_ENV

HUNG = f"{STRICT}/gemm/gemm-1x3x5-f32-s42"
MATRIX = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }]
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie is dead
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("how", "isolation"),
    [(signal.SIGKILL, "warm"), (signal.SIGTERM, "cold")],
    ids=["SIGKILL-warm", "SIGTERM-cold"],
)
def test_a_hung_worker_dies_with_its_killed_parent(
    tmp_path: Path, how: signal.Signals, isolation: str
) -> None:
    matrix = write_matrix(tmp_path, MATRIX)
    out = tmp_path / "out"
    environment = dict(os.environ, **{FAULT_ENV: f"{HUNG}:hang"})
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diffcheck",
            "sweep",
            str(matrix),
            "--out",
            str(out),
            "--quiet",
            "--timeout",
            "300",
            "--isolation",
            isolation,
        ],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = out / f"{HUNG}.worker.log"
    try:
        deadline = time.monotonic() + 60
        found = None
        while time.monotonic() < deadline and found is None:
            if log.exists():
                found = re.search(r"test fault 'hang' injected \(pid (\d+)\)", log.read_text())
            time.sleep(0.05)
        assert found is not None, "the worker never reached its hanging check"
        worker = int(found[1])
        assert not _gone(worker)
        parent.send_signal(how)
        parent.wait(30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not _gone(worker):
            time.sleep(0.05)
        assert _gone(worker), f"worker {worker} outlived its sweep parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    # The report stays incomplete for --resume; nothing replaced it behind the sweep's back.
    assert b'"completed": false' in (out / f"{HUNG}.json").read_bytes()


def test_a_worker_never_replaces_a_report_completed_behind_it(tmp_path: Path) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    path = tmp_path / "r.json"
    settled = tmp_path / "settled.json"
    run_check(check, settled)
    candidate = resolve(check.require_backend)
    original = candidate.execute

    def execute(*args: Any, **kwargs: Any) -> Any:
        # While this check runs, a rerun moves its report aside and completes a new one.
        set_aside(path)
        path.write_bytes(settled.read_bytes())
        return original(*args, **kwargs)

    candidate.execute = execute  # type: ignore[method-assign]
    with pytest.raises(ReportError, match="was moved or replaced while its check ran"):
        run_guarded(check, path, candidate)
    assert path.read_bytes() == settled.read_bytes()
    assert b'"completed": false' in (tmp_path / "r.incomplete.json").read_bytes()
    assert not list(tmp_path.glob(".*.tmp"))
