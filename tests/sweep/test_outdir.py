"""``--out``: a bad sweep directory is one line and leaves nothing behind; one sweep at a time."""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_helpers import SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.errors import ConfigError
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


def test_a_file_where_a_report_directory_goes_is_one_line(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    out.mkdir()
    (out / "numpy-vs-array_api_strict").write_text("kept")
    run = sweep_cli(matrix, out)
    assert run.code == 1
    assert run.err == (
        f"diffcheck: {out / 'numpy-vs-array_api_strict'} is not a directory, where the sweep "
        "keeps reports; it is never replaced: remove it, or choose a new --out\n"
    )
    assert (out / "numpy-vs-array_api_strict").read_text() == "kept"
    assert not (out / "summary.json").exists()


_COMPONENT = st.one_of(
    # No "..": a generated name must stay inside the case's own directory.
    st.binary(min_size=1, max_size=300).filter(
        lambda b: b"/" not in b and b"\0" not in b and b != b".."
    ),
    st.sampled_from([b".", b"afile", b"a" * 255, b"a" * 256, b"\xff", b"new"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    root=st.sampled_from(["", "/proc/", "/sys/", "/dev/", "afile/"]),
    parts=st.lists(_COMPONENT, min_size=1, max_size=3),
)
def test_any_out_is_a_locked_directory_or_one_line_and_nothing_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str, parts: list[bytes]
) -> None:
    base = tmp_path / f"case-{len(list(tmp_path.iterdir()))}"
    base.mkdir()
    (base / "afile").write_text("kept")
    monkeypatch.chdir(base)
    out = Path(os.fsdecode(root.encode() + b"/".join(parts)))
    before = _tree(base)
    try:
        with outdir.sweep_directory(out) as directory:
            assert directory.is_dir()
            assert (directory / LOCK_NAME).read_text() == f"{os.getpid()}\n"
            created = True
    except ConfigError as error:
        message = str(error)
        assert "\n" not in message
        assert "\x1b" not in message
        assert message.startswith("--out ")
        created = False
    if not created:
        assert _tree(base) == before  # nothing created, nothing left behind
    assert (base / "afile").read_text() == "kept"


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm here")
def test_dev_shm_is_an_ordinary_place_for_a_sweep() -> None:
    with (
        tempfile.TemporaryDirectory(dir="/dev/shm") as shared,
        outdir.sweep_directory(Path(shared) / "sweep") as directory,
    ):
        assert directory.is_dir()
