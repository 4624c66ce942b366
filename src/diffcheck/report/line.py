"""A report document in one line, for a REPL and a log: what ran, how it came out, where.

``diffcheck.run(...)`` returns a :class:`~diffcheck.report.models.ReportDocument`; pydantic's
own repr of one is every field, outputs included, over thousands of characters. The
document's ``repr`` and ``str`` are this line instead: ``gemm on torch:cpu at f32: passed;
nmse 1.23e-14 < tolerance 1e-06; 0.98x the f32 floor 1.25e-14; report runs/gemm.json``.
Figures are shown at three significant digits; the document keeps the exact ones.

Where the document was written or read is not part of it (two documents with the same
fields are equal wherever they are): it rides on a :class:`Where`, which every other
``Where`` equals.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from .._numbers import short_float

if TYPE_CHECKING:
    from .models import ReportDocument

__all__ = ["Where", "document_line", "remember_path"]

#: A reason longer than this is cut in the line (the document has it whole).
REASON_CHARS = 120


class Where:
    """Where a document was written or read, when known; equal to every other ``Where``
    (a location is not evidence, so it never makes two documents differ)."""

    __slots__ = ("path",)

    def __init__(self) -> None:
        self.path: str | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Where)

    def __hash__(self) -> int:
        return 0


def remember_path(document: ReportDocument, path: str | Path) -> ReportDocument:
    """Record that ``document`` was written to (or read from) ``path``; return it."""
    document._where.path = str(path)
    return document


def document_line(document: ReportDocument) -> str:
    """The document in one line: op, backend, precision, status, nmse, floor, report path."""
    # Every op's config model has these fields (the per-op model is not known statically).
    config = document.config
    result = document.result
    backend = result.backend if result is not None else getattr(config, "require_backend", "?")
    head = f"{getattr(config, 'op', '?')} on {backend} at {getattr(config, 'precision', '?')}"
    if result is None or not document.completed:
        parts = ["incomplete (the check did not finish)"]
    else:
        parts = [_status(document)]
        metrics, tolerance = result.metrics, result.tolerance
        if metrics is not None and tolerance is not None:
            kind = "absolute MSE" if metrics.uses_absolute_mse else "nmse"
            relation = "<" if metrics.nmse < tolerance else ">="
            parts.append(
                f"{kind} {short_float(metrics.nmse)} {relation} tolerance {short_float(tolerance)}"
            )
        elif result.reason:
            reason = " ".join(result.reason.split())
            if len(reason) > REASON_CHARS:
                reason = reason[: REASON_CHARS - 3] + "..."
            parts.append(reason)
        floor = getattr(result, "floor", None)
        if floor is not None:
            ratio = floor.candidate_nmse / floor.floor_nmse if floor.floor_nmse > 0 else math.inf
            parts.append(
                f"{short_float(ratio)}x the {floor.honest_twin} floor "
                f"{short_float(floor.floor_nmse)}"
            )
    path = document._where.path
    if path is not None:
        parts.append(f"report {path}")
    return f"{head}: {'; '.join(parts)}"


def _status(document: ReportDocument) -> str:
    """The status, and why a passed check is no pass (a self-test, one library)."""
    assert document.result is not None
    status = document.result.status
    if status == "passed" and not document:
        return "passed (a self-test or one library on both sides: not a pass)"
    return status
