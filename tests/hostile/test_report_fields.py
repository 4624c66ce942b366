"""Issue 34 L2: timestamps, the elapsed time and the config's fields are checked as read.

Reports with ``started_at="===="``, ``finished_at`` before ``started_at``, an elapsed time
of -5, NaN or 1e300, or a config missing fields (which the model silently defaulted)
replayed as agreeing. Every reader (replay, show, upgrade, resume) now refuses them in one
line; the schema is unchanged.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.errors import ReportError
from diffcheck.report.fields import START_SLACK
from diffcheck.report.read import parse_report

from ._harness import assert_refused, cli
from ._hostile import HOSTILE_TEXT


def _edited(report_json: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**report_json, **fields}


EDITS: dict[str, Any] = {
    "started not a time": {"started_at": "===="},
    "finished not a time": {"finished_at": "yesterday"},
    "started without a zone": {"started_at": "2026-01-01T00:00:00"},
    "started in another zone": {"started_at": "2026-01-01T00:00:00+05:00"},
    "finished before started": {"finished_at": "1999-01-01T00:00:00+00:00"},
    "elapsed negative": {"execution_elapsed_ms": -5.0},
    "elapsed NaN": {"execution_elapsed_ms": "NaN"},
    "elapsed infinite": {"execution_elapsed_ms": "Infinity"},
    "elapsed 1e300": {"execution_elapsed_ms": 1e300},
}


@pytest.mark.parametrize("command", ["replay", "show", "upgrade"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_a_time_no_run_writes_is_refused_in_one_line(
    tmp_path: Path, report_json: dict[str, Any], edit: str, command: str
) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_edited(report_json, **EDITS[edit])))
    new = tmp_path / "new.json"
    argv = [command, str(path)] + (["--out", str(new)] if command == "upgrade" else [])
    code, _, err = cli(argv)
    assert_refused(code, err)
    assert "started" in err or "finished" in err or "elapsed" in err
    assert not new.exists()


@pytest.mark.parametrize("field", ["m", "n", "k", "precision", "seed", "max_nmse"])
def test_a_config_missing_a_field_is_refused_not_defaulted(
    tmp_path: Path, report_json: dict[str, Any], field: str
) -> None:
    del report_json["config"][field]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report_json))
    code, _, err = cli(["replay", str(path)])
    assert_refused(code, err)
    assert field in err


def test_the_genuine_report_reads(report_texts: dict[str, bytes]) -> None:
    for name, text in report_texts.items():
        parse_report(text, name)


@settings(max_examples=300, deadline=None)
@given(
    started=st.one_of(HOSTILE_TEXT, st.datetimes().map(lambda d: d.isoformat())),
    elapsed=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
)
def test_whatever_times_are_read_keep_the_rules(
    report_texts: dict[str, bytes], started: str, elapsed: float | None
) -> None:
    from datetime import datetime, timedelta

    document = json.loads(report_texts["gemm"])
    document["started_at"] = started
    document["execution_elapsed_ms"] = elapsed
    try:
        report = parse_report(json.dumps(document).encode(), "r")
    except ReportError as error:
        refused = str(error)
    else:
        refused = ""
    if refused:
        assert "\n" not in refused
        return
    begun = datetime.fromisoformat(report.started_at)
    assert begun.utcoffset() == timedelta(0)
    assert report.finished_at is not None
    ended = datetime.fromisoformat(report.finished_at)
    assert ended >= begun
    if elapsed is not None:
        assert math.isfinite(elapsed)
        assert 0 <= elapsed <= (ended - begun + START_SLACK) / timedelta(milliseconds=1)
