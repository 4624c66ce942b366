"""Rewriting a report in the current schema version, only once it replays.

Only how outputs are stored changes between v1 and v2, so an upgrade re-encodes the two
outputs and keeps every other field as it was. v3 adds ``computed_by``, which nothing can
recover after the fact: a report upgraded from v1 or v2 has ``computed_by: null`` (not
recorded). v4 adds the precision floor, which is derived from the config and the stored
bits: an upgrade measures it, and judges the stored outputs by it, so a pass that was a
TF32 computation under an f32 check is written as the failure it is (the status and reason
are the current rules' verdict on the same bits). It refuses a report that does not replay
(an edited report is never laundered into a new, clean-looking file) and one that is
incomplete, and it writes the new report with the create-new writer.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ReportError
from ..floor import Floor
from .arrays import decode_output, encode_output
from .floor_record import FloorRecord
from .models import SCHEMA_VERSION, CheckResult, ComputedBy, ReportDocument, ReportDocumentV4
from .replay import load_report, rejudge, replay
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


def _dumped(record: ComputedBy | None) -> dict[str, object] | None:
    return None if record is None else record.model_dump()


def upgrade_document(document: ReportDocument) -> ReportDocumentV4:
    """``document`` in the current schema version, after checking that it replays.

    The library that computed each side was not recorded before v3: ``computed_by`` is
    null, and the upgraded report says no more than the original did. The precision floor
    is measured, and the status and reason are the current verdict on the stored bits.

    Raises
    ------
    ReportError
        When the report is incomplete or does not replay (naming the first disagreement).
    """
    outcome = replay(document)
    if not outcome.agrees:
        raise ReportError(f"report does not replay, not upgraded: {outcome.disagreements[0]}")
    assert document.result is not None  # replay refuses an incomplete record
    result = _upgraded_result(document.result)
    verdict = rejudge(document)
    if verdict is not None:
        floor = verdict.floor if isinstance(verdict.floor, Floor) else None
        record = FloorRecord.of(floor)
        result |= {
            "status": verdict.status,
            "reason": verdict.reason,
            "floor": None if record is None else record.model_dump(),
        }
    upgraded = ReportDocumentV4.model_validate(
        document.model_dump()
        | {
            "schema_version": SCHEMA_VERSION,
            "result": result,
            # A v3 probe has no exp or matmul probes: they read as not probed (None).
            "computed_by": _dumped(getattr(document, "computed_by", None)),
        }
    )
    again = replay(upgraded)
    if not again.agrees:  # the outputs must survive the re-encoding bit for bit
        raise ReportError(f"upgraded report does not replay: {again.disagreements[0]}")
    return upgraded


def upgrade_report(source: Path, target: Path) -> ReportDocumentV4:
    """Read ``source``, upgrade it, and write it to ``target`` (created new)."""
    upgraded = upgrade_document(load_report(source))
    ReportWriter(target).write(upgraded)
    return upgraded
