"""The sweep directory (``--out``): checked, created, and held by one sweep at a time.

:func:`sweep_directory` is entered before anything is written:

- the name is checked first, so a bad one is one line and nothing is created: it must be
  UTF-8 (reports and the summary store it as text), each component no longer than the
  filesystem allows, not under ``/proc``, ``/sys`` or ``/dev`` (``/dev/shm`` is allowed:
  it is an ordinary tmpfs), and not an existing
  non-directory (a regular file, ``/dev/null``);
- the missing directories are created one by one and remembered; when the sweep fails
  before it writes anything into them, they are removed again (only if still empty), so a
  refused sweep leaves no empty directories behind;
- an exclusive ``flock`` on ``<out>/.diffcheck-sweep.lock`` is taken without waiting and held
  for the whole sweep: a second sweep on the same directory is refused in one line naming
  the holder's pid, instead of both writing the same reports. The lock file stays (removing
  it would let a third sweep lock a new file while the second still holds the old one).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import ConfigError
from ..text import one_line

__all__ = ["LOCK_NAME", "sweep_directory"]

LOCK_NAME = ".diffcheck-sweep.lock"
#: Where a sweep directory can never be: kernel and device filesystems.
_FORBIDDEN = (Path("/proc"), Path("/sys"), Path("/dev"))
_SHARED_MEMORY = Path("/dev/shm")


def _shown(out: Path) -> str:
    return one_line(os.fsencode(out).decode("utf-8", "backslashreplace"))


def _check_name(out: Path) -> Path:
    """``out`` made absolute, or a ConfigError saying why it cannot be a sweep directory."""
    shown = _shown(out)
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"--out {shown}: the name is not UTF-8, and reports store it as text; "
            "choose a UTF-8 name"
        ) from None
    absolute = Path(os.path.abspath(out))
    resolved = absolute.resolve()
    for forbidden in _FORBIDDEN:
        if resolved == _SHARED_MEMORY or _SHARED_MEMORY in resolved.parents:
            break  # /dev/shm is an ordinary tmpfs, a fine place for a fast sweep
        if resolved == forbidden or forbidden in resolved.parents:
            raise ConfigError(
                f"--out {shown} is under {forbidden}, which holds no files of ours; "
                "choose a directory on a real filesystem"
            )
    existing = absolute
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    try:
        limit = os.pathconf(existing if existing.is_dir() else existing.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    for part in absolute.parts:
        size = len(os.fsencode(part))
        if size > limit:
            raise ConfigError(
                f"--out {shown}: a name in it is {size} bytes, longer than this filesystem's "
                f"{limit}; choose a shorter --out"
            )
    if os.path.exists(absolute) and not absolute.is_dir():
        raise ConfigError(
            f"--out {shown} exists and is not a directory; choose a directory (new or an "
            "earlier sweep's)"
        )
    return absolute


def _create(out: Path, shown: str) -> list[Path]:
    """Create ``out`` and its missing parents; return what was created, outermost first."""
    missing = []
    current = out
    while not os.path.lexists(current):
        missing.append(current)
        current = current.parent
    created: list[Path] = []
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except OSError as error:
            _remove_empty(created)
            raise ConfigError(
                f"--out {shown}: cannot create {_shown(directory)}: {error.strerror}; "
                "choose a writable --out"
            ) from None
        created.append(directory)
    return created


def _remove_empty(created: list[Path]) -> None:
    for directory in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def _remove_empty_tree(out: Path) -> None:
    """Remove the lock file and every empty directory under ``out`` (a directory this sweep
    created: nothing in it is anyone else's), deepest first; files stop their parents."""
    with contextlib.suppress(OSError):
        os.unlink(out / LOCK_NAME)
    for root, _, _ in os.walk(out, topdown=False):
        with contextlib.suppress(OSError):
            os.rmdir(root)


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        text = os.pread(fd, 32, 0).decode("ascii").strip()
        if text.isdigit():
            return f"pid {text}"
    return "a process whose pid it did not record"


def _lock(out: Path, shown: str) -> int:
    """An exclusive lock on ``out``'s lock file (its descriptor), or a one-line ConfigError."""
    path = out / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        hint = "remove it" if error.errno == errno.ELOOP else "choose a writable --out"
        raise ConfigError(
            f"--out {shown}: cannot open its lock file {LOCK_NAME}: {error.strerror}; {hint}"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        holder = _holder(fd)
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise ConfigError(
                f"--out {shown} is in use by another sweep ({holder}); wait for it to "
                "finish, or choose another --out"
            ) from None
        raise ConfigError(f"--out {shown}: cannot lock it: {error.strerror}") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as error:
        os.close(fd)
        raise ConfigError(f"--out {shown}: cannot write its lock file: {error.strerror}") from None
    return fd


@contextlib.contextmanager
def sweep_directory(out: Path) -> Iterator[Path]:
    """Check, create and lock the sweep directory ``out``; yields it as an absolute path.

    Raises
    ------
    ConfigError
        One line, before anything is written, when ``out`` cannot be a sweep directory or
        another sweep holds it.
    """
    shown = _shown(out)
    absolute = _check_name(out)
    created = _create(absolute, shown)
    if not os.access(absolute, os.W_OK | os.X_OK):
        _remove_empty(created)
        raise ConfigError(f"--out {shown} is not writable; choose a writable --out")
    try:
        fd = _lock(absolute, shown)
    except ConfigError:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(absolute / LOCK_NAME)
        _remove_empty(created)
        raise
    try:
        yield absolute.resolve()
    except BaseException:
        if created:  # a sweep refused before it wrote a file leaves no directory behind
            _remove_empty_tree(absolute)
            _remove_empty(created)
        raise
    finally:
        os.close(fd)
