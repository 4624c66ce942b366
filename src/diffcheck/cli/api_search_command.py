"""``diffcheck fuzz --api``: search the standard's functions on one backend, with progress.

On a terminal a rich progress bar shows the functions done and the findings so far;
without one, a short line per function finished goes to stderr. The summary (one line per
finding with its input, the oracle's why, its bundle and a one-line repro, then the totals)
goes to stdout. Exit status 0 when every finding is a declared
known divergence (or there is none), 1 otherwise or for a bad option (one line on stderr).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..text import one_line
from ._parser import OneLineParser

if TYPE_CHECKING:
    from ..search.findings import FindingEntry

__all__ = ["api_search"]

_OP_ONLY = ("precision", "max_nmse", "report_dir")


@contextmanager
def _progress() -> Iterator[object]:
    """A progress callback: rich on a terminal, a line per function otherwise."""
    if not sys.stderr.isatty():

        def line(function: str, done: int, total: int, found: int) -> None:
            print(f"api search: {done}/{total} {function} ({found} findings)", file=sys.stderr)

        yield line
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("api search"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[function]} · {task.fields[found]} findings"),
        transient=True,
    ) as bar:
        task = bar.add_task("functions", total=None, function="", found=0)

        def update(function: str, done: int, total: int, found: int) -> None:
            bar.update(task, completed=done, total=total, function=function, found=found)

        yield update


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM stop the search: what was found is written, then exit 130 / 143.

    The first signal only sets the search's stop flag (see :mod:`diffcheck.search.stop`:
    raising from a handler can land in a garbage-collector callback and be swallowed); the
    search stops at its next example, or at once while it waits for its worker. A second
    signal raises where the program is.
    """
    from ..search.stop import request_stop

    def stop(number: int, frame: object) -> None:
        _LAST_SIGNAL.append(number)
        if len(_LAST_SIGNAL) > 1:
            raise _Terminated if number == signal.SIGTERM else KeyboardInterrupt
        request_stop()

    _LAST_SIGNAL.clear()
    try:
        previous = {n: signal.signal(n, stop) for n in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: leave the signals as they are
        yield
        return
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the search is, so it unwinds and writes as SIGINT does."""


_LAST_SIGNAL: list[int] = []


def _terminated_by_flag(stop: KeyboardInterrupt) -> bool:
    """A stop raised by the flag after a swallowed signal: SIGTERM if that was the last."""
    return bool(_LAST_SIGNAL) and _LAST_SIGNAL[-1] == signal.SIGTERM


def _finding(entry: FindingEntry, out: Path | None) -> list[str]:
    """One finding as ``findings.json`` has it: its input, the oracle's why, and with
    ``--out`` its bundle and the call as one line of Python (read back from the bundle)."""
    from ..errors import ReportError
    from ..search.bundle import read_bundle
    from ..search.finding_text import finding_lines, repro

    known = " (known)" if entry.known else ""
    bundle = None if out is None else out / entry.bundle
    call = namespace = None
    if bundle is not None:
        try:
            written = read_bundle(bundle)
            call, namespace = repro(written), written.candidate.library
        except ReportError:  # the finding stands; only its one-line repro is missing
            pass
    return [
        one_line(line)
        for line in finding_lines(
            head=f"{entry.function} [{entry.kind}] {entry.dtype}: blame {entry.blame}{known}: "
            f"{entry.reason}",
            example=entry.example,
            why=entry.blame_why,
            bundle=None if bundle is None else str(bundle),
            call=call,
            namespace=namespace,
        )
    ]


def api_search(parser: OneLineParser, options: argparse.Namespace) -> int:
    """Run the search the parsed options ask for; return the exit status."""
    from ..search import DEFAULT_API_EXAMPLES, search_api
    from ..search.isolation import DEFAULT_CALL_TIMEOUT_S

    given = [
        f"--{n.replace('_', '-')}"
        for n in _OP_ONLY
        if getattr(options, n, None) not in (None, "f32")
    ]
    if given:
        parser.error(f"{', '.join(given)} belong to --op, not to --api")
    functions = None
    if options.functions is not None:
        functions = [f.strip() for f in options.functions.split(",") if f.strip()]
        if not functions:
            parser.error("--functions is empty; give the standard's names, e.g. exp,linalg.vecdot")
    try:
        with _terminate_as_interrupt(), _progress() as progress:
            result = search_api(
                options.require_backend,
                reference=options.reference,
                functions=functions,
                examples=DEFAULT_API_EXAMPLES if options.examples is None else options.examples,
                seed=options.seed,
                out=options.out,
                budget_s=options.time_budget,
                progress=progress,  # type: ignore[arg-type]
                isolate=not options.in_process,
                call_timeout_s=(
                    DEFAULT_CALL_TIMEOUT_S if options.call_timeout is None else options.call_timeout
                ),
                resume=options.resume,
                api_version=options.api_version,
            )
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, _Terminated) or _terminated_by_flag(stop)
        kept = (
            f"; what was found is in {options.out} (--resume continues it)" if options.out else ""
        )
        print(
            f"diffcheck: api search {'terminated' if terminated else 'interrupted'}{kept}",
            file=sys.stderr,
        )
        return 143 if terminated else 130
    for entry in result.document.findings:
        for line in _finding(entry, options.out):
            print(line)
    print(result.summary())
    return 0 if result.unexplained == 0 else 1
