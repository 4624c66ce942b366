"""Report documents: models (schema v1), the create-new writer, the schema export, replay."""

from __future__ import annotations

from .models import (
    SCHEMA_VERSION,
    CheckResult,
    MetricsRecord,
    OutputBits,
    PrecisionRecord,
    ReportDocument,
)
from .replay import Replay, load_report, replay
from .writer import ReportWriter

__all__ = [
    "SCHEMA_VERSION",
    "CheckResult",
    "MetricsRecord",
    "OutputBits",
    "PrecisionRecord",
    "Replay",
    "ReportDocument",
    "ReportWriter",
    "load_report",
    "replay",
]
