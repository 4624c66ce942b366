"""Create-new, incomplete-then-complete report files.

The file is created with O_CREAT|O_EXCL, so an existing report is never touched. The
incomplete record (``completed: false``) is written and fsynced before anything runs. The
final record is serialized first (a serialization error leaves the incomplete record in
place), written to a temporary file beside it, fsynced, and renamed over the incomplete
record, so at every instant the path holds one whole record: a crash can leave
``completed: false``, never a truncated file.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import ReportError
from .models import ReportDocument

__all__ = ["ReportWriter"]


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class ReportWriter:
    """Owns one new report file from creation to its final record."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as error:
            raise ReportError(
                f"create report {self.path}: {error.strerror} (os error {error.errno})"
            ) from None
        try:
            os.close(fd)
        finally:
            _fsync_directory(self.path.parent.resolve())

    @classmethod
    def existing(cls, path: Path) -> ReportWriter:
        """A writer for a record this process did not create (to complete an incomplete one).

        The caller must have checked that the file holds ``completed: false``; ``write`` then
        replaces it atomically like any final record.
        """
        writer = cls.__new__(cls)
        writer.path = Path(path)
        return writer

    def write(self, document: ReportDocument) -> None:
        """Replace the file's content with ``document``, durably and atomically."""
        try:
            data = document.to_json()
        except ValueError as error:
            raise ReportError(f"serialize report: {error}") from None
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise ReportError(f"write report {self.path}: {error.strerror}") from None
        _fsync_directory(self.path.parent.resolve())
