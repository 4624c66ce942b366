"""Issue 34 T2, F1 and F2: a sweep that ends badly says one line and leaves nothing behind.

- T2: a warm sweep whose disk filled mid-run printed 893 lines of chained worker tracebacks
  (the worker's log was on the full disk too) before the right one-line error;
- F1: a worker killed by its timeout left ``.dc-<pid>-<hex>.tmp`` in the report folder;
- F2: a warm sweep ended by SIGTERM to its process group left ``pymp-*`` socket folders in
  the system's temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sweep_helpers import STRICT, write_matrix

from diffcheck.sweep.isolate import WorkerEnd, conclude
from diffcheck.sweep.spec import WorkerSpec
from diffcheck.sweep.worker import FAULT_ENV

MATRIX = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7, 8, 9, 10] }]
"""
SECOND = f"{STRICT}/gemm/gemm-4x3x5-f32-s7"


def _sweep(tmp_path: Path, fault: str, *options: str) -> subprocess.Popen[bytes]:
    matrix = write_matrix(tmp_path, MATRIX)
    environment = dict(os.environ, **{FAULT_ENV: fault, "TMPDIR": str(_temporary(tmp_path))})
    argv = [sys.executable, "-m", "diffcheck", "sweep", str(matrix), "--out"]
    argv += [str(tmp_path / "out"), "--quiet", *options]
    return subprocess.Popen(
        argv,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a CI job's
    )


def _temporary(tmp_path: Path) -> Path:
    # Short: the fork server's socket lives there, and a socket path has at most 107 bytes.
    link = tmp_path / "tmp"
    if not link.exists():
        link.symlink_to(tempfile.mkdtemp(prefix="dc-"))
    return link.resolve()


@pytest.fixture(autouse=True)
def _remove_temporary(tmp_path: Path) -> Iterator[None]:
    yield
    link = tmp_path / "tmp"
    if link.is_symlink():
        shutil.rmtree(link.resolve(), ignore_errors=True)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("isolation", ["warm", "cold"])
def test_a_full_disk_under_the_log_too_is_one_line(tmp_path: Path, isolation: str) -> None:
    sweep = _sweep(tmp_path, f"{SECOND}:enospc+fulllog", "--isolation", isolation, "--jobs", "2")
    _, err = sweep.communicate(timeout=300)
    text = err.decode()
    assert sweep.returncode == 1, text
    assert text.count("\n") == 1, text[-3000:]
    assert "Traceback" not in text
    assert text.startswith(f"diffcheck: could not write the report of {SECOND} (")
    assert text.endswith("then run again with --resume\n")


def test_a_killed_worker_s_temporary_is_removed_when_its_end_is_settled(tmp_path: Path) -> None:
    from diffcheck.config import make_check

    folder = tmp_path / "reports"
    folder.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    pid = int(dead.stdout)
    left = folder / f".dc-{pid}-0123456789abcdef.tmp"
    left.write_bytes(b"half a report")
    alive = folder / f".dc-{os.getpid()}-0123456789abcdef.tmp"  # a live writer's: it stays
    alive.write_bytes(b"being written")
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    spec = WorkerSpec.of("c", check, str(folder / "r.json"))
    log = folder / "r.worker.log"
    log.write_text("")
    conclude(spec, log, WorkerEnd("timeout after 1 s", None), 1.0, earlier_log=False, moved=None)
    assert not left.exists()
    assert alive.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_to_a_warm_sweep_s_group_leaves_no_pymp_folder(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, f"{SECOND}:hang", "--isolation", "warm", "--timeout", "300")
    log = tmp_path / "out" / f"{SECOND}.worker.log"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if log.exists() and re.search("test fault 'hang' injected", log.read_text()):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the worker never reached its hanging check")
        assert list(_temporary(tmp_path).glob("pymp-*")), "the fork server made no folder"
        os.killpg(sweep.pid, signal.SIGTERM)
        _, err = sweep.communicate(timeout=60)
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
            sweep.communicate()  # reaps it and closes its pipes
    assert sweep.returncode != 0
    assert err.decode().count("\n") <= 1, err.decode()[-3000:]
    time.sleep(0.5)  # the fork server, signalled too, is gone by now
    assert not list(_temporary(tmp_path).glob("pymp-*"))
