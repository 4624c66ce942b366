"""``diffcheck sweep MATRIX``: run a matrix of checks, each in its own worker process.

Exit status: 1 when any check failed (a failure with a known divergence of its candidate
only with ``--strict-known``), when a ``required`` pair has a not_run check, or when nothing
executed at all (every check not_run); 0 otherwise. A bad matrix, a bad option or an
existing report without ``--resume`` is one line on stderr and exit 1, before anything runs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from ._parser import OneLineParser

# The dispatcher leaves "sweep" out when this import fails: rich draws its progress and table.
if importlib.util.find_spec("rich") is None:
    raise ImportError("diffcheck sweep needs rich (pip install rich)")

__all__ = ["sweep"]

DEFAULT_TIMEOUT_S = 60.0


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
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes at once with --executor local (default: CPU count)",
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
    parser.add_argument("--executor", choices=("local", "dask"), default="local")
    parser.add_argument(
        "--scheduler", metavar="ADDR", help="dask scheduler address (tcp://host:8786)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
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


def sweep(argv: Sequence[str]) -> int:
    """``diffcheck sweep``: run a matrix; return the exit status."""
    from ..sweep.availability import unavailable_pairs
    from ..sweep.console import print_summary
    from ..sweep.executors import make_executor
    from ..sweep.matrix import load_matrix
    from ..sweep.plan import Pair, plan_matrix
    from ..sweep.progress import SweepProgress
    from ..sweep.run import run_sweep

    options = _parser().parse_args(argv)
    plan = plan_matrix(load_matrix(options.matrix), source=f"matrix {options.matrix}")
    timeout_s = _timeout(options.timeout, plan.timeout_s)
    executor = make_executor(options.executor, jobs=options.jobs, scheduler=options.scheduler)
    left_out: list[tuple[Pair, str]] = []
    if options.only_available:
        left_out = unavailable_pairs(plan.pairs)
        plan = plan.without_pairs([pair for pair, _ in left_out])
    out = options.out or Path("reports") / f"sweep-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    with SweepProgress(len(plan.checks), enabled=not options.quiet) as progress:
        summary, outputs = run_sweep(
            plan,
            matrix=options.matrix,
            out=out,
            executor=executor,
            timeout_s=timeout_s,
            resume=options.resume,
            left_out=left_out,
            on_row=progress.advance,
            strict_known=options.strict_known,
        )
    print_summary(summary, outputs.listed())
    sys.stdout.flush()
    return summary.exit_status
