"""A helper a check starts in a session of its own does not outlive the sweep."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.sweep.descendants import TOKEN_ENV, end_tagged, new_token, tagged
from diffcheck.sweep.worker import FAULT_ENV

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7] }]
"""
SECOND = f"{STRICT}/gemm/gemm-4x3x5-f32-s7"

Sweep = Callable[..., SweepRun]


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for an init that may not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_daemon_started_by_a_check_ends_with_its_worker(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch, isolation: str
) -> None:
    monkeypatch.setenv(FAULT_ENV, f"{SECOND}:helper")
    run = sweep_cli(write_matrix(tmp_path, TWO), tmp_path / "out", "--isolation", isolation)
    log = (tmp_path / "out" / f"{SECOND}.worker.log").read_text()
    found = re.search(r"test helper pid (\d+)", log)
    assert found is not None, log
    pid = int(found.group(1))
    try:
        assert run.code == 0, run.err  # the check itself ran and passed
        deadline = time.monotonic() + 5.0
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(pid), "the helper outlived the sweep"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc (Linux)")
def test_only_the_tokens_processes_are_ended() -> None:
    token, other = new_token(), new_token()
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    mine = subprocess.Popen(sleeper, env=dict(os.environ, **{TOKEN_ENV: token}))
    theirs = subprocess.Popen(sleeper, env=dict(os.environ, **{TOKEN_ENV: other}))
    try:
        assert tagged(token) == [mine.pid]
        assert end_tagged(token) == 1
        assert mine.wait(5) == -signal.SIGKILL
        assert theirs.poll() is None
    finally:
        theirs.kill()
        theirs.wait()
