"""``diffcheck fuzz --api``: search the standard's functions on one backend, with progress.

On a terminal a rich progress bar shows the functions done and the findings so far;
without one, a short line per function finished goes to stderr. The summary (one line per
finding, then the totals) goes to stdout. Exit status 0 when every finding is a declared
known divergence (or there is none), 1 otherwise or for a bad option (one line on stderr).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ._parser import OneLineParser

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
    """SIGTERM ends the search like SIGINT: what was found is written, then exit 143."""

    def interrupt(number: int, frame: object) -> None:
        raise _Terminated

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave the signal as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the search is, so it unwinds and writes as SIGINT does."""


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
            )
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, _Terminated)
        kept = (
            f"; what was found is in {options.out} (--resume continues it)" if options.out else ""
        )
        print(
            f"diffcheck: api search {'terminated' if terminated else 'interrupted'}{kept}",
            file=sys.stderr,
        )
        return 143 if terminated else 130
    for entry in result.document.findings:
        known = " (known)" if entry.known else ""
        print(
            f"{entry.function} [{entry.kind}] {entry.dtype}: blame {entry.blame}{known}: {entry.reason}"
        )
    print(result.summary())
    return 0 if result.unexplained == 0 else 1
