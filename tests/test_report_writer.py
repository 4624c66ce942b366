"""The report writer's file handling: modes, refusals it survives, errors it names.

tests/test_report.py covers create-new and the incomplete record; these pin what a reader
of the file and an operator see: the mode of every record, a filesystem that cannot fsync a
directory, a document that cannot be serialized, a record that cannot be written, and
completing a record this process did not create.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from diffcheck.config import make_check
from diffcheck.errors import ReportError
from diffcheck.report import ReportDocument, load_report
from diffcheck.report.writer import ReportWriter
from diffcheck.runner import initial_document, run_check
from fakes import FakeAdapter

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

CHECK = make_check("array_api_strict", "gemm", m=2, n=3, k=4)


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_record_is_readable_by_all_and_writable_by_its_owner_only(
    tmp_path: Path, umask_022: None
) -> None:
    path = tmp_path / "r.json"
    modes: list[int] = []
    run_check(CHECK, path, candidate=FakeAdapter(on_execute=lambda: modes.append(_mode(path))))
    modes.append(_mode(path))
    assert modes == [0o644, 0o644]  # the incomplete record, then the final one


def test_a_filesystem_that_cannot_fsync_a_directory_still_gets_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(22, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "r.json"
    run_check(CHECK, path)
    assert load_report(path).completed


def test_a_document_that_cannot_be_serialized_leaves_the_incomplete_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    writer = ReportWriter(path)
    document = initial_document(CHECK, FakeAdapter())
    writer.write(document)

    def refuse(self: ReportDocument) -> bytes:
        raise ValueError("float out of range")

    monkeypatch.setattr(ReportDocument, "to_json_parts", refuse)
    with pytest.raises(ReportError, match=r"^serialize report: float out of range$"):
        writer.write(document)
    assert json.loads(path.read_text())["completed"] is False


def test_a_record_that_cannot_be_written_is_a_report_error_naming_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diffcheck.report import writer as writer_module

    def full(*args: object) -> Path:
        raise OSError(28, "No space left on device")

    path = tmp_path / "r.json"
    writer = ReportWriter(path)
    document = initial_document(CHECK, FakeAdapter())
    with monkeypatch.context() as patch:
        patch.setattr(writer_module, "write_temporary", full)
        with pytest.raises(ReportError, match=f"^create report {re.escape(str(path))}: No space"):
            writer.write(document)
    assert not path.exists()
    writer.write(document)
    monkeypatch.setattr(writer_module, "write_temporary", full)
    with pytest.raises(ReportError, match=f"^write report {re.escape(str(path))}: No space"):
        writer.write(document)
    assert json.loads(path.read_text())["completed"] is False


def test_a_record_created_elsewhere_is_completed_in_place(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    ReportWriter(path).write(initial_document(CHECK, FakeAdapter()))
    final = run_check(CHECK)
    ReportWriter.existing(path).write(final)
    assert load_report(path) == final
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_report_that_cannot_be_created_says_why_with_the_os_error(tmp_path: Path) -> None:
    existing = tmp_path / "r.json"
    existing.write_text("evidence")
    long_name = tmp_path / ("r" * 300 + ".json")
    for path, why in (
        (
            existing,
            f"{os.strerror(errno.EEXIST)} (os error {errno.EEXIST}); a report is never "
            "overwritten: give a new path, a directory to get a new name in it (--report "
            "reports/), or move the old report",
        ),
        (
            tmp_path / "missing" / "r.json",
            f"its directory does not exist (os error {errno.ENOENT}); create the directory first",
        ),
        (long_name, f"{os.strerror(errno.ENAMETOOLONG)} (os error {errno.ENAMETOOLONG})"),
    ):
        with pytest.raises(ReportError) as raised:
            ReportWriter(path)
        assert str(raised.value) == f"create report {path}: {why}"
    assert existing.read_text() == "evidence"


def _shorter_names(limit: int) -> object:
    real = os.pathconf

    def pathconf(path: object, name: str) -> int:
        return min(real(path, name), limit)  # type: ignore[arg-type]

    return pathconf


def test_a_name_past_a_shorter_filesystem_limit_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some filesystems (eCryptfs, a few FUSE ones) allow fewer name bytes than the kernel's
    # 255: lstat does not refuse such a name, the filesystem's own limit does.
    monkeypatch.setattr(os, "pathconf", _shorter_names(8))
    ReportWriter(tmp_path / "r.json")  # 6 bytes fit
    path = tmp_path / "report.json"
    with pytest.raises(ReportError) as raised:
        ReportWriter(path)
    assert str(raised.value) == (
        f"create report {path}: name is longer than 8 bytes (os error {errno.ENAMETOOLONG})"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [OSError(errno.EINVAL, "Invalid argument"), ValueError("no")])
def test_a_filesystem_that_cannot_say_its_name_limit_still_gets_its_report(
    error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pathconf(path: object, name: str) -> int:
        raise error

    monkeypatch.setattr(os, "pathconf", pathconf)
    path = tmp_path / "r.json"
    run_check(CHECK, path)
    assert load_report(path).completed


def test_the_first_record_never_gives_a_second_name_to_what_a_symlink_points_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On Linux link(2) never follows a symlink; where it does (macOS), only
    # follow_symlinks=False keeps the foreign file from gaining the report's name.
    from diffcheck.report import writer as writer_module

    foreign = tmp_path / "foreign"
    foreign.write_text("not ours")
    (tmp_path / "reports").mkdir()

    def planted(directory: Path, data: object) -> Path:
        link = directory / ".dc-planted.tmp"
        link.symlink_to(foreign)
        return link

    monkeypatch.setattr(writer_module, "write_temporary", planted)
    path = tmp_path / "reports" / "r.json"
    ReportWriter(path).write(initial_document(CHECK, FakeAdapter()))
    assert foreign.stat().st_nlink == 1
    assert path.is_symlink()


def test_a_temporary_already_gone_when_the_first_record_fails_is_still_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def link(src: Path, dst: Path, **options: object) -> None:
        os.unlink(src)
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST))

    path = tmp_path / "r.json"
    writer = ReportWriter(path)
    monkeypatch.setattr(os, "link", link)
    with pytest.raises(ReportError) as raised:
        writer.write(initial_document(CHECK, FakeAdapter()))
    assert str(raised.value) == (
        f"create report {path}: {os.strerror(errno.EEXIST)} (os error {errno.EEXIST})"
    )
    assert list(tmp_path.iterdir()) == []
