"""``diffcheck show REPORT``: a report's verdict as the Python verdict renders it.

The verdict is re-derived from the stored bits (as ``diffcheck replay`` does), so what is
shown is what the outputs say, with every index also given in the op's output shape.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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
    """``diffcheck show REPORT``: render a report's verdict, re-derived from its stored bits.

    Exit 0 when the stored verdict follows from the bits (whatever it is), 1 when the report
    cannot be read or disagrees with its bits (then ``diffcheck replay`` says how).
    """
    from ..differ.render import render_text
    from ..errors import ReportError
    from ..report.read import report_from
    from ..report.replay import load_document, replay
    from ..text import one_line

    parser = OneLineParser(prog="diffcheck show", description=show.__doc__)
    parser.add_argument("report", type=Path, help="a report written by diffcheck run or sweep")
    options = parser.parse_args(argv)
    try:
        raw, _size = load_document(options.report)
        outcome = replay(report_from(raw, str(options.report)))
    except ReportError as error:
        print(one_line(f"diffcheck: {error}"), file=sys.stderr)
        return 1
    document = outcome.document
    print(one_line(f"{options.report}: {_header(document)}"))
    if outcome.verdict is not None:
        print(render_text(outcome.verdict, tuple(document.output_shape)))
    elif document.result is not None:
        print(f"{document.result.status.upper()}  {one_line(document.result.reason or '')}")
    for note in outcome.notes:
        print(one_line(f"note: {note}"))
    if not outcome.agrees:
        print(
            one_line(
                f"diffcheck: {options.report} disagrees with its stored bits "
                f"({'; '.join(outcome.disagreements)}); run diffcheck replay for details"
            ),
            file=sys.stderr,
        )
        return 1
    return 0
