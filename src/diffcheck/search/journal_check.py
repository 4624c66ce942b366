"""Reading an interrupted search's journal back as hostile input: it must be the run it claims.

``--resume`` continues a run from ``journal.jsonl``; whatever the journal holds becomes
``findings.json`` and the page. A kill cuts at most the journal's last line (each line is
appended and synced whole), so :func:`read_journal` takes only that one as cut short (its
function is searched again) and refuses, in one ConfigError line naming the line, a journal
that no run writes:

- a line before the last that does not parse, or a record that is not a run, its entries
  and as many page fragments;
- a function the run's header does not list, one journaled twice, or out of the header's
  order (the run searches in that order);
- a run whose ``findings`` count is not its number of entries, an entry of another function,
  a repeated entry;
- an entry whose bundle is not the one the run names for it (``bundles/NNN-function-kind-
  dtype.json``, numbered on from the entries before it) or is not a regular file there.

The journal's size is bounded (:data:`MAX_JOURNAL_BYTES`), so reading it holds a small
multiple of its bytes.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from ..errors import ConfigError, ReportError
from ..files import read_regular
from ..text import one_line
from .findings import FindingEntry, FunctionRun

__all__ = ["MAX_JOURNAL_BYTES", "JournalRecord", "bundle_file", "read_journal"]

#: The largest journal read: a run of every function with hundreds of findings each is a
#: few megabytes; past this it was not written by a run.
MAX_JOURNAL_BYTES: Final = 64 * 1024 * 1024


@dataclass
class JournalRecord:
    """What the journal holds for one searched function."""

    run: FunctionRun
    entries: list[FindingEntry]
    fragments: list[str]


def bundle_file(index: int, function: str, kind: str, dtype: str) -> str:
    """``003-linalg.vecdot-value-float32.json``: numbered, so names never collide."""
    stem = f"{index:03d}-{function}-{kind}-{dtype}"
    return re.sub(r"[^A-Za-z0-9_.,-]", "_", stem) + ".json"


def _refuse(path: Path, number: int, why: str) -> ConfigError:
    return ConfigError(
        one_line(
            f"--resume: {path} line {number}: {why}; the journal is not the run it claims to "
            "be (edited or damaged): give a new --out"
        )
    )


def _record(value: Any) -> JournalRecord:
    if not isinstance(value, dict) or set(value) != {"run", "entries", "fragments"}:
        raise ValueError("not a journal record (run, entries, fragments)")
    entries, fragments = value["entries"], value["fragments"]
    if not isinstance(entries, list) or not isinstance(fragments, list):
        raise ValueError("entries and fragments must be lists")
    if not all(isinstance(f, str) for f in fragments):
        raise ValueError("a page fragment is not a text")
    return JournalRecord(
        FunctionRun.model_validate(value["run"], strict=True),
        [FindingEntry.model_validate(e, strict=True) for e in entries],
        list(fragments),
    )


def _check(record: JournalRecord, start: int, directory: Path) -> str | None:
    """Why ``record`` is not what the run writes, or None."""
    run = record.run
    if run.findings != len(record.entries) or len(record.fragments) != len(record.entries):
        return (
            f"{run.function!r} claims {run.findings} findings but holds {len(record.entries)} "
            f"entries and {len(record.fragments)} page fragments"
        )
    seen: set[str] = set()
    for offset, entry in enumerate(record.entries):
        if entry.function != run.function:
            return f"an entry of {entry.function!r} in the record of {run.function!r}"
        expected = f"bundles/{bundle_file(start + offset, entry.function, entry.kind, entry.dtype)}"
        if entry.bundle != expected or entry.bundle in seen:
            return (
                f"entry {offset} names bundle {entry.bundle!r}, but the run names it {expected!r}"
            )
        seen.add(entry.bundle)
        try:
            mode = os.lstat(directory / entry.bundle).st_mode
        except OSError:
            return f"entry {offset}'s bundle {entry.bundle} is not there"
        if not stat.S_ISREG(mode):
            return f"entry {offset}'s bundle {entry.bundle} is not a regular file"
    return None


def read_journal(
    path: Path, functions: list[str], check_header: Callable[[Any], None]
) -> tuple[list[JournalRecord], int]:
    """The header, every function's record and the bytes up to the last whole record.

    A line a kill cut short is not counted in the bytes: the caller truncates the journal
    there, so the next record starts on a line of its own (one past the file's size: the
    last record lacks its newline, which the caller appends). ``check_header`` sees the decoded
    header line before any record is read (a journal of other options says so first).

    Parameters
    ----------
    path
        ``journal.jsonl`` of the run to continue.
    functions
        The run's functions in order (its header's): every record must be one of them.
    check_header
        Raises when the header is not the run's.

    Raises
    ------
    ConfigError
        One line naming the journal line, when the journal is not what a run writes.
    """
    try:
        data = read_regular(path, limit=MAX_JOURNAL_BYTES, follow_symlinks=False)
    except (FileNotFoundError, ReportError) as error:
        raise ConfigError(one_line(f"--resume: cannot read {path}: {error}")) from None
    lines = data.split(b"\n")
    try:
        header = json.loads(lines[0])
    except (ValueError, RecursionError) as error:
        raise _refuse(path, 1, f"the header is not JSON ({error})") from None
    check_header(header)
    order = {name: index for index, name in enumerate(functions)}
    records: list[JournalRecord] = []
    findings = 0
    whole = len(lines[0]) + 1
    last = len(lines) - 1 if lines[-1] else len(lines) - 2  # the last line that holds text
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            if number - 1 < last:
                raise _refuse(path, number, "an empty line inside the journal")
            continue
        try:
            record = _record(json.loads(line))
        except (ValueError, ValidationError, RecursionError) as error:
            if number - 1 == last:
                continue  # the line a kill cut short: that function runs again
            raise _refuse(path, number, f"not a record ({str(error).splitlines()[0]})") from None
        name = record.run.function
        if name not in order:
            raise _refuse(path, number, f"function {name!r} is not one the run searches")
        if records and order[name] <= order[records[-1].run.function]:
            raise _refuse(path, number, f"function {name!r} is journaled twice or out of order")
        why = _check(record, findings, path.parent)
        if why is not None:
            raise _refuse(path, number, why)
        records.append(record)
        findings += len(record.entries)
        whole += len(line) + 1
    return records, whole
