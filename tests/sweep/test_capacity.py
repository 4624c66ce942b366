"""``--jobs`` is capped at what the machine holds, and says so."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import SweepRun, write_matrix

from diffcheck.sweep import capacity

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7] }]
"""

Sweep = Callable[..., SweepRun]


def test_jobs_over_the_machine_are_capped_with_a_message(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capacity, "machine_jobs", lambda: (2, "2 usable CPUs"))
    run = sweep_cli(write_matrix(tmp_path, TWO), tmp_path / "out", "--jobs", "10000")
    assert run.code == 0, run.err
    assert run.err == (
        "diffcheck sweep: --jobs 10000 is more than this machine holds (2 usable CPUs); running 2\n"
    )
    assert run.summary["executor"].startswith("local, 2 jobs,")


def test_jobs_within_the_machine_are_kept_silently(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capacity, "machine_jobs", lambda: (8, "8 usable CPUs"))
    run = sweep_cli(write_matrix(tmp_path, TWO), tmp_path / "out", "--jobs", "3")
    assert (run.code, run.err) == (0, "")
    assert run.summary["executor"].startswith("local, 3 jobs,")


def test_the_machine_figure_counts_cpus_and_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs, why = capacity.machine_jobs()
    assert 1 <= jobs <= len(os.sched_getaffinity(0))
    assert "usable CPU" in why
    # Memory for one worker only: one job, however many CPUs.
    monkeypatch.setattr(capacity, "_available_bytes", lambda: capacity.WORKER_BYTES + 1)
    assert capacity.machine_jobs()[0] == 1
    assert capacity.capped_jobs(None) == (1, None)
    assert capacity.capped_jobs(5)[0] == 1
