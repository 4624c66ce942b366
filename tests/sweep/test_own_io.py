"""A failure of diffcheck's own I/O (a full disk) is never a verdict on the backend.

The check whose report could not be written is left incomplete, the sweep stops with one
line, and ``--resume`` runs the check again once the cause is gone.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck import files
from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.sweep.records import OwnIOError, ReportState, read_state, run_guarded
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


def test_a_failed_final_write_leaves_the_report_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    candidate = resolve("array_api_strict")
    calls: list[int] = []
    real = candidate.execute

    def execute(*args: Any, **kwargs: Any) -> Any:
        # The disk fills while the check runs: its final record cannot be written.
        def full(*_: object, **__: object) -> Path:
            calls.append(1)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(files, "write_temporary", full)
        return real(*args, **kwargs)

    monkeypatch.setattr(candidate, "execute", execute)
    path = tmp_path / "r.json"
    with pytest.raises(OwnIOError, match="No space left on device"):
        run_guarded(check, path, candidate)
    assert calls
    state, _ = read_state(path)
    assert state is ReportState.INCOMPLETE  # never a failed verdict on the backend


def test_a_failed_first_write_is_own_io_too(tmp_path: Path) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    with pytest.raises(OwnIOError, match="its directory does not exist"):
        run_guarded(check, tmp_path / "gone" / "r.json", resolve("array_api_strict"))


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_full_disk_stops_the_sweep_and_resume_runs_the_check_again(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch, isolation: str
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    monkeypatch.setenv(FAULT_ENV, f"{SECOND}:enospc")
    run = sweep_cli(matrix, out, "--isolation", isolation, "--jobs", "1")
    assert run.code == 1
    assert run.err.startswith(
        f"diffcheck: could not write the report of {SECOND} (diffcheck sweep worker: "
    ), run.err
    assert "No space left on device" in run.err
    assert run.err.endswith("then run again with --resume\n")
    assert run.err.count("\n") == 1
    state, _ = read_state(out / f"{SECOND}.json")
    assert state is ReportState.INCOMPLETE
    assert not (out / "summary.json").exists()  # no summary claims anything
    monkeypatch.delenv(FAULT_ENV)  # the disk was grown
    resumed = sweep_cli(matrix, out, "--resume", "--isolation", isolation)
    assert resumed.code == 0, resumed.err
    row = resumed.rows()[SECOND]
    assert (row["status"], row["resumed"]) == ("passed", False)


def test_a_full_disk_when_the_parent_settles_a_crash_is_no_verdict_either(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diffcheck.report import writer

    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    monkeypatch.setenv(FAULT_ENV, f"{SECOND}:exit")  # the worker dies; the parent must settle

    def full(*_: object, **__: object) -> Path:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer, "write_temporary", full)
    run = sweep_cli(matrix, out, "--isolation", "cold", "--jobs", "1")
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert "No space left on device" in run.err
    state, _ = read_state(out / f"{SECOND}.json")
    assert state is ReportState.INCOMPLETE  # not completed as failed
    assert not (out / "summary.json").exists()


@pytest.mark.parametrize("named", [True, False])
def test_an_io_error_right_after_the_first_write_names_the_file_or_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    # The report is created, then looking it up fails (a vanished file, a failing disk).
    from diffcheck.sweep import records

    path = tmp_path / "r.json"

    def failing(target: Path) -> object:
        if named:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(target))
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(records, "identity", failing)
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    with pytest.raises(OwnIOError) as refused:
        run_guarded(check, path, resolve("array_api_strict"))
    expected = (
        f"write {path}: No such file or directory" if named else "write report: Input/output error"
    )
    assert str(refused.value) == expected


def test_a_guarded_run_writes_the_final_record_over_its_own_first_one(tmp_path: Path) -> None:
    from diffcheck.report.replay import load_report

    path = tmp_path / "r.json"
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    document = run_guarded(check, path, resolve("array_api_strict"))
    assert document.result is not None
    assert document.result.status == "passed"
    assert load_report(path) == document
    assert list(tmp_path.iterdir()) == [path]


def test_a_guarded_runs_first_record_is_labelled_by_the_workers_own_adapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The incomplete record names the adapter the worker runs, not a fresh one resolved by
    # name: seen when the final write fails and that first record is what stays.
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    candidate = resolve("array_api_strict")
    monkeypatch.setattr(candidate, "execution_path", lambda op: "gemm via this worker's adapter")
    real = candidate.execute

    def execute(*args: Any, **kwargs: Any) -> Any:
        def full(*_: object, **__: object) -> Path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(files, "write_temporary", full)
        return real(*args, **kwargs)

    monkeypatch.setattr(candidate, "execute", execute)
    path = tmp_path / "r.json"
    with pytest.raises(OwnIOError):
        run_guarded(check, path, candidate)
    state, document = read_state(path)
    assert state is ReportState.INCOMPLETE
    assert document is not None
    assert document.execution_path == "gemm via this worker's adapter"


def test_a_report_that_cannot_be_serialized_is_one_line_naming_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diffcheck.errors import ReportError
    from diffcheck.report.models import ReportDocumentV3

    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    candidate = resolve("array_api_strict")
    real = candidate.execute

    def execute(*args: Any, **kwargs: Any) -> Any:
        def refuse(self: object) -> object:
            raise ValueError("Out of range float values are not JSON compliant")

        monkeypatch.setattr(ReportDocumentV3, "to_json_parts", refuse)
        return real(*args, **kwargs)

    monkeypatch.setattr(candidate, "execute", execute)
    with pytest.raises(ReportError) as refused:
        run_guarded(check, tmp_path / "r.json", candidate)
    assert str(refused.value) == (
        "serialize report: Out of range float values are not JSON compliant"
    )
