"""Worker logs: never followed through a planted link, and only their tail is ever read."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.sweep.worker import FAULT_ENV
from diffcheck.sweep.worker_log import log_tail, start_log

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7] }]
"""
SECOND = f"{STRICT}/gemm/gemm-4x3x5-f32-s7"

Sweep = Callable[..., SweepRun]


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_symlink_planted_at_a_worker_log_is_never_followed(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch, isolation: str
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    log = out / f"{SECOND}.worker.log"
    log.parent.mkdir(parents=True)
    outside = tmp_path / "precious.txt"
    outside.write_text("precious\n")
    log.symlink_to(outside)
    monkeypatch.setenv(FAULT_ENV, f"{SECOND}:exit")
    run = sweep_cli(matrix, out, "--isolation", isolation)
    assert run.code == 1
    assert outside.read_text() == "precious\n"
    reason = run.rows()[SECOND]["reason"]
    assert reason.startswith(
        "worker exited with status 3: diffcheck sweep worker: test fault 'exit' injected"
    ), reason
    planted = log.with_name(log.name + ".planted")
    assert os.readlink(planted) == str(outside)  # the link itself, kept aside
    assert not log.is_symlink()
    assert log.is_file()


def test_a_dangling_planted_link_creates_nothing(tmp_path: Path) -> None:
    log, target = tmp_path / "c.worker.log", tmp_path / "elsewhere" / "created.txt"
    target.parent.mkdir()
    log.symlink_to(target)
    assert start_log("c", log) is False
    assert not target.exists()
    assert not log.is_symlink()
    assert log.is_file()


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory"])
def test_the_tail_of_something_not_a_log_is_empty(tmp_path: Path, kind: str) -> None:
    log = tmp_path / "c.worker.log"
    if kind == "dev-zero":
        log.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(log)
    else:
        log.mkdir()
    assert log_tail(log) == ""  # and returns at once: nothing is opened through a link


def test_the_tail_of_a_huge_log_is_read_bounded(tmp_path: Path) -> None:
    log = tmp_path / "c.worker.log"
    with log.open("wb") as sink:
        sink.truncate(3 << 30)  # 3 GiB of zeros, sparse: a whole read would need 3 GiB
        sink.seek(0, os.SEEK_END)
        sink.write(b"\nlast words of the check\n\n")
    started = time.perf_counter()
    assert log_tail(log) == "last words of the check"
    assert time.perf_counter() - started < 1.0


def test_a_planted_directory_is_moved_aside(tmp_path: Path) -> None:
    log = tmp_path / "c.worker.log"
    log.mkdir()
    (log / "inside").write_text("kept")
    assert start_log("c", log) is False
    assert log.is_file()
    assert (tmp_path / "c.worker.log.planted-dir" / "inside").read_text() == "kept"
