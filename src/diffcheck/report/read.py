"""Reading a report file as hostile input: bounded, regular files only, one-line errors.

Every reader of reports (``diffcheck replay``, ``upgrade``, ``sweep --resume``, the sweep's
settling of worker records) goes through :func:`read_report`. It opens without blocking (a
FIFO cannot hang it), refuses anything but a regular file (``/dev/zero``, a directory, a
device), reads at most :data:`MAX_REPORT_BYTES`, and turns binary data, deep nesting, an
unknown schema version and every schema violation into one :class:`ReportError` line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ReportError
from ..files import MAX_REPORT_BYTES, read_regular
from ..text import one_line
from .models import MODELS, READABLE_VERSIONS, ReportDocument

__all__ = ["MAX_REPORT_BYTES", "load_json", "parse_report", "read_report", "report_from"]


def _schema_version(data: Any, source: str) -> int:
    if not isinstance(data, dict):
        raise ReportError(f"report {source} is not a JSON object")
    version = data.get("schema_version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        readable = " and ".join(str(v) for v in READABLE_VERSIONS)
        raise ReportError(
            f"report {source} has schema_version {version!r}; this diffcheck reads {readable}"
        )
    assert isinstance(version, int)
    return version


def load_json(data: bytes, source: str) -> Any:
    """The JSON value ``data`` holds (strict UTF-8); one ReportError line naming ``source``."""
    source = one_line(source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(
            f"report {source} is not UTF-8 text (byte {error.start} is {data[error.start]:#04x})"
        ) from None
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise ReportError(f"report {source} is nested too deeply to be a report") from None
    except json.JSONDecodeError as error:
        raise ReportError(f"report {source} is not JSON: {error}") from None
    except ValueError as error:  # e.g. an integer past Python's digit limit
        raise ReportError(
            f"report {source} is not a readable report: {one_line(str(error))}"
        ) from None
    return parsed


def report_from(parsed: Any, source: str) -> ReportDocument:
    """A decoded JSON value validated as the report of its schema version (one-line errors)."""
    source = one_line(source)
    version = _schema_version(parsed, source)
    try:
        # Strict: a JSON true is not the integer 1, nor "0.5" the float 0.5.
        return MODELS[version].model_validate(parsed, strict=True)
    except RecursionError:
        raise ReportError(f"report {source} is nested too deeply to be a report") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReportError(
            f"report {source} does not match schema v{version} at {one_line(where)}: "
            f"{one_line(first['msg'])}"
        ) from None


def parse_report(data: bytes, source: str) -> ReportDocument:
    """The report that ``data`` holds, validated against the model of its schema version.

    Raises
    ------
    ReportError
        One line saying what is wrong, naming ``source``.
    """
    return report_from(load_json(data, source), source)


def read_report(
    path: Path, *, follow_symlinks: bool = True, limit: int = MAX_REPORT_BYTES
) -> ReportDocument:
    """Read and validate the report at ``path`` (at most ``limit`` bytes, a regular file).

    Raises
    ------
    FileNotFoundError
        When nothing is at ``path`` (callers tell "missing" from "bad").
    ReportError
        One line for anything else that is not a readable, valid report.
    """
    return parse_report(read_regular(path, limit=limit, follow_symlinks=follow_symlinks), str(path))
