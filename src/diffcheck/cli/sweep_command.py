"""``diffcheck sweep MATRIX``: run a matrix of checks, each in its own worker process.

Exit status: 1 when any check failed (a failure with a known divergence of its candidate
only with ``--strict-known``), when a ``required`` pair has a not_run check, or when nothing
executed at all (every check not_run); 0 otherwise. A bad matrix, a bad option or an
existing report without ``--resume`` is one line on stderr and exit 1, before anything runs.
"""

from __future__ import annotations

import importlib.util
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import stamp
from ..text import one_line
from ._parser import OneLineParser

# The dispatcher leaves "sweep" out when this import fails: rich draws its progress and table.
if importlib.util.find_spec("rich") is None:
    raise ImportError("diffcheck sweep needs rich (pip install rich)")

if TYPE_CHECKING:
    from ..sweep.executors import Executor
    from ..sweep.plan import Pair, SweepPlan

__all__ = ["sweep"]

DEFAULT_TIMEOUT_S = 60.0
# Kept in step with sweep.pool / sweep.plan (tests compare them), so --help needs no import.
DEFAULT_WORKER_CHECKS = 100
DEFAULT_MAX_CHECKS = 100_000


def _parser() -> OneLineParser:
    parser = OneLineParser(
        prog="diffcheck sweep",
        description=(
            "Run every check of a matrix (op x shape x precision x seed x backend pair), each in "
            "its own worker process with a timeout; write one report per check, summary.json, "
            "junit.xml and index.html into the sweep directory."
        ),
        epilog=(
            "Exit status 1 when a check failed (a failure with a known divergence of its "
            "adapter only with --strict-known), a required pair has a not_run check, or nothing "
            "executed; 0 otherwise. The matrix format is in docs/matrix.md."
        ),
    )
    parser.add_argument("matrix", type=Path, help="the matrix TOML file")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="sweep directory (default reports/sweep-<UTC time>); reports are never overwritten",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help=(
            "worker processes at once with --executor local (default, and at most: the usable "
            "CPUs, fewer when memory is short at 256 MiB per worker)"
        ),
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=f"per-check worker timeout in seconds (default: the matrix's, else {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="reuse complete reports in --out; rerun the rest (incomplete ones are moved aside)",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="with --resume: re-run the candidate of each stored pass and reuse it only when "
        "its output reproduces (otherwise the page marks reused passes as unverified)",
    )
    parser.add_argument("--executor", choices=("local", "dask"), default="local")
    parser.add_argument(
        "--isolation",
        choices=("warm", "cold"),
        default="warm",
        help=(
            "local workers: warm (default) keeps a worker per backend pair for up to "
            "--worker-checks checks, one check at a time; cold starts a fresh interpreter per check"
        ),
    )
    parser.add_argument(
        "--worker-checks",
        type=int,
        default=DEFAULT_WORKER_CHECKS,
        metavar="N",
        help=f"checks a warm worker runs before it is replaced (default {DEFAULT_WORKER_CHECKS})",
    )
    parser.add_argument(
        "--max-checks",
        type=int,
        default=DEFAULT_MAX_CHECKS,
        metavar="N",
        help=f"refuse a matrix that expands to more checks (default {DEFAULT_MAX_CHECKS})",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDR", help="dask scheduler address (tcp://host:8786)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress (a bar on a terminal, lines in a log)"
    )
    parser.add_argument(
        "--only-available",
        action="store_true",
        help="leave out non-required pairs whose backends are unavailable here",
    )
    parser.add_argument(
        "--strict-known",
        action="store_true",
        help="fail the sweep on failures with a known divergence of their adapter too",
    )
    return parser


def _timeout(option: float | None, matrix_value: float | None) -> float:
    from ..errors import ConfigError

    value = option if option is not None else (matrix_value or DEFAULT_TIMEOUT_S)
    if not 0.0 < value < float("inf"):
        raise ConfigError(f"--timeout {value:g}, but it must be a positive number of seconds")
    return value


def _note(line: str) -> None:
    print(one_line(f"diffcheck sweep: {line}"), file=sys.stderr, flush=True)


def _planning_line() -> Callable[[int, int], None]:
    """Print planning progress on stderr, at most one line every two seconds."""
    last = [-float("inf")]  # the first call (the total) always prints

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 2.0:
            last[0] = now
            print(f"diffcheck sweep: planning {done}/{total} checks", file=sys.stderr, flush=True)

    return show


def sweep(argv: Sequence[str]) -> int:
    """``diffcheck sweep``: run a matrix; return the exit status."""
    from ..errors import ConfigError
    from ..sweep.availability import unavailable_pairs
    from ..sweep.capacity import capped_jobs
    from ..sweep.executors import make_executor
    from ..sweep.matrix import load_matrix
    from ..sweep.plan import plan_matrix

    options = _parser().parse_args(argv)
    if options.max_checks < 1:
        raise ConfigError(f"--max-checks {options.max_checks}, but it must be at least 1")
    if options.rerun and not options.resume:
        raise ConfigError(
            "--rerun re-runs the candidates of the passes --resume reuses; pass --resume with it"
        )
    # Every option is checked before the matrix is expanded or anything is created.
    jobs = options.jobs
    if options.executor == "local" and (jobs is None or jobs >= 1):
        jobs, capped = capped_jobs(jobs)
        if capped is not None:
            _note(capped)
    executor = make_executor(
        options.executor,
        jobs=jobs if jobs is not None else 1,
        scheduler=options.scheduler,
        isolation=options.isolation,
        worker_checks=options.worker_checks,
    )
    plan = plan_matrix(
        load_matrix(options.matrix),
        source=f"matrix {options.matrix}",
        max_checks=options.max_checks,
        on_progress=None if options.quiet else _planning_line(),
    )
    timeout_s = _timeout(options.timeout, plan.timeout_s)
    left_out: list[tuple[Pair, str]] = []
    if options.only_available:
        left_out = unavailable_pairs(plan.pairs)
        plan = plan.without_pairs([pair for pair, _ in left_out])
    out = options.out or Path("reports") / f"sweep-{stamp()}"
    # SIGTERM unwinds like ^C: the workers are killed and the report left incomplete for
    # --resume, and the interpreter exits normally, so multiprocessing removes its pymp-*
    # folder (a process ended by the signal's default action left it in the system's temp).
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _run(options, plan, timeout_s, left_out, out, executor)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _run(
    options: Any,
    plan: SweepPlan,
    timeout_s: float,
    left_out: list[tuple[Pair, str]],
    out: Path,
    executor: Executor,
) -> int:
    """Run the planned sweep and print its summary; the exit status."""
    from ..sweep.console import print_summary
    from ..sweep.progress import SweepProgress
    from ..sweep.run import run_sweep

    pairs = Counter(f"{c.pair.reference} -> {c.pair.candidate}" for c in plan.checks)
    with SweepProgress(len(plan.checks), enabled=not options.quiet, pairs=pairs) as progress:
        summary, outputs = run_sweep(
            plan,
            matrix=options.matrix,
            out=out,
            executor=executor,
            timeout_s=timeout_s,
            resume=options.resume,
            rerun=options.rerun,
            left_out=left_out,
            on_row=progress.advance,
            strict_known=options.strict_known,
            on_note=_note,
        )
    print_summary(summary, outputs.listed())
    sys.stdout.flush()
    return summary.exit_status
