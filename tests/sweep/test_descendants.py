"""A helper a check starts in a session of its own does not outlive the sweep."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.sweep import reaper
from diffcheck.sweep.descendants import TOKEN_ENV, end_tagged, new_token, tagged
from diffcheck.sweep.worker import FAULT_ENV, MARKER_ENV

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


ONE = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5, seeds = [1] }]
"""
ONLY = f"{STRICT}/gemm/gemm-1x3x5-f32-s1"
#: How the worker ends after starting both helpers: (faults, --timeout, status, reason part).
ENDINGS = {
    "end": ("setsid+envless", "60", "passed", ""),
    "crash": ("setsid+envless+kill", "60", "failed", "killed by signal SIGKILL"),
    "timeout": ("setsid+envless+hang", "4", "failed", "timeout"),
}


def _marked(marker: str, *, first: bool = False) -> list[int]:
    """Live processes whose command line holds ``marker`` (as its first word, with ``first``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        held = argv[:1] if first else argv
        if marker.encode() in held and _running(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux")
@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_helpers_that_leave_the_session_and_the_environment_end_with_the_sweep(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch, isolation: str, ending: str
) -> None:
    """setsid and env -i helpers end whether the worker ends, crashes or times out."""
    faults, timeout, status, reason = ENDINGS[ending]
    marker = f"diffcheck-test-helper-{uuid.uuid4().hex}"
    monkeypatch.setenv(MARKER_ENV, marker)
    monkeypatch.setenv(FAULT_ENV, f"{ONLY}:{faults}")
    try:
        run = sweep_cli(
            write_matrix(tmp_path, ONE),
            tmp_path / "out",
            *("--isolation", isolation, "--timeout", timeout),
        )
        row = run.rows()[ONLY]
        assert row["status"] == status, row
        assert reason in str(row["reason"]), row
        log = (tmp_path / "out" / f"{ONLY}.worker.log").read_text()
        assert "test helper pid" in log, log  # both helpers really started
        assert "test helper without environment" in log, log
        deadline = time.monotonic() + 2.0
        while _marked(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(marker) == [], "helpers outlived the sweep"
    finally:
        for pid in _marked(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux")
def test_the_sweep_parent_ends_orphans_only() -> None:
    """An orphan re-parented to the sweep ends; its own children and earlier ones do not."""
    marker = f"diffcheck-test-orphan-{uuid.uuid4().hex}"
    daemon = (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    os.execv(sys.argv[1], [sys.argv[2], '300'])\n"
        "os._exit(0)\n"
    )
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    earlier = subprocess.Popen(sleeper, start_new_session=True)  # a child from before
    same_session = None
    try:
        with reaper.adopting() as adopting:
            assert adopting
            same_session = subprocess.Popen(sleeper)  # the program's own, in its session
            subprocess.run([sys.executable, "-c", daemon, "/bin/sleep", marker], check=True)
            # The daemon's parent exits at once; its child calls setsid, then execs the marked
            # sleep a moment later (seconds on a loaded machine). The marker is in its command
            # line before the exec too, when it may still be in this session: wait for the
            # exec (the marker as argv[0]) before looking for orphans.
            deadline = time.monotonic() + 30.0
            while not (orphans := _marked(marker, first=True)) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(orphans) == 1
            assert Path(f"/proc/{orphans[0]}/stat").read_text().split()[3] == str(os.getpid())
            assert reaper.end_orphans() == 1
            assert _marked(marker) == []
            assert same_session.poll() is None
            assert earlier.poll() is None
    finally:
        for child in (earlier, same_session):
            if child is not None:
                child.kill()
                child.wait()
        for pid in _marked(marker):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux")
def test_a_stopped_subreaper_worker_loses_its_whole_tree() -> None:
    """Killing a worker kills what it orphaned in other sessions, found in its tree."""
    marker = f"diffcheck-test-tree-{uuid.uuid4().hex}"
    worker = (
        "import os, subprocess, sys, time\n"
        "from diffcheck.sweep.reaper import become_subreaper\n"
        "assert become_subreaper()\n"
        "daemon = 'import os, sys\\nif os.fork() == 0:\\n    os.setsid()\\n"
        '    os.execve(sys.argv[1], [sys.argv[2], "300"], {})\\nos._exit(0)\\n\'\n'
        "subprocess.run([sys.executable, '-c', daemon, '/bin/sleep', os.environ['MARK']], env={})\n"
        "print('ready', flush=True)\n"
        "time.sleep(300)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", worker],
        env=dict(os.environ, MARK=marker),
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        assert len(_marked(marker)) == 1
        reaper.stop_and_end_tree(process.pid)
        assert process.wait(5) == -signal.SIGKILL
        deadline = time.monotonic() + 2.0
        while _marked(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _marked(marker) == []
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        for pid in _marked(marker):
            os.kill(pid, signal.SIGKILL)
