"""``diffcheck replay``: re-check reports, sweep directories and finding bundles.

``--require-pass`` has one meaning for a report and for a sweep directory: every check
passed. A self-test, a pair of one library, a not_run and a failure with a known divergence
are not passes; ``--allow-known`` accepts the last, by the rule a sweep row is classified
with (:func:`diffcheck.sweep.known.known_failure`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ReportError
from ._parser import OneLineParser

__all__ = ["replay"]


def _is_directory(path: Path) -> bool:
    """A real directory (a sweep's), not a link; False for a name the system refuses (too
    long, say): reading it as a report then says why in one line."""
    try:
        return path.is_dir() and not path.is_symlink()
    except OSError:
        return False


def replay(argv: Sequence[str]) -> int:
    """``diffcheck replay REPORT``: recompute the reference from the config, re-derive the verdict."""
    from ..report.read import report_from
    from ..report.replay import load_document
    from ..report.replay import replay as replay_document
    from ..runner.budget import parse_size
    from ..search.bundle import is_bundle
    from ..search.replay import EPILOG, replay_bundle_command
    from ..text import one_line
    from .show_command import failure_where

    parser = OneLineParser(prog="diffcheck replay", description=replay.__doc__, epilog=EPILOG)
    parser.add_argument(
        "report",
        type=Path,
        nargs="+",
        help="report file(s) to re-check, or sweep directories (their summary.json and "
        "junit.xml are re-derived from the reports)",
    )
    parser.add_argument(
        "--require-pass",
        action="store_true",
        help="also exit 1 unless every check passed, in a report or a sweep directory alike "
        "(a self-test, one library on both sides, a not_run and a known divergence never pass)",
    )
    parser.add_argument(
        "--allow-known",
        action="store_true",
        help="with --require-pass: also accept a failure its candidate's adapter declares "
        "as a known divergence",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="also re-run the candidate; a stored output it does not reproduce bit for bit "
        "(or, where its adapter declares non-deterministic output, whose verdict it does not "
        "reproduce), or cannot re-run here, disagrees",
    )
    parser.add_argument(
        "--claims",
        action="store_true",
        help="print the values of the fields a report claims and replay cannot verify "
        "(by default only their names)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="bundles: run the calls in this process, not in a worker (faster; a crash or "
        "hang then ends the replay)",
    )
    parser.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="refuse a bundle whose replay is estimated to need more, and a report larger "
        "than a check within it writes (bytes, or 8G, 512MiB); default: half the memory "
        "available",
    )
    options = parser.parse_args(argv)
    max_memory = None if options.max_memory is None else parse_size(options.max_memory)
    exit_code = 0
    for path in options.report:
        if _is_directory(path):
            exit_code = max(
                exit_code, _replay_sweep(path, options.require_pass, options.allow_known)
            )
            continue
        try:
            # Read and decoded once; a finding bundle of `diffcheck fuzz --api` runs again.
            document, size = load_document(path, max_memory)
            if is_bundle(document):
                replayed = replay_bundle_command(
                    path, document, size, max_memory, isolate=not options.in_process
                )
                exit_code = max(exit_code, replayed)
                continue
            outcome = replay_document(report_from(document, str(path)), rerun=options.rerun)
        except ReportError as error:  # one line per unreadable report; the others still run
            print(one_line(f"diffcheck: {error}"), file=sys.stderr)
            exit_code = 1
            continue
        if not outcome.agrees:
            # Stored strings (segment names, reasons) come from the report: keep it one line.
            line = one_line(f"{path}: DISAGREES: {'; '.join(outcome.disagreements)}")
            print(line, file=sys.stderr)
            exit_code = 1
            continue
        marker = " (SELF-TEST: not a pass for the backend)" if outcome.self_test else ""
        if outcome.one_library and not outcome.self_test and outcome.status == "passed":
            marker = " (NOT INDEPENDENT: one library on both sides, not a pass for the backend)"
        print(one_line(f"{path}: agrees: {outcome.status}{marker}"))
        where = failure_where(outcome) if outcome.status == "failed" else None
        if where is not None:
            print(one_line(f"{path}: note: where: {where}"))
        for line in outcome.checked:
            print(one_line(f"{path}: checked: {line}"))
        if outcome.computed_by is not None:
            print(one_line(f"{path}: note: {outcome.computed_by}"))
        for note in outcome.notes:
            print(one_line(f"{path}: note: {note}"))
        if options.claims:
            claims = ", ".join(f"{name}={value!r}" for name, value in outcome.claims)
        else:  # names only: the values (platform, timings, versions) run to a screenful
            claims = f"{_claim_names(name for name, _ in outcome.claims)} (--claims: their values)"
        print(one_line(f"{path}: claimed, not verified: {claims}"))
        if options.require_pass and not _required_pass(outcome, options.allow_known):
            exit_code = 1
    return exit_code


def _claim_names(names: Iterable[str]) -> str:
    """``environment(platform, python), execution_path``: the names, grouped by their head."""
    groups: dict[str, list[str]] = {}
    for name in names:
        head, _, rest = name.partition(".")
        groups.setdefault(head, []).append(rest)
    return ", ".join(
        head if rest == [""] else f"{head}({', '.join(rest)})" for head, rest in groups.items()
    )


def _required_pass(outcome: Any, allow_known: bool) -> bool:
    """``--require-pass`` on one report: it passed, or (``--allow-known``) it agrees and
    failed with a divergence its candidate declares known, exactly as a sweep row counts."""
    if outcome.passed:
        return True
    if not allow_known or not outcome.agrees or outcome.self_test or outcome.one_library:
        return False
    from ..sweep.known import known_failure

    return known_failure(outcome.document)


def _replay_sweep(directory: Path, require_pass: bool, allow_known: bool = False) -> int:
    """Re-derive a sweep directory's summary and JUnit from its reports; print each difference."""
    from ..errors import DiffcheckError
    from ..sweep.audit import audit_sweep
    from ..text import one_line

    try:
        audit = audit_sweep(directory)
    except DiffcheckError as error:
        print(one_line(f"diffcheck: {error}"), file=sys.stderr)
        return 1
    for line in audit.disagreements:
        print(one_line(f"{directory}: DISAGREES: {line}"), file=sys.stderr)
    if not audit.agrees or audit.derived is None:
        return 1
    derived = audit.derived
    print(
        one_line(
            f"{directory}: agrees: {derived.counts.total} checks re-derived from their reports, "
            f"sweep exit status {derived.exit_status}"
        )
    )
    if not require_pass:
        return 0
    # One meaning with a report's: every check passed (a known divergence only when allowed).
    accepted = ("passed", "known") if allow_known else ("passed",)
    short = [row for row in derived.checks if row.outcome not in accepted]
    for row in short[:5]:
        print(one_line(f"{directory}: not a pass: {row.id}: {row.outcome}"), file=sys.stderr)
    return 1 if short or derived.exit_status != 0 or not derived.checks else 0
