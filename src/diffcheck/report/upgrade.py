"""Rewriting a report in the current schema version, only once it replays.

Only how outputs are stored changes between v1 and v2, so an upgrade re-encodes the two
outputs and keeps every other field as it was. It refuses a report that does not replay
(an edited report is never laundered into a new, clean-looking file) and one that is
incomplete, and it writes the new report with the create-new writer.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ReportError
from .arrays import decode_output, encode_output
from .models import CheckResult, ReportDocument, ReportDocumentV2
from .replay import load_report, replay
from .writer import ReportWriter

__all__ = ["upgrade_document", "upgrade_report"]


def _upgraded_result(result: CheckResult) -> dict[str, object]:
    data = result.model_dump() | {"schema_version": 2}
    for name in ("reference", "actual"):
        record = getattr(result, name)
        if record is not None:
            values = decode_output(record, f"result.{name}")
            data[name] = encode_output(values).model_dump()
    return data


def upgrade_document(document: ReportDocument) -> ReportDocumentV2:
    """``document`` in schema v2, after checking that it replays.

    Raises
    ------
    ReportError
        When the report is incomplete or does not replay (naming the first disagreement).
    """
    outcome = replay(document)
    if not outcome.agrees:
        raise ReportError(f"report does not replay, not upgraded: {outcome.disagreements[0]}")
    assert document.result is not None  # replay refuses an incomplete record
    upgraded = ReportDocumentV2.model_validate(
        document.model_dump() | {"schema_version": 2, "result": _upgraded_result(document.result)}
    )
    again = replay(upgraded)
    if not again.agrees:  # the outputs must survive the re-encoding bit for bit
        raise ReportError(f"upgraded report does not replay: {again.disagreements[0]}")
    return upgraded


def upgrade_report(source: Path, target: Path) -> ReportDocumentV2:
    """Read ``source``, upgrade it, and write it to ``target`` (created new)."""
    upgraded = upgrade_document(load_report(source))
    ReportWriter(target).write(upgraded)
    return upgraded
