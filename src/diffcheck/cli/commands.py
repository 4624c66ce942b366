"""The subcommands other than ``sweep``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ._parser import OneLineParser

__all__ = ["backends", "ops", "replay", "run", "schema"]


def run(argv: Sequence[str]) -> int:
    """``diffcheck run``: one required check, one new report, exit 0 only on a pass."""
    from ..runner import run_check
    from .run_args import USAGE, parse_run_args

    args = parse_run_args(argv)
    if args is None:
        print(USAGE)
        return 0
    document = run_check(args.check, args.report, max_memory=args.max_memory)
    result = document.result
    assert result is not None
    if result.status == "passed":
        print(f"Numerical check completed; report: {args.report}")
        return 0
    reason = result.reason or f"required backend result: {result.status}"
    print(f"diffcheck: {reason}; report: {args.report}", file=sys.stderr)
    return 1


def replay(argv: Sequence[str]) -> int:
    """``diffcheck replay REPORT``: does the stored verdict follow from the stored bits?"""
    from ..report.replay import load_report
    from ..report.replay import replay as replay_document

    parser = OneLineParser(prog="diffcheck replay", description=replay.__doc__)
    parser.add_argument("report", type=Path, nargs="+", help="report file(s) to re-check")
    parser.add_argument(
        "--require-pass", action="store_true", help="also exit 1 unless every report passed"
    )
    options = parser.parse_args(argv)
    exit_code = 0
    for path in options.report:
        outcome = replay_document(load_report(path))
        if not outcome.agrees:
            print(f"{path}: DISAGREES: {'; '.join(outcome.disagreements)}", file=sys.stderr)
            exit_code = 1
            continue
        print(f"{path}: agrees: {outcome.status}")
        if options.require_pass and outcome.status != "passed":
            exit_code = 1
    return exit_code


def backends(argv: Sequence[str]) -> int:
    """``diffcheck backends``: every adapter and device, probed, with the reason when unavailable."""
    from ..adapters import adapter_entry_points, resolve
    from ..adapters.array_api import ARRAY_API_LIBRARIES
    from ..errors import UnknownBackendError

    parser = OneLineParser(prog="diffcheck backends", description=backends.__doc__)
    parser.add_argument("--all", action="store_true", help="also probe array-api-compat libraries")
    options = parser.parse_args(argv)
    rows: list[tuple[str, str, str]] = []
    names: list[str] = []
    for name, entry in sorted(adapter_entry_points().items()):
        try:
            adapter = resolve(name)
        except UnknownBackendError as error:
            rows.append((name, "error", str(error)))
            continue
        names += [name] + [f"{name}:{device}" for device in adapter.devices]
        del entry
    if options.all:
        names += sorted(set(ARRAY_API_LIBRARIES) - set(adapter_entry_points()))
    for name in names:
        probe = resolve(name).probe()
        rows.append((name, probe.status, probe.reason or probe.detail))
    width = max(len(row[0]) for row in rows)
    print(f"{'backend'.ljust(width)}  {'status'.ljust(11)}  detail / reason")
    for name, status, text in rows:
        print(f"{name.ljust(width)}  {status.ljust(11)}  {text}")
    return 0


def ops(argv: Sequence[str]) -> int:
    """``diffcheck ops``: operators, their options and defaults."""
    from ..ops import OPS

    OneLineParser(prog="diffcheck ops", description=ops.__doc__).parse_args(argv)
    for op in OPS.values():
        options = " ".join(
            f"--{name} {field.default}" for name, field in op.params_model.model_fields.items()
        )
        alias = f" (alias {', '.join(op.aliases)})" if op.aliases else ""
        print(f"{op.name}{alias}: {options}")
        print(f"    {op.execution_path}")
    return 0


def schema(argv: Sequence[str]) -> int:
    """``diffcheck schema``: print the report JSON Schema (or write it with --write DIR)."""
    from ..report.schema import schema_text, write_schema

    parser = OneLineParser(prog="diffcheck schema", description=schema.__doc__)
    parser.add_argument("--write", type=Path, metavar="DIR", help="write v<N>.json into DIR")
    options = parser.parse_args(argv)
    if options.write:
        print(write_schema(options.write))
    else:
        sys.stdout.write(schema_text())
    return 0
