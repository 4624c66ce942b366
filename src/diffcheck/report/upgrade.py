"""Rewriting a report in the current schema version, only once it replays.

Only how outputs are stored changes between v1 and v2, so an upgrade re-encodes the two
outputs and keeps every other field as it was. v3 adds ``computed_by``, which nothing can
recover after the fact: an upgraded report has ``computed_by: null`` (not recorded). It refuses a report that does not replay
(an edited report is never laundered into a new, clean-looking file) and one that is
incomplete, and it writes the new report with the create-new writer.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ReportError
from .arrays import decode_output, encode_output
from .models import SCHEMA_VERSION, CheckResult, ReportDocument, ReportDocumentV3
from .replay import load_report, replay
from .writer import ReportWriter

__all__ = ["upgrade_document", "upgrade_report"]


def _upgraded_result(result: CheckResult) -> dict[str, object]:
    data = result.model_dump() | {"schema_version": SCHEMA_VERSION}
    for name in ("reference", "actual"):
        record = getattr(result, name)
        if record is not None:
            values = decode_output(record, f"result.{name}")
            data[name] = encode_output(values).model_dump()
    return data


def upgrade_document(document: ReportDocument) -> ReportDocumentV3:
    """``document`` in the current schema version, after checking that it replays.

    The library that computed each side was not recorded before v3: ``computed_by`` is
    null, and the upgraded report says no more than the original did.

    Raises
    ------
    ReportError
        When the report is incomplete or does not replay (naming the first disagreement).
    """
    outcome = replay(document)
    if not outcome.agrees:
        raise ReportError(f"report does not replay, not upgraded: {outcome.disagreements[0]}")
    assert document.result is not None  # replay refuses an incomplete record
    upgraded = ReportDocumentV3.model_validate(
        document.model_dump()
        | {
            "schema_version": SCHEMA_VERSION,
            "result": _upgraded_result(document.result),
            "computed_by": None,
        }
    )
    again = replay(upgraded)
    if not again.agrees:  # the outputs must survive the re-encoding bit for bit
        raise ReportError(f"upgraded report does not replay: {again.disagreements[0]}")
    return upgraded


def upgrade_report(source: Path, target: Path) -> ReportDocumentV3:
    """Read ``source``, upgrade it, and write it to ``target`` (created new)."""
    upgraded = upgrade_document(load_report(source))
    ReportWriter(target).write(upgraded)
    return upgraded
