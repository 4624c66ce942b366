"""``diffcheck show REPORT``: a report's verdict as the Python verdict renders it.

The verdict is re-derived from the stored bits (as ``diffcheck replay`` does), so what is
shown is what the outputs say, with every index also given in the op's output shape.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..text import rounded
from ._parser import OneLineParser

if TYPE_CHECKING:
    from ..report.models import ReportDocument
    from ..report.replay import Replay

__all__ = ["failure_where", "show"]


def _header(document: ReportDocument) -> str:
    result = document.result
    config = document.config.model_dump()
    backend = result.backend if result is not None else config.get("require_backend", "?")
    return (
        f"{config['op']} on {backend} at {config['precision']}, seed {config['seed']}, "
        f"output shape {tuple(document.output_shape)}"
    )


def failure_where(outcome: Replay) -> str | None:
    """The failure line of a replayed report: where its worst element is, or None."""
    from ..differ.render import failure_line

    if outcome.verdict is None:
        return None
    return failure_line(outcome.verdict, tuple(outcome.document.output_shape))


def show(argv: Sequence[str]) -> int:
    """``diffcheck show REPORT...``: render each report's verdict, re-derived from its stored bits.

    A finding bundle of ``diffcheck fuzz --api`` is shown as its finding: the pair, the
    reason, the input, the oracle's why and the call as one line of Python.

    Exit 0 when the stored verdict follows from the bits (whatever it is), 1 when the report
    cannot be read or disagrees with its bits (then ``diffcheck replay`` says how).
    """
    parser = OneLineParser(prog="diffcheck show", description=show.__doc__)
    parser.add_argument(
        "report",
        type=Path,
        nargs="+",
        help="reports written by diffcheck run or sweep, or finding bundles of fuzz --api",
    )
    options = parser.parse_args(argv)
    # Each in turn (a glob of a README example run twice names two), the worst status wins.
    return max(_show_one(path) for path in options.report)


def _show_one(path: Path) -> int:
    """Show one report or bundle; its exit status."""
    from ..differ.render import render_text
    from ..errors import ReportError
    from ..report.read import report_from
    from ..report.replay import load_document, replay
    from ..search.bundle import bundle_in, is_bundle
    from ..search.finding_text import bundle_lines
    from ..text import one_line

    try:
        raw, size = load_document(path)
        if is_bundle(raw):  # a finding of diffcheck fuzz --api: its call, sides and why
            for line in bundle_lines(bundle_in(raw, size, where=str(path)), str(path)):
                print(one_line(line))
            return 0
        outcome = replay(report_from(raw, str(path)))
    except ReportError as error:
        print(one_line(f"diffcheck: {error}"), file=sys.stderr)
        return 1
    document = outcome.document
    print(one_line(f"{path}: {_header(document)}"))
    if outcome.verdict is not None:
        print(render_text(outcome.verdict, tuple(document.output_shape)))
    elif document.result is not None:
        print(
            f"{document.result.status.upper()}  {one_line(rounded(document.result.reason or ''))}"
        )
    for note in outcome.notes:
        print(one_line(f"note: {note}"))
    if not outcome.agrees:
        print(
            one_line(
                f"diffcheck: {path} disagrees with its stored bits "
                f"({'; '.join(outcome.disagreements)}); run diffcheck replay for details"
            ),
            file=sys.stderr,
        )
        return 1
    return 0
