"""What the reader checks in a report's names, timestamps and config besides its schema.

The schema types these fields as text and numbers; a report a run wrote also keeps rules the
types do not say, and an edited one breaks them. :func:`check_fields` refuses, in one line,
before replay builds anything:

- a backend name (``config.require_backend``, ``reference_backend``, ``result.backend``)
  that is no name (:func:`diffcheck.text.check_name`): names are printed and become folders;
- a ``config`` that leaves out a field of its op's config model: the model's defaults are
  for building a check, and a report read with a defaulted shape describes another check;
- timestamps that are not ISO 8601 in UTC (as the runner writes them), a ``finished_at``
  before ``started_at``, an ``execution_elapsed_ms`` that is not finite, is negative, or
  exceeds the stamps' span by more than :data:`START_SLACK` (a sweep settles a report with
  its worker's whole wall time, interpreter start included, which the check's stamps do not
  span: seconds, never a day).
  Whether a report is complete is replay's to judge (it disagrees with a result that an
  incomplete record carries).

These fields are claimed (provenance, never evidence): the rules make a forged one refused
rather than shown, and no verdict follows from them.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from ..errors import ReportError
from ..text import check_name, one_line
from .models import ReportDocument

__all__ = ["START_SLACK", "check_fields"]

#: How far a report's elapsed time may exceed the span of its stamps: the worker's start
#: before the check's ``started_at`` (seconds; a day is past any start).
START_SLACK = timedelta(days=1)

#: The longest timestamp text (``2026-12-07T02:25:00.123456+00:00`` is 32 characters).
_MAX_STAMP_CHARS = 40


def check_fields(document: ReportDocument, source: str) -> None:
    """Refuse a report whose names, config or timestamps no run writes (one ReportError line)."""
    _check_names(document, source)
    _check_config(document, source)
    _check_times(document, source)


def _check_names(document: ReportDocument, source: str) -> None:
    config: Any = document.config
    names = {
        "config.require_backend": config.require_backend,
        "reference_backend": document.reference_backend,
    }
    if document.result is not None:
        names["result.backend"] = document.result.backend
    for where, name in names.items():
        try:
            check_name("backend", name, backend=True)
        except ValueError as error:
            raise ReportError(
                f"report {source} does not name a backend at {where}: {error}"
            ) from None


def _check_config(document: ReportDocument, source: str) -> None:
    config = document.config
    missing = [name for name in type(config).model_fields if name not in config.model_fields_set]
    if missing:
        raise ReportError(
            f"report {source} has a config without {', '.join(missing[:8])}: every field of "
            f"the op's config is part of the check and is never defaulted; the file was edited"
        )


def _stamp(text: str | None, field: str, source: str) -> datetime | None:
    if text is None:
        return None
    try:
        if len(text) > _MAX_STAMP_CHARS:
            raise ValueError
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise ReportError(
            f"report {source} has {field} {one_line(repr(text[:60]))}: not an ISO 8601 time "
            "(such as 2026-01-31T12:00:00.000000+00:00)"
        ) from None
    if stamp.utcoffset() != timedelta(0):
        raise ReportError(
            f"report {source} has {field} {one_line(repr(text))} outside UTC; a run writes "
            "its times in UTC (+00:00)"
        )
    return stamp


def _check_times(document: ReportDocument, source: str) -> None:
    started = _stamp(document.started_at, "started_at", source)
    finished = _stamp(document.finished_at, "finished_at", source)
    elapsed = document.execution_elapsed_ms
    if elapsed is not None and (not math.isfinite(elapsed) or elapsed < 0):
        raise ReportError(
            f"report {source} has execution_elapsed_ms {elapsed!r}; a run's elapsed time is "
            "a finite number of milliseconds, 0 or more"
        )
    if started is None or finished is None:
        return
    if finished < started:
        raise ReportError(
            f"report {source} finished at {document.finished_at} before it started at "
            f"{document.started_at}"
        )
    if elapsed is not None and elapsed > (finished - started + START_SLACK) / timedelta(
        milliseconds=1
    ):
        raise ReportError(
            f"report {source} has execution_elapsed_ms {elapsed:g}, a day longer than the "
            f"{(finished - started).total_seconds():g} s between started_at and finished_at"
        )
