"""``diffcheck fuzz``: draw many shapes of one op on one backend, shrink the first failure.

Exit status 0 when every example passed; 1 when one failed (the minimal failing shape, its
reason and, with ``--report-dir``, its report are printed on stderr), when the candidate is
not_run, or for a bad option (one line on stderr, before anything runs).

``diffcheck fuzz --api`` searches the Array API standard's functions instead of one op (see
:mod:`diffcheck.cli.api_search_command`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .._numbers import parse_f64, parse_u64
from ..install import core_install
from ..text import one_line
from ._parser import OneLineParser

__all__ = ["fuzz"]


def _u64(text: str) -> int:
    value = parse_u64(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"invalid unsigned integer {text!r}")
    return value


def _f64(text: str) -> float:
    value = parse_f64(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"invalid float {text!r}")
    return value


def _parser() -> OneLineParser:
    from ..fuzz import DEFAULT_EXAMPLES, DEFAULT_MAX_ELEMENTS
    from ..fuzz.spaces import fuzzable_ops
    from ..search.api import DEFAULT_API_EXAMPLES

    parser = OneLineParser(
        prog="diffcheck fuzz",
        description=(
            "Run one op on one required backend over many drawn shapes (tails of the kernels' "
            "tiles, 1, primes, powers of two) and input seeds, each compared with the reference; "
            "shrink the first failure to a minimal failing shape."
        ),
        epilog=(
            "Exit status 0 when every example passed; 1 on a failure (minimal shape, reason and "
            "report on stderr) or when the backend is not_run. With --api (instead of --op): "
            "search every function of the Array API standard, exit 0 when every finding is a "
            "declared known divergence, 1 otherwise. Needs hypothesis "
            f"({core_install('fuzz')})."
        ),
    )
    parser.add_argument(
        "--require-backend", required=True, metavar="BACKEND", help="the candidate (no fallback)"
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--op", help=", ".join(fuzzable_ops()))
    what.add_argument(
        "--api",
        action="store_true",
        help="search the Array API standard's functions (with --functions, --out)",
    )
    parser.add_argument(
        "--functions",
        metavar="A,B,...",
        help="--api: only these functions (the standard's names, e.g. exp,linalg.vecdot)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="--api: a new directory for the findings"
    )
    parser.add_argument(
        "--time-budget",
        type=_f64,
        metavar="S",
        help="--api: seconds per function after which no example is drawn or shrink step run "
        "(default: none, so a seed gives the same findings however loaded the machine; every "
        "function it cuts is listed)",
    )
    parser.add_argument(
        "--call-timeout",
        type=_f64,
        metavar="S",
        help="--api: seconds one example may take in the worker process before it is killed "
        "and recorded as a hang (default 30)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="--api: run the calls in this process (faster; a crash or hang ends the run)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="--api: continue the interrupted run in --out (same options): functions done "
        "are kept, the rest searched",
    )
    parser.add_argument(
        "--api-version",
        metavar="YYYY.MM",
        help="--api: the standard's version to search (default: the newest the reference declares)",
    )
    parser.add_argument(
        "--reference", default="numpy", metavar="BACKEND", help="the trusted backend (numpy)"
    )
    parser.add_argument("--precision", default="f32", choices=("f32", "f16", "bf16"))
    parser.add_argument("--max-nmse", type=_f64, metavar="X", help="default: by precision")
    parser.add_argument(
        "--examples",
        type=_u64,
        metavar="N",
        help=f"examples to draw (default {DEFAULT_EXAMPLES}; with --api, per function, "
        f"default {DEFAULT_API_EXAMPLES})",
    )
    parser.add_argument(
        "--seed", type=_u64, default=0, metavar="S", help="seeds the search (same S, same shapes)"
    )
    parser.add_argument(
        "--max-elements",
        type=_u64,
        default=DEFAULT_MAX_ELEMENTS,
        metavar="N",
        help=f"input plus output elements per example (default {DEFAULT_MAX_ELEMENTS})",
    )
    parser.add_argument(
        "--report-dir",
        type=Path,
        metavar="DIR",
        help="write the minimal failing check's report here (a new file)",
    )
    return parser


def _progress(message: str) -> None:
    print(one_line(message), file=sys.stderr, flush=True)


def fuzz(argv: Sequence[str]) -> int:
    """``diffcheck fuzz``: return the exit status."""
    from ..fuzz import DEFAULT_EXAMPLES
    from ..fuzz import fuzz as run_fuzz

    parser = _parser()
    options = parser.parse_args(argv)
    if options.api:
        from .api_search_command import api_search

        return api_search(parser, options)
    for name in (
        "functions",
        "out",
        "time_budget",
        "call_timeout",
        "in_process",
        "resume",
        "api_version",
    ):
        if getattr(options, name) not in (None, False):
            parser.error(f"--{name.replace('_', '-')} belongs to --api, not to --op")
    if options.examples is None:
        options.examples = DEFAULT_EXAMPLES
    result = run_fuzz(
        options.require_backend,
        options.op,
        reference=options.reference,
        precision=options.precision,
        max_nmse=options.max_nmse,
        examples=options.examples,
        seed=options.seed,
        max_elements=options.max_elements,
        report_dir=options.report_dir,
        progress=_progress,
    )
    if result.passed:
        print(result.summary())
        return 0
    check, verdict = result.check, result.verdict
    if check is not None and verdict is not None:
        from ..differ.render import failure_line

        # Where the minimal failing shape fails: its worst element by index in the output.
        where = failure_line(verdict, check.op.output_shape(check.params))
        if where is not None:
            print(one_line(f"where: {where}"))
    print(one_line(f"diffcheck: {result.summary()}"), file=sys.stderr)
    return 1
