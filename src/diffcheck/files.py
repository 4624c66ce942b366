"""diffcheck's file discipline: bounded reads of regular files, and writes nobody can redirect.

Reading: :func:`read_regular` opens without blocking (a FIFO cannot hang it), refuses
anything but a regular file (``/dev/zero``, a directory, a FIFO), optionally refuses a
symbolic link at the path itself (``O_NOFOLLOW``), and reads at most a stated number of
bytes, so hostile input is one :class:`~diffcheck.errors.ReportError` line, never a hang,
a traceback or memory exhaustion.

Writing: :func:`write_replacing` writes a derived view (``summary.json``, ``junit.xml``,
``index.html``) into a temporary file with an unpredictable name, created with
``O_CREAT|O_EXCL|O_NOFOLLOW`` (a symlink planted at any name cannot redirect it), fsyncs it
and renames it over the target (a rename replaces a symlink at the target, never follows it).
:func:`replace_if_unchanged` does the same for a report, but only while the path still holds
the very file (device and inode) the writer created: a worker never replaces a record
someone else completed meanwhile.

Temporary files have a short fixed-length name (``.dc-<pid>-<random>.tmp``), so a target
name of any length the filesystem accepts works, and are removed on every error. A process
killed between writing one and renaming it leaves it behind: :func:`remove_stale_temporaries`
removes those whose process is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from .errors import ReportError

__all__ = [
    "MAX_MATRIX_BYTES",
    "FileIdentity",
    "create_new",
    "fresh_name",
    "fsync_directory",
    "identity",
    "read_regular",
    "remove_stale_temporaries",
    "replace_if_unchanged",
    "stamp",
    "stored_path",
    "write_replacing",
    "write_temporary",
]

#: The largest matrix file read (a matrix is a few kilobytes; 16 MiB is generous).
MAX_MATRIX_BYTES = 16 * 1024 * 1024

FileIdentity = tuple[int, int]

#: The longest path a stored file may name, in bytes, and the longest part (Linux's
#: PATH_MAX and NAME_MAX): past them the system refuses the name with an OSError.
MAX_PATH_BYTES = 4096
MAX_PART_BYTES = 255


def stored_path(text: str, what: str) -> Path:
    """A path that a stored file names (a summary's matrix), checked before the system sees it.

    A path from a file is hostile input: a NUL byte, a name longer than the system takes
    (``OSError: File name too long``) or an undecodable one is one ReportError line naming
    ``what``, the length and what to do, before any ``stat`` or ``open``.
    """
    shown = ascii(text[:120]) + ("..." if len(text) > 120 else "")
    try:
        encoded = os.fsencode(text)
    except UnicodeError:
        raise ReportError(f"{what} {shown} cannot be a file name here (not encodable)") from None
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if b"\0" in encoded or len(encoded) > MAX_PATH_BYTES or longest > MAX_PART_BYTES:
        raise ReportError(
            f"{what} {shown} ({len(encoded)} bytes, a part of {longest}) is no file name: a "
            f"path has at most {MAX_PATH_BYTES} bytes, a part {MAX_PART_BYTES}, and no NUL; "
            "the file naming it was edited"
        )
    return Path(text)


def stamp() -> str:
    """The UTC time as every generated name spells it (``20261207T002910Z``): one style
    for run reports, sweep and search folders, so they sort together by time."""
    from datetime import UTC, datetime

    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}"


def fresh_name(directory: Path, stem: str, suffix: str = "") -> Path:
    """``directory/stem-<stamp><suffix>``, numbered on when that name is taken.

    The name is only free when asked; the caller still creates it with create-new semantics.
    """
    base = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', stem)}-{stamp()}"
    path, count = directory / f"{base}{suffix}", 1
    while path.exists() or path.is_symlink():
        count += 1
        path = directory / f"{base}-{count}{suffix}"
    return path


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(
    path: Path, *, limit: int, follow_symlinks: bool = True, limit_reason: str = ""
) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    A file over ``limit`` is refused from its size before anything is read;
    ``limit_reason`` (what the limit is) is added to that one-line refusal.

    Raises
    ------
    FileNotFoundError
        When nothing is at ``path`` (callers tell "missing" from "bad").
    ReportError
        One line: not a regular file, a symbolic link (when ``follow_symlinks`` is off),
        larger than ``limit`` bytes, or unreadable.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except ValueError:  # a NUL byte in the path
        raise ReportError(f"cannot read {str(path)!r}: the path holds a NUL byte") from None
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlinks:
            raise ReportError(f"{path} is a symbolic link; it is not followed") from None
        raise ReportError(f"cannot read {path}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReportError(f"{path} is {_kind(info.st_mode)}, not a regular file")
        why = f" ({limit_reason})" if limit_reason else ""
        if info.st_size > limit:
            raise ReportError(f"{path} is {info.st_size} bytes, over the {limit}-byte limit{why}")
        chunks = []
        left = limit + 1  # one byte more than allowed tells a file that grew past the limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise ReportError(f"{path} is over the {limit}-byte limit{why}")
        return b"".join(chunks)
    except OSError as error:
        raise ReportError(f"cannot read {path}: {error.strerror}") from None
    finally:
        os.close(fd)


def identity(path: Path) -> FileIdentity:
    """(device, inode) of the path itself (a symlink is not followed)."""
    info = os.lstat(path)
    return info.st_dev, info.st_ino


def fsync_directory(directory: Path) -> None:
    """Make a rename or link in ``directory`` durable (where the filesystem allows)."""
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_TEMPORARY = re.compile(r"\.dc-(?P<pid>[0-9]+)-[0-9a-f]{16}\.tmp")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_temporary(directory: Path, data: bytes | Sequence[bytes]) -> Path:
    """A new, fsynced file in ``directory`` holding ``data``, under an unpredictable name.

    ``data`` may be a sequence of pieces, written in turn (a large report is never joined
    into one buffer). On any error (a kill signal's exception included) the file is removed.
    """
    pieces = [data] if isinstance(data, bytes) else data
    for _ in range(16):
        temporary = Path(directory) / f".dc-{os.getpid()}-{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(temporary, _CREATE, 0o644)
        except FileExistsError:
            continue
        try:
            for piece in pieces:
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        os.close(fd)
        return temporary
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(directory))


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Remove the temporary files in ``directory`` whose writing process has exited.

    Only regular files named like :func:`write_temporary`'s are removed; one of a live
    process (or of a process id reused since) is left alone. Returns what was removed.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or _process_alive(int(match["pid"])):
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def create_new(path: Path, data: bytes | Sequence[bytes]) -> None:
    """Create ``path`` holding ``data``, whole or not at all; never over anything there.

    The data goes to a temporary first and is hard-linked into place (the link fails when
    anything, a symbolic link included, is at ``path``), so a kill at any instant leaves no
    file or the whole one.

    Raises
    ------
    OSError
        When something is at ``path`` (``FileExistsError``) or the file cannot be written.
    """
    temporary = write_temporary(Path(path).parent, data)
    try:
        os.link(temporary, path, follow_symlinks=False)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    fsync_directory(Path(path).parent)


def write_replacing(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` (a derived view) with ``data``.

    Raises
    ------
    ReportError
        When the file cannot be written.
    """
    temporary: Path | None = None
    try:
        temporary = write_temporary(path.parent, data)
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            with contextlib.suppress(OSError):
                temporary.unlink()
        raise ReportError(f"write {path}: {error.strerror}") from None
    fsync_directory(path.parent)


def replace_if_unchanged(path: Path, expected: FileIdentity, data: bytes | Sequence[bytes]) -> None:
    """Replace ``path`` with ``data`` only while it is still the file ``expected`` names.

    Raises
    ------
    ReportError
        When ``path`` was moved, removed or replaced since (the new content is not written
        anywhere), or the write fails.
    """
    temporary: Path | None = None
    try:
        temporary = write_temporary(path.parent, data)
        try:
            now = identity(path)
        except FileNotFoundError:
            now = None
        if now != expected:
            raise ReportError(
                f"{path} was moved or replaced while its check ran; its result is not written"
            )
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        raise ReportError(f"write {path}: {error.strerror}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                temporary.unlink()
    fsync_directory(path.parent)
