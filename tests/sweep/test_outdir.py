"""``--out``: a bad sweep directory is one line and leaves nothing behind; one sweep at a time."""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.sweep import outdir
from diffcheck.sweep.outdir import LOCK_NAME

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7] }]
"""

Sweep = Callable[..., SweepRun]


def _sweep(matrix: Path, out: str | bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["sweep", str(matrix), "--out", os.fsdecode(out), "--quiet"])
    return code, capsys.readouterr().err


def _tree(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("afile", "exists and is not a directory"),
        ("/dev/null", "is under /dev, which holds no files of ours"),
        ("/proc/self/sweep", "is under /proc, which holds no files of ours"),
        ("/sys/kernel/sweep", "is under /sys, which holds no files of ours"),
        ("new/parents/" + "n" * 256, "a name in it is 256 bytes, longer than this filesystem's"),
        (b"new/bad\xff", "the name is not UTF-8"),
    ],
    ids=["file", "dev-null", "proc", "sys", "long-name", "byte-ff"],
)
def test_a_bad_out_is_one_line_and_creates_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    out: str | bytes,
    message: str,
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    (tmp_path / "afile").write_text("kept")
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    code, err = _sweep(matrix, out, capsys)
    assert code == 1
    assert err.startswith("diffcheck: --out "), err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert _tree(tmp_path) == before  # no directory left behind
    assert (tmp_path / "afile").read_text() == "kept"


def test_a_read_only_parent_is_one_line_and_leaves_no_directories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests may run as root, which a chmod does not stop: the filesystem's refusal is injected.
    matrix = write_matrix(tmp_path, TWO)
    real_mkdir = os.mkdir

    def read_only(path: os.PathLike[str] | str, *args: object) -> None:
        if Path(path).name == "leaf":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        real_mkdir(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(outdir.os, "mkdir", read_only)
    before = _tree(tmp_path)
    code, err = _sweep(matrix, str(tmp_path / "a" / "b" / "leaf"), capsys)
    assert code == 1
    assert err == (
        f"diffcheck: --out {tmp_path / 'a' / 'b' / 'leaf'}: cannot create "
        f"{tmp_path / 'a' / 'b' / 'leaf'}: Read-only file system; choose a writable --out\n"
    )
    assert _tree(tmp_path) == before  # a and a/b were created, then removed


def test_a_second_sweep_on_the_same_directory_is_refused_naming_the_holder(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    out.mkdir()
    lock = out / LOCK_NAME
    lock.write_text("4242\n")
    # Another sweep holds it: flock locks are per open file, so this one conflicts.
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        run = sweep_cli(matrix, out)
    finally:
        os.close(fd)
    assert run.code == 1
    assert run.err == (
        f"diffcheck: --out {out} is in use by another sweep (pid 4242); wait for it to "
        "finish, or choose another --out\n"
    )
    assert _tree(out) == [LOCK_NAME]  # nothing written
    again = sweep_cli(matrix, out)  # released: this one runs, and records its own pid
    assert again.code == 0, again.err
    assert lock.read_text() == f"{os.getpid()}\n"


@pytest.mark.parametrize("view", ["junit.xml", "index.html", "summary.json"])
def test_a_view_planted_as_a_directory_stops_before_anything_runs(
    tmp_path: Path, sweep_cli: Sweep, view: str
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    out.mkdir()
    (out / view).mkdir()
    run = sweep_cli(matrix, out)
    assert run.code == 1
    assert run.err == (
        f"diffcheck: {out / view} is not a regular file, where the sweep writes its {view}; "
        "it is never followed or replaced: remove it, or choose a new --out\n"
    )
    assert not (out / "summary.json").is_file()  # no summary claims an exit status
    assert sorted(p.name for p in out.iterdir()) == sorted([LOCK_NAME, view])
