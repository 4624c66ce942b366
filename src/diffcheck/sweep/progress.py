"""The progress bar on stderr while a sweep runs (only on a terminal, and not with --quiet)."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import IO, Any

from .summary import SummaryRow

__all__ = ["SweepProgress"]


class SweepProgress:
    """A rich progress bar with running pass / fail / not_run counts; a no-op when disabled.

    Parameters
    ----------
    total
        Checks to run.
    enabled
        False for ``--quiet``; the bar is also off when ``stream`` is not a terminal, so logs
        and CI output get no control sequences.
    stream
        Where the bar is drawn (stderr, so stdout keeps only the summary).
    """

    def __init__(self, total: int, *, enabled: bool = True, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.total = total
        self.counts = {"passed": 0, "failed": 0, "known": 0, "not_run": 0}
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> SweepProgress:
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
        self.counts[row.outcome] += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1, counts=self._text())

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(kind, error, traceback)
