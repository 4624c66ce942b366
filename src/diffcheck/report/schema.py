"""The report's JSON Schemas, generated from the models and checked in under reports/schema/.

One file per readable schema version (``v1.json``, ``v2.json``): a reader of old reports
keeps the schema they were written against.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ReportError
from ..files import write_replacing
from .models import MODELS, SCHEMA_VERSION

__all__ = ["report_schema", "schema_text", "write_schema"]


def report_schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The JSON Schema of the report model of ``version`` (serialization mode)."""
    schema = MODELS[version].model_json_schema(mode="serialization")
    for definition in [schema, *schema.get("$defs", {}).values()]:
        _require_written(definition)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://diffcheck.dev/schema/report/v{version}.json"
    return schema


#: Fields a writer leaves out when they are null (``exclude_if``); every other field is written.
_OMITTED_WHEN_NULL = frozenset({"submission_phases", "submission_metrics", "segments"})


def _require_written(definition: dict[str, Any]) -> None:
    # The writer writes every field, defaults included, so the schema requires them all;
    # pydantic's serialization schema leaves fields with defaults optional.
    properties = definition.get("properties")
    if properties:
        definition["required"] = [name for name in properties if name not in _OMITTED_WHEN_NULL]


def schema_text(version: int = SCHEMA_VERSION) -> str:
    """The schema of ``version`` as the checked-in file holds it."""
    return json.dumps(report_schema(version), indent=2, sort_keys=True) + "\n"


def write_schema(directory: Path) -> list[Path]:
    """Write ``v<N>.json`` of every readable version into ``directory``; return the paths.

    Each file is replaced atomically through a new temporary file, so a symbolic link at a
    schema path is replaced, never followed.

    Raises
    ------
    ReportError
        When ``directory`` is not an existing directory, or a file cannot be written.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ReportError(f"schema directory {directory} does not exist (create it first)")
    paths = []
    for version in MODELS:
        path = directory / f"v{version}.json"
        write_replacing(path, schema_text(version).encode())
        paths.append(path)
    return paths
