"""A check's worker log (``<id>.worker.log``): opened without following links, read bounded.

The log sits in the sweep directory, where anyone who can write there can plant something
at its name before a check runs: a symbolic link to a file outside the directory (which an
append would then extend or create), a link to ``/dev/zero`` or a FIFO (which a whole-file
read would never finish), or a file of gigabytes printed by a failing check. So:

- :func:`start_log` leaves a regular file at the log's name before a worker starts: an
  entry that is not one (a link, a FIFO, a directory) is moved aside as itself, never
  followed or opened, and a fresh file is created with ``O_EXCL | O_NOFOLLOW``;
- :func:`open_log` opens it for appending with ``O_NOFOLLOW`` (an entry swapped in since
  is refused, not followed), for the cold worker's stdout and stderr;
- :func:`log_tail` reads at most :data:`TAIL_BYTES` from the end, never through a link
  and never from anything but a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ReportError

__all__ = [
    "TAIL_BYTES",
    "append_log",
    "log_path",
    "log_tail",
    "open_log",
    "start_log",
    "tail_bytes",
]

#: How much of a log's end the parent reads for a failure's reason.
TAIL_BYTES = 64 * 1024
#: The longest reason taken from a log's last line.
_LINE_CHARS = 400

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def log_path(report: Path) -> Path:
    """The worker log beside a report (``<id>.worker.log``)."""
    return report.with_name(f"{report.name.removesuffix('.json')}.worker.log")


def _set_aside(log: Path) -> None:
    """Move a planted non-regular entry to ``<name>.planted[-N]`` (the link itself, unfollowed)."""
    for attempt in range(1, 1000):
        target = log.with_name(f"{log.name}.planted" + ("" if attempt == 1 else f"-{attempt}"))
        try:
            os.link(log, target, follow_symlinks=False)
        except FileExistsError:
            continue
        except IsADirectoryError:
            break
        except OSError as error:
            if error.errno != errno.EPERM:  # a directory cannot be hard-linked: renamed below
                raise ReportError(f"move {log} aside: {error.strerror}") from None
            break
        os.unlink(log)
        return
    try:
        target = log.with_name(f"{log.name}.planted-dir")
        os.rename(log, target)  # only a directory gets here; rename refuses a non-empty target
    except OSError as error:
        raise ReportError(
            f"{log} is not a regular file and cannot be moved aside ({error.strerror}); "
            "remove it, or choose a new --out"
        ) from None


def start_log(spec_id: str, log: Path) -> bool:
    """Leave a regular file at ``log``; mark a rerun in an existing one. Whether one existed.

    Raises
    ------
    ReportError
        When the log cannot be created (the sweep directory is unwritable or full).
    """
    try:
        mode: int | None = os.lstat(log).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise ReportError(f"worker log {log}: {error.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        _set_aside(log)
        mode = None
    try:
        if mode is None:
            os.close(os.open(log, _APPEND | os.O_CREAT | os.O_EXCL, 0o644))
            return False
        with os.fdopen(os.open(log, _APPEND), "ab") as sink:
            # Appended, never truncated: an earlier, crashed run's log is evidence.
            sink.write(f"--- rerun of {spec_id} at {datetime.now(UTC).isoformat()} ---\n".encode())
    except OSError as error:
        raise ReportError(f"worker log {log}: {error.strerror}") from None
    return True


def open_log(log: Path) -> int:
    """A descriptor appending to ``log`` (never through a link), for a worker's output.

    Raises
    ------
    ReportError
        When ``log`` is not there as a regular file (something was swapped in).
    """
    try:
        fd = os.open(log, _APPEND)
    except OSError as error:
        raise ReportError(f"worker log {log}: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ReportError(f"worker log {log}: not a regular file")
    return fd


def tail_bytes(log: Path, limit: int = TAIL_BYTES) -> bytes | None:
    """The last ``limit`` bytes of ``log``; None when it is missing or not a regular file
    (never followed, never read)."""
    try:
        fd = os.open(log, _READ)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return os.pread(fd, limit, max(0, info.st_size - limit))
    except OSError:
        return None
    finally:
        os.close(fd)


def log_tail(log: Path) -> str:
    """The log's last non-blank line (at most 400 characters), read from its last 64 KiB.

    Empty when there is no log, or it is not a regular file (never followed, never read).
    """
    data = tail_bytes(log)
    text = data.decode(errors="replace").strip() if data else ""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][-_LINE_CHARS:] if lines else ""


def append_log(log: Path, data: bytes) -> None:
    """Append ``data`` to ``log`` (created, or a planted entry moved aside first; no link
    is ever followed).

    Raises
    ------
    ReportError
        When the log cannot be written.
    """
    try:
        mode: int | None = os.lstat(log).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise ReportError(f"worker log {log}: {error.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        _set_aside(log)
    try:
        fd = os.open(log, _APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        raise ReportError(f"worker log {log}: {error.strerror}") from None
    with os.fdopen(fd, "ab") as sink:
        sink.write(data)
