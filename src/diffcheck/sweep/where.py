"""Where each failed check of a sweep failed, for its page: the worst element by ``[row, col]``.

``summary.json`` holds a check's NMSE and reason but not where in the output it is worst;
``diffcheck show REPORT`` says so from the report's bits. The page says the same, re-derived
from each failed check's report (at most :data:`MAX_SHOWN` of them: a sweep where everything
fails is read for its first failures, not replayed whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..differ.render import failure_line
from ..errors import DiffcheckError
from .summary import SummaryRow

__all__ = ["MAX_SHOWN", "failure_wheres"]

#: Failed checks whose reports are replayed for the page.
MAX_SHOWN = 200


def failure_wheres(directory: Path, rows: Sequence[SummaryRow]) -> dict[str, str]:
    """Each failed (or known) check's id -> where its worst element is, when measured."""
    from ..report.read import report_from
    from ..report.replay import load_document, replay

    found: dict[str, str] = {}
    failed = [row for row in rows if row.status == "failed" and row.nmse is not None]
    for row in failed[:MAX_SHOWN]:
        path = directory / row.report
        try:
            document, _ = load_document(path)
            outcome = replay(report_from(document, str(path)))
        except (DiffcheckError, OSError):  # the page still shows the reason; only this is missing
            continue
        if outcome.verdict is not None:
            line = failure_line(outcome.verdict, tuple(outcome.document.output_shape))
            if line is not None:
                found[row.id] = line
    return found
