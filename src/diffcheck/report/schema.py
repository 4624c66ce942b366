"""The report's JSON Schema, generated from the models and checked in under reports/schema/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .models import SCHEMA_VERSION, ReportDocument

__all__ = ["report_schema", "schema_text", "write_schema"]


def report_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`ReportDocument` (serialization mode)."""
    schema = ReportDocument.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://diffcheck.dev/schema/report/v{SCHEMA_VERSION}.json"
    return schema


def schema_text() -> str:
    """The schema as the checked-in file holds it."""
    return json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"


def write_schema(directory: Path) -> Path:
    """Write ``v<N>.json`` into ``directory`` and return its path."""
    path = Path(directory) / f"v{SCHEMA_VERSION}.json"
    path.write_text(schema_text())
    return path
