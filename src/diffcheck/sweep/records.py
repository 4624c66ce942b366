"""Report records the sweep parent writes itself, and the rules that keep them honest.

A worker writes its own report with the runner (create-new, incomplete then complete). The
parent writes a record only where the worker could not:

- the worker died or timed out: the file holds ``completed: false`` (or is missing, or empty
  because the worker died between creating and first writing it). The parent completes it as
  ``failed`` with the cause, built from the worker's own incomplete record where there is
  one, so ``started_at`` and the configured precision stay the worker's;
- the candidate has no adapter here: no worker can run it, and the parent writes ``not_run``.

A complete record is never replaced: :func:`settle_report` re-reads the file and leaves it
alone when it is complete, and a worker writes its final record only over the very file it
created (:func:`run_guarded`). An unreadable or foreign file is never deleted either: it is
moved aside (``*.incomplete.json``, ``*.incomplete-2.json``...) with a no-clobber link.

Report paths are read with :func:`~diffcheck.files.read_regular`: a symbolic link, a
FIFO, a device or a file over :func:`~diffcheck.report.limits.report_read_limit` is
``UNREADABLE`` (and moved aside as itself, the link never followed), never a hang.
"""

from __future__ import annotations

import enum
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..adapters import Adapter
from ..config import Check
from ..errors import ReportError
from ..files import identity, replace_if_unchanged
from ..report.models import (
    ReportDocument,
    Status,
)
from ..report.read import read_report
from ..report.writer import ReportWriter
from ..runner import completed_document, initial_document, result_record, run_check

__all__ = [
    "OWN_IO_STATUS",
    "OwnIOError",
    "ReportState",
    "Settled",
    "new_document",
    "read_document",
    "read_state",
    "run_guarded",
    "set_aside",
    "set_aside_latest",
    "settle_report",
    "write_new_final",
]


#: A worker's exit status when diffcheck's own I/O failed (``EX_TEMPFAIL``): the parent then
#: leaves the report incomplete, so ``--resume`` runs the check again.
OWN_IO_STATUS = 75


class OwnIOError(ReportError):
    """diffcheck could not write a report (a full disk, an I/O error, a read-only mount).

    This is never a verdict on the backend: the check is left incomplete and runs again.
    """


class ReportState(enum.Enum):
    """What a report path holds right now."""

    MISSING = "missing"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    UNREADABLE = "unreadable"


def read_document(path: Path) -> ReportDocument:
    """The report at ``path``, read bounded, never through a symlink (the sweep's one reader).

    Raises
    ------
    FileNotFoundError
        When nothing is at ``path``.
    ReportError
        One line for anything else that is not a valid report (binary data, deep nesting,
        a FIFO, a device, a symbolic link, a file over the size limit).
    """
    return read_report(path, follow_symlinks=False)


def read_state(path: Path) -> tuple[ReportState, ReportDocument | None]:
    """Classify the file at ``path`` (an empty, invalid or non-regular file is ``UNREADABLE``)."""
    try:
        document = read_document(path)
    except FileNotFoundError:
        return ReportState.MISSING, None
    except ReportError:
        return ReportState.UNREADABLE, None
    state = ReportState.COMPLETE if document.completed else ReportState.INCOMPLETE
    return state, document


def set_aside(path: Path, *, label: str = "incomplete") -> Path:
    """Move ``path`` to the first free ``<stem>.<label>[-N].json`` beside it; return it.

    A hard link claims the new name (failing if it exists, so nothing is overwritten), then
    the old name is removed; the content is never copied or truncated.
    """
    stem = path.name.removesuffix(".json")
    for attempt in range(1, 10_000):
        suffix = f".{label}" if attempt == 1 else f".{label}-{attempt}"
        target = path.with_name(f"{stem}{suffix}.json")
        try:
            # The entry itself is moved: a symbolic link stays a link, its target untouched.
            os.link(path, target, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError as error:
            raise ReportError(f"move {path} aside: {error.strerror}") from None
        path.unlink()
        return target
    raise ReportError(f"move {path} aside: too many earlier {label} reports")


def set_aside_latest(path: Path, *, label: str) -> Path:
    """Move ``path`` to ``<stem>.<label>.json``, replacing the one an earlier run moved there.

    For records that are no evidence (a ``not_run``: nothing ran): each ``--resume`` of a
    pair that is not here would otherwise add one more file. Only a regular file at the
    target is replaced (by a rename, which never follows a link); anything else there
    (a directory, a link) makes it :func:`set_aside`'s next free name instead.
    """
    stem = path.name.removesuffix(".json")
    target = path.with_name(f"{stem}.{label}.json")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise ReportError(f"move {path} aside: {error.strerror}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        return set_aside(path, label=label)
    try:
        os.replace(path, target)
    except OSError as error:
        raise ReportError(f"move {path} aside: {error.strerror}") from None
    return target


def new_document(check: Check) -> ReportDocument:
    """The incomplete record the runner would start ``check`` with (labels best effort)."""
    return initial_document(check)


def _final(
    base: ReportDocument, check: Check, status: Status, reason: str, elapsed_ms: float | None
) -> ReportDocument:
    return completed_document(base, result_record(check, status, reason), elapsed_ms)


def write_new_final(
    path: Path, check: Check, status: Status, reason: str, *, elapsed_ms: float | None = None
) -> ReportDocument:
    """Create ``path`` new (never overwriting) holding a final ``status`` record for ``check``."""
    document = _final(new_document(check), check, status, reason, elapsed_ms)
    ReportWriter(path).write(document)
    return document


def run_guarded(check: Check, path: Path, candidate: Adapter) -> ReportDocument:
    """Run ``check`` in this (worker) process, writing its report the way a worker must.

    The report is created new with its incomplete record, as :func:`~diffcheck.runner.run_check`
    does; the final record then replaces it only while ``path`` still holds that same file.
    A worker that outlived its sweep (or its timeout) therefore cannot replace a report the
    parent settled, or that a rerun completed, in the meantime.

    Raises
    ------
    OwnIOError
        When the report cannot be created or written (diffcheck's own I/O, not the check's).
    ReportError
        When the report was moved or replaced while the check ran.
    """
    try:
        writer = ReportWriter(path)
        writer.write(initial_document(check, candidate))
        created = identity(path)
    except (ReportError, OSError) as error:  # nothing ran: whatever it was, it is not a verdict
        raise OwnIOError(_io_text(error)) from None
    document = run_check(check, None, candidate=candidate)
    try:
        data = document.to_json_parts()
    except ValueError as error:
        raise ReportError(f"serialize report: {error}") from None
    try:
        replace_if_unchanged(path, created, data)
    except OSError as error:
        raise OwnIOError(_io_text(error)) from None
    except ReportError as error:
        if isinstance(error.__context__, OSError):  # the write failed, not a replaced file
            raise OwnIOError(str(error)) from None
        raise
    return document


def _io_text(error: Exception) -> str:
    if isinstance(error, OSError):
        return f"write {error.filename or 'report'}: {error.strerror}"
    return str(error)


@dataclass(frozen=True)
class Settled:
    """What :func:`settle_report` found and did."""

    document: ReportDocument
    #: What the parent wrote: None (the worker's record stands), or a short description.
    action: str | None
    #: Where an unusable earlier file was moved, if one was.
    moved_aside: Path | None = None


def settle_report(
    path: Path, check: Check, failure: str | None, *, elapsed_ms: float | None = None
) -> Settled:
    """Make sure ``path`` ends holding a complete record, after the worker has exited.

    Parameters
    ----------
    path
        The check's report path.
    check
        The check the worker ran.
    failure
        Why the worker did not finish (signal, timeout, exit status), or None when it exited
        normally. A complete record is kept as it is in either case.
    elapsed_ms
        The worker's wall time, recorded as the execution time of a record the parent writes.

    Returns
    -------
    Settled
        The final document and what was done to reach it.

    Raises
    ------
    ReportError
        When the record cannot be written or an unreadable file cannot be moved aside.
    """
    state, document = read_state(path)
    if state is ReportState.COMPLETE:
        assert document is not None
        return Settled(document, None)
    reason = failure or "worker exited without completing its report"
    expected = check.record().model_dump()
    if state is ReportState.INCOMPLETE:
        assert document is not None
        if document.config.model_dump() == expected:
            final = _final(document, check, "failed", reason, elapsed_ms)
            ReportWriter.existing(path).write(final)
            return Settled(final, "completed the worker's incomplete report as failed")
    moved = None
    if state is not ReportState.MISSING:
        moved = set_aside(path)
    final = write_new_final(path, check, "failed", reason, elapsed_ms=elapsed_ms)
    return Settled(final, "wrote a failed report (the worker left none)", moved)
