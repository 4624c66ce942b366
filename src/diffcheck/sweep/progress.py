"""Progress on stderr while a sweep runs (not with --quiet).

On a terminal, a rich progress bar. Without one (a CI log, a pipe), plain lines with no
control sequences, bounded in volume: a line when a backend pair finishes, at most one a
second, and a heartbeat when nothing was printed for :data:`HEARTBEAT_S` seconds, so a long
sweep is never silent and a large one never floods the log.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import IO, Any

from .summary import SummaryRow

__all__ = ["HEARTBEAT_S", "SweepProgress"]

#: Seconds of silence after which a log line says the sweep is still running.
HEARTBEAT_S = 15.0
#: The fewest seconds between two log lines for finished pairs.
_MIN_GAP_S = 1.0


class SweepProgress:
    """Running pass / fail / not_run counts: a bar on a terminal, bounded lines in a log.

    Parameters
    ----------
    total
        Checks to run.
    enabled
        False for ``--quiet``: nothing is printed.
    stream
        Where progress goes (stderr, so stdout keeps only the summary).
    pairs
        Checks per pair label (``reference -> candidate``), so a log line can say when a
        pair finished.
    heartbeat_s
        Seconds of silence before a log line says the sweep is still running.
    """

    def __init__(
        self,
        total: int,
        *,
        enabled: bool = True,
        stream: IO[str] | None = None,
        pairs: Mapping[str, int] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.plain = enabled and not self.enabled
        self.total = total
        self.counts = {"passed": 0, "failed": 0, "known": 0, "not_run": 0}
        self._progress: Any = None
        self._task: Any = None
        self._left = dict(pairs or {})
        self._heartbeat_s = heartbeat_s
        self._started = time.monotonic()
        self._last_line = self._started
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def _line(self, text: str) -> None:
        c = self.counts
        done = sum(c.values())
        known = f", {c['known']} known" if c["known"] else ""
        elapsed = time.monotonic() - self._started
        print(
            f"sweep: {done}/{self.total} checks ({c['passed']} passed, {c['failed']} failed"
            f"{known}, {c['not_run']} not_run) after {elapsed:.0f} s{text}",
            file=self.stream,
            flush=True,
        )
        self._last_line = time.monotonic()

    def _heartbeat(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                if time.monotonic() - self._last_line >= self._heartbeat_s:
                    self._line("; still running")

    def __enter__(self) -> SweepProgress:
        if self.plain:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("[bold]sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task("sweep", total=self.total, counts=self._text())
        return self

    def _text(self) -> str:
        c = self.counts
        known = f"[yellow]{c['known']} known[/] " if c["known"] else ""
        return (
            f"[green]{c['passed']} passed[/] [red]{c['failed']} failed[/] {known}"
            f"[dim]{c['not_run']} not_run[/]"
        )

    def advance(self, row: SummaryRow) -> None:
        """Count one finished check."""
        with self._lock:
            self.counts[row.outcome] += 1
            if self._progress is not None:
                self._progress.update(self._task, advance=1, counts=self._text())
            if not self.plain:
                return
            label = f"{row.reference} -> {row.candidate}"
            finished = False
            if label in self._left:
                self._left[label] -= 1
                finished = self._left[label] == 0
            last = sum(self.counts.values()) == self.total
            quiet_for = time.monotonic() - self._last_line
            if last:
                self._line("; done")
            elif finished and quiet_for >= _MIN_GAP_S:
                self._line(f"; finished {label}")
            elif quiet_for >= self._heartbeat_s:
                self._line("")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self._progress is not None:
            self._progress.__exit__(kind, error, traceback)
