"""Create-new, incomplete-then-complete report files, whole at every instant.

Every record, the incomplete one (``completed: false``) included, is serialized first (a
serialization error leaves the file as it was), written to a temporary file beside the
report, fsynced, and only then put at the report's path: the first record by a hard link
(which fails when anything is at the path, so an existing report is never touched), later
records by a rename over it. A reader therefore finds nothing, or one whole record: never
an empty or truncated file, even after a kill at any instant. "Started, incomplete" is a
valid record with ``completed: false``; anything else at a report path is garbage.

Temporaries are :func:`diffcheck.files.write_temporary`'s: a short fixed-length name, so
any report name the filesystem accepts works, removed on every error. One left by a process
killed before its rename is removed by :func:`~diffcheck.files.remove_stale_temporaries`,
which ``diffcheck run`` and sweeps call before they write.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from ..errors import ReportError
from ..files import fsync_directory, remove_stale_temporaries, write_temporary
from .models import ReportDocument

__all__ = ["ReportWriter", "remove_stale_temporaries"]


class ReportWriter:
    """Owns one new report file from its first record to its final one."""

    def __init__(self, path: Path) -> None:
        """Claim ``path`` for a new report; nothing is created until the first :meth:`write`.

        Raises
        ------
        ReportError
            When something is already at ``path``, its directory is missing, or its name is
            longer than the filesystem allows (all before anything is written).
        """
        self.path = Path(path)
        self._created = False
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            pass
        except OSError as error:
            raise self._create_error(error) from None
        except ValueError:  # a NUL byte: no system call takes the name
            raise self._create_error(OSError(errno.EINVAL, "the path holds a NUL byte")) from None
        else:
            raise self._create_error(OSError(errno.EEXIST, os.strerror(errno.EEXIST)))
        directory = self.path.parent
        if not directory.is_dir():
            raise self._create_error(OSError(errno.ENOENT, "its directory does not exist"))
        with contextlib.suppress(OSError, ValueError):
            limit = os.pathconf(directory, "PC_NAME_MAX")
            if len(os.fsencode(self.path.name)) > limit:
                raise self._create_error(
                    OSError(errno.ENAMETOOLONG, f"name is longer than {limit} bytes")
                )

    def _create_error(self, error: OSError) -> ReportError:
        base = f"create report {self.path}: {error.strerror} (os error {error.errno})"
        if error.errno == errno.EEXIST:
            # Say what the reader can do: reports are evidence and are never overwritten.
            base += (
                "; a report is never overwritten: give a new path, a directory to get a new "
                "name in it (--report reports/), or move the old report"
            )
        elif error.errno == errno.ENOENT:
            base += "; create the directory first"
        return ReportError(base)

    @classmethod
    def existing(cls, path: Path) -> ReportWriter:
        """A writer for a record this process did not create (to complete an incomplete one).

        The caller must have checked that the file holds ``completed: false``; ``write`` then
        replaces it atomically like any later record.
        """
        writer = cls.__new__(cls)
        writer.path = Path(path)
        writer._created = True
        return writer

    def write(self, document: ReportDocument) -> None:
        """Put ``document`` at the path, whole: created new the first time, replaced later.

        Raises
        ------
        ReportError
            When the record cannot be serialized or written, or (the first time) something
            appeared at the path meanwhile; the path then holds what it held before.
        """
        try:
            data = document.to_json_parts()
        except ValueError as error:
            raise ReportError(f"serialize report: {error}") from None
        directory = self.path.parent
        temporary: Path | None = None
        try:
            temporary = write_temporary(directory, data)
            if self._created:
                os.replace(temporary, self.path)
                temporary = None
            else:
                os.link(temporary, self.path, follow_symlinks=False)
                self._created = True
        except OSError as error:
            verb = "write" if self._created else "create"
            raise ReportError(
                f"{verb} report {self.path}: {error.strerror} (os error {error.errno})"
            ) from None
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    temporary.unlink()
        fsync_directory(directory.resolve())
