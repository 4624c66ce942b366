"""Report documents: models (schema v3, v2 and v1 still read), exact output arrays, the hostile-input
reader, the create-new writer, the schema export, replay and upgrade."""

from __future__ import annotations

from .arrays import decode_output, encode_output
from .models import (
    SCHEMA_VERSION,
    CheckResult,
    CheckResultV2,
    CheckResultV3,
    ComputedBy,
    MetricsRecord,
    OutputArray,
    OutputBits,
    PrecisionRecord,
    ReportDocument,
    ReportDocumentV2,
    ReportDocumentV3,
)
from .read import parse_report, read_report
from .replay import Replay, load_report, replay
from .writer import ReportWriter

__all__ = [
    "SCHEMA_VERSION",
    "CheckResult",
    "CheckResultV2",
    "CheckResultV3",
    "ComputedBy",
    "MetricsRecord",
    "OutputArray",
    "OutputBits",
    "PrecisionRecord",
    "Replay",
    "ReportDocument",
    "ReportDocumentV2",
    "ReportDocumentV3",
    "ReportWriter",
    "decode_output",
    "encode_output",
    "load_report",
    "parse_report",
    "read_report",
    "replay",
]
