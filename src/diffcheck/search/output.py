"""The search's directory, written as the search goes: bundles, a journal, findings and page.

The directory is created before the first function is searched (an uncreatable ``--out`` is
a one-line error before any work). After each function its bundles are created (new files,
``O_EXCL``, never through a link), then one line is appended to ``journal.jsonl`` (and
synced): the function's run record, its findings' entries and their page fragments. A run
killed at any instant keeps every function journaled before it; ``--resume`` reads the
journal, skips those functions and goes on. ``findings.json`` and ``index.html`` are derived
views, atomically rewritten at the end (and when the run is interrupted).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BundleError, ConfigError
from ..files import create_new, write_replacing
from .bundle import write_bundle
from .findings import FindingEntry, FindingsDocument, FunctionRun
from .recipes import Example
from .runner import Finding

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = [
    "JOURNAL",
    "Journal",
    "bundle_name",
    "describe_example",
    "describe_finding_example",
    "write_new",
]

JOURNAL = "journal.jsonl"
_JOURNAL_KIND = "diffcheck-api-search-journal"


def bundle_name(index: int, finding: Finding) -> str:
    """``003-linalg.vecdot-value-float32.json``: numbered, so names never collide."""
    from .journal_check import bundle_file

    return bundle_file(index, finding.function, finding.kind, finding.dtype)


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)} {np.array2string(value, threshold=12)}"
    return repr(value)


def describe_example(example: Example) -> str:
    """The example's inputs in one line: arrays with dtype, shape and values, then options."""
    parts = [_short(a) for a in example.args]
    parts += [_short(p) for p in example.positional]
    parts += [f"{k}={v}" for k, v in example.dtypes.items()]
    parts += [f"{k}={v!r}" for k, v in example.kwargs.items()]
    return ", ".join(parts).replace("\n", " ")


def describe_finding_example(finding: Finding) -> str:
    """The finding's minimal example, then each joined dtype's own: ``...; float32: ...``."""
    parts = [describe_example(finding.example)]
    parts += [f"{dtype}: {describe_example(example)}" for dtype, example in finding.own_examples]
    return "; ".join(parts)


def write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text``, whole or not at all; never over a file or a link."""
    try:
        create_new(path, text.encode())
    except OSError as error:
        raise BundleError(f"cannot create {path}: {error.strerror}") from None


@dataclass
class Done:
    """What the journal holds for one searched function."""

    run: FunctionRun
    entries: list[FindingEntry]
    fragments: list[str]


@dataclass
class Journal:
    """The output directory of one search, journaled function by function.

    ``header`` holds what must match for ``--resume`` to continue a run (the backends, the
    seed, examples, budget and functions): a different command cannot resume it.
    """

    directory: Path
    header: dict[str, Any]
    done: dict[str, Done] = field(default_factory=dict)

    @classmethod
    def create(cls, directory: Path, header: dict[str, Any]) -> Journal:
        """Create the directory, ``bundles/`` and the journal's first line; one-line errors."""
        if os.path.lexists(directory):  # False, not an error, for a name too long
            raise ConfigError(
                f"--out {directory} exists; give a new directory, or --resume to continue it"
            )
        try:
            directory.mkdir(parents=True)
            (directory / "bundles").mkdir()
            first = {"kind": _JOURNAL_KIND, **header}
            create_new(directory / JOURNAL, (json.dumps(first) + "\n").encode())
        except OSError as error:
            raise ConfigError(
                f"--out {directory}: cannot create it ({error.strerror}); "
                "give a directory that can be created"
            ) from None
        return cls(directory, header)

    @classmethod
    def resume(cls, directory: Path, header: dict[str, Any]) -> Journal:
        """Open an interrupted run's directory: the same command's, or a one-line error."""
        from .journal_check import read_journal

        path = directory / JOURNAL
        if path.is_symlink() or not path.is_file():
            raise ConfigError(
                f"--resume: {directory} holds no {JOURNAL}; give the --out of an earlier "
                "diffcheck fuzz --api run"
            )

        def same_run(first: Any) -> None:
            if not isinstance(first, dict) or first.get("kind") != _JOURNAL_KIND:
                raise ConfigError(f"--resume: {path} is not an API search journal")
            theirs = {k: v for k, v in first.items() if k != "kind"}
            if theirs != json.loads(json.dumps(header)):
                keys = set(theirs) | set(header)
                differ = sorted(k for k in keys if theirs.get(k) != header.get(k))
                raise ConfigError(
                    f"--resume: {directory} was searched with other options "
                    f"({', '.join(map(str, differ))[:400]}); repeat that run's options, or "
                    "give a new --out"
                )

        records, whole = read_journal(path, list(header.get("functions", [])), same_run)
        journal = cls(directory, header)
        for record in records:
            journal.done[record.run.function] = Done(record.run, record.entries, record.fragments)
        try:
            # A line a kill cut short is dropped, so the next record starts a line of its own.
            if whole > path.stat().st_size:
                with path.open("ab") as handle:
                    handle.write(b"\n")
            else:
                os.truncate(path, whole)
        except OSError as error:
            raise ConfigError(f"--resume: cannot open {path} for appending: {error}") from None
        journal._forget_unjournaled_bundles()
        return journal

    def _forget_unjournaled_bundles(self) -> None:
        """Remove bundles of a function the kill stopped before its journal line."""
        kept = {e.bundle for d in self.done.values() for e in d.entries}
        for entry in os.scandir(self.directory / "bundles"):
            name = f"bundles/{entry.name}"
            if name not in kept and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)

    @property
    def findings(self) -> int:
        return sum(len(d.entries) for d in self.done.values())

    def record(
        self,
        run: FunctionRun,
        entries: Sequence[FindingEntry],
        fragments: Sequence[str],
        findings: Sequence[Finding],
        reference: Adapter,
        candidate: Adapter,
    ) -> None:
        """Write one function's bundles, then its journal line (synced)."""
        from .record import bundle_of

        for entry, finding in zip(entries, findings, strict=True):
            write_bundle(self.directory / entry.bundle, bundle_of(finding, reference, candidate))
        line = {
            "run": run.model_dump(mode="json"),
            "entries": [e.model_dump(mode="json") for e in entries],
            "fragments": list(fragments),
        }
        data = (json.dumps(line) + "\n").encode()
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.directory / JOURNAL, flags)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as error:
            raise BundleError(f"cannot append to {self.directory / JOURNAL}: {error}") from None
        self.done[run.function] = Done(run, list(entries), list(fragments))

    def finish(self, document: FindingsDocument, fragments: Sequence[str]) -> None:
        """Atomically (re)write ``findings.json`` and ``index.html`` from the document."""
        from .page import render_page

        text = json.dumps(document.model_dump(mode="json"), indent=2) + "\n"
        write_replacing(self.directory / "findings.json", text.encode())
        write_replacing(self.directory / "index.html", render_page(document, fragments).encode())
