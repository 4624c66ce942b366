"""The subcommands other than ``sweep``."""

from __future__ import annotations

import math
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .._numbers import short_float
from ..errors import ReportError
from ..files import fresh_name, remove_stale_temporaries
from ..text import one_line
from ._parser import OneLineParser

if TYPE_CHECKING:
    from ..report.models import ReportDocument

from .replay_command import replay

__all__ = ["ops", "replay", "run", "schema", "upgrade"]


def run(argv: Sequence[str]) -> int:
    """``diffcheck run``: one required check, one new report, exit 0 only on a pass."""
    from ..report.identity import computed_by_of
    from ..runner import run_check
    from .run_args import parse_run_args
    from .run_parser import usage

    args = parse_run_args(argv)
    if args is None:
        print(usage())
        return 0
    if os.path.isdir(args.report):  # False for any name the OS refuses (too long...)
        # A directory asks for a new name in it, so the same command can be run again.
        check = args.check
        args = replace(
            args,
            report=fresh_name(args.report, f"{check.op.name}-{check.require_backend}", ".json"),
        )
    # A temporary left by an earlier run killed mid-write goes; SIGTERM unwinds like ^C, so
    # this run's own temporary is removed and its report holds one whole record.
    remove_stale_temporaries(args.report.parent)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        document = run_check(args.check, args.report, max_memory=args.max_memory)
    finally:
        signal.signal(signal.SIGTERM, previous)
    result = document.result
    assert result is not None
    if result.status == "passed":
        print(f"Numerical check completed; report: {args.report}")
        print(_status_line(document))
        if document.one_library and not args.check.allow_self_test:
            # Like a self-test: never a pass for the backend (an asked-for self-test is
            # refused before it runs otherwise, and says so in its coverage).
            computed_by = computed_by_of(document)
            side = None if computed_by is None else computed_by.candidate
            library = "one library's" if side is None else side.module
            print(
                one_line(
                    f"diffcheck: NOT INDEPENDENT: both sides returned {library} arrays, so "
                    f"{result.backend} computed with the reference's own library; like a "
                    f"self-test, not a pass for the backend; report: {args.report}"
                ),
                file=sys.stderr,
            )
            return 1
        return 0
    print(_status_line(document))
    where = _where(document)
    if where is not None:
        print(f"where: {where}")
    reason = result.reason or f"required backend result: {result.status}"
    print(one_line(f"diffcheck: {reason}; report: {args.report}"), file=sys.stderr)
    return 1


def _where(document: ReportDocument) -> str | None:
    """Where a failed check's worst element is, re-derived from the report's outputs."""
    from ..report.replay import replay as replay_document
    from ..text import one_line
    from .show_command import failure_where

    where = failure_where(replay_document(document))
    return None if where is None else one_line(where)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _status_line(document: ReportDocument) -> str:
    """``status: failed (attention on mlx:cpu at f16); nmse 3.1e-08 < tolerance 1e-06; ...``.

    The contract's lines say that a check completed, or why not; this one says how it came
    out against its tolerance, and names the first failing segment when one failed.
    """
    result = document.result
    assert result is not None
    # Every op's config model has op and precision (the per-op model is not known statically).
    config = document.config.model_dump()
    what = f"{config['op']} on {result.backend} at {config['precision']}"
    line = f"status: {result.status} ({what})"
    metrics, tolerance = result.metrics, result.tolerance
    if metrics is None or tolerance is None:
        return f"{line}; not measured"
    kind = "absolute MSE" if metrics.uses_absolute_mse else "nmse"
    relation = "<" if metrics.nmse < tolerance else ">="
    line += f"; {kind} {metrics.nmse:.3e} {relation} tolerance {tolerance:g}"
    failing = next((s for s in document.segments or [] if s.status == "failed"), None)
    if failing is not None and failing.metrics is not None:
        relation = "<" if failing.metrics.nmse < tolerance else ">="
        line += (
            f"; segment {failing.name} failed: nmse {failing.metrics.nmse:.3e} "
            f"{relation} tolerance {tolerance:g}"
        )
    elif failing is not None:
        line += f"; segment {failing.name} failed: {failing.reason}"
    floor = getattr(result, "floor", None)
    if floor is not None:
        ratio = floor.candidate_nmse / floor.floor_nmse if floor.floor_nmse > 0 else math.inf
        relation = "<" if floor.status == "passed" else ">="
        line += (
            f"; {short_float(ratio)}x the {floor.honest_twin} floor {short_float(floor.floor_nmse)}"
            f" ({relation} {short_float(floor.multiple)}x)"
        )
        if floor.status == "failed" and floor.match is not None:
            line += f", like {floor.match}"
    return line


def _option_default(value: object) -> str:
    # As the option is typed on the command line: flags true/false, floats shortest.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def ops(argv: Sequence[str]) -> int:
    """``diffcheck ops``: every operator with its source package, options and defaults.

    An op plugin that cannot be used (it fails to load, or its name is claimed twice) is
    listed as one ``error:`` line, and the exit status is then 1.
    """
    from ..ops import OPS
    from ..precision import PRECISIONS, default_max_nmse

    OneLineParser(prog="diffcheck ops", description=ops.__doc__).parse_args(argv)
    for op in OPS.values():
        options = " ".join(
            f"--{name} {_option_default(field.default)}"
            for name, field in op.params_model.model_fields.items()
        )
        alias = f" (alias {', '.join(op.aliases)})" if op.aliases else ""
        # A plugin's package, execution path and defaults are its own texts: escaped.
        print(one_line(f"{op.name}{alias} ({OPS.source(op.name).package}): {options}"))
        print(f"    {one_line(op.execution_path)}")
        own = [
            f"{p} {op.default_max_nmse(p):g}"
            for p in PRECISIONS
            if op.default_max_nmse(p) != default_max_nmse(p)
        ]
        if own:
            print(f"    default --max-nmse: {', '.join(own)} (others by precision)")
    problems = OPS.problems()
    for problem in problems:
        print(one_line(f"error: {problem}"), file=sys.stderr)
    return 1 if problems else 0


def schema(argv: Sequence[str]) -> int:
    """``diffcheck schema``: print the report JSON Schema (or write it with --write DIR)."""
    from ..report.schema import schema_text, write_schema

    parser = OneLineParser(prog="diffcheck schema", description=schema.__doc__)
    parser.add_argument(
        "--write",
        type=Path,
        metavar="DIR",
        help="write every schema (reports v1 and v2, matrix, summary, findings) into DIR",
    )
    options = parser.parse_args(argv)
    if options.write:
        from ..search.schema import write_findings_schema
        from ..sweep.schema import write_schemas

        _require_directory(options.write)
        try:
            paths = [
                *write_schema(options.write),
                *write_schemas(options.write),
                write_findings_schema(options.write),
            ]
        except OSError as error:
            raise ReportError(
                f"cannot write schemas into {options.write}: {error.strerror or error}"
            ) from None
        for path in paths:
            print(path)
    else:
        sys.stdout.write(schema_text())
    return 0


def _require_directory(directory: Path) -> None:
    """An existing directory, or one line saying what is there instead and what to do."""
    try:
        directory.stat()
    except FileNotFoundError:
        raise ReportError(
            f"schema directory {directory} does not exist (create it first)"
        ) from None
    except (OSError, ValueError) as error:  # a name too long, a NUL byte, no permission
        reason = getattr(error, "strerror", None) or str(error)
        raise ReportError(f"schema directory {directory} cannot be used: {reason}") from None
    if not directory.is_dir():
        raise ReportError(f"schema directory {directory} is not a directory; give a directory")


def upgrade(argv: Sequence[str]) -> int:
    """``diffcheck upgrade REPORT --out NEW``: rewrite a report in the current schema.

    The report must replay first (an edited one is never laundered into a new file); the
    new report holds the same config, records and exact outputs, and is created new.
    """
    from ..report.upgrade import upgrade_report

    parser = OneLineParser(prog="diffcheck upgrade", description=upgrade.__doc__)
    parser.add_argument("report", type=Path, help="a report of any readable schema version")
    parser.add_argument("--out", type=Path, required=True, help="the new report (must not exist)")
    options = parser.parse_args(argv)
    document = upgrade_report(options.report, options.out)
    print(
        f"{options.out}: schema v{document.schema_version}, replays: {document.result.status if document.result else 'incomplete'}"
    )
    return 0
