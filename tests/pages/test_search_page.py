"""The API search's page: a summary first, then new findings before the known ones.

Read as text here (no browser); test_browser.py opens the page of a real run in Chromium.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from diffcheck.search.findings import (
    Counts,
    DeclaredDivergence,
    FindingEntry,
    FindingsDocument,
    FunctionRun,
    Isolation,
)
from diffcheck.search.page import render_page

DECLARED = DeclaredDivergence(
    function="multiply", kind="signed-zero", condition="zeros", reason="no sign", upstream="u"
)


def _entry(function: str, kind: str, known: bool) -> FindingEntry:
    return FindingEntry(
        function=function,
        kind=kind,
        dtype="float32",
        dtypes=["float32"],
        blame="candidate",
        blame_evidence="oracle",
        blame_why="why",
        reason="reason",
        bound="bound",
        bundle=f"bundles/{function}-{kind}.json",
        example="x",
        known=DECLARED if known else None,
    )


def _document(entries: list[FindingEntry], **changes: Any) -> FindingsDocument:
    identity = {"library": "lib", "version": "1.0", "device": "cpu"}
    functions = sorted({e.function for e in entries} | {"exp"})
    runs = [
        FunctionRun(
            function=name,
            examples=10,
            shrink_runs=2,
            findings=sum(e.function == name for e in entries),
            seconds=0.1,
            stopped_by_time_budget=False,
            coverage={"ordinary": 5, "subnormal": 1, "zero": 2, "inf": 1, "nan": 1},
        )
        for name in functions
    ]
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
    values: dict[str, Any] = {
        "reference": {"backend": "numpy", **identity},
        "candidate": {"backend": "cand:cpu", **identity},
        "seed": 11,
        "self_test": False,
        "examples_per_function": 10,
        "time_budget_s": None,
        "isolation": Isolation(mode="worker", call_timeout_s=30.0, workers_started=2),
        "complete": True,
        "resumed_functions": 0,
        "time_budget_cuts": [],
        "dtypes": ["float32"],
        "dtypes_not_shared": [],
        "functions_tried": runs,
        "skipped": [],
        "findings": entries,
        "counts": Counts(
            findings=len(entries),
            known=sum(e.known is not None for e in entries),
            by_kind=kinds,
            by_blame={"candidate": len(entries)},
        ),
        "known": [DECLARED] if any(e.known for e in entries) else [],
        "no_longer_reproduces": [],
        "started": "2026-01-01T00:00:00+00:00",
        "duration_s": 3.0,
    }
    values.update(changes)
    return FindingsDocument(**values)


def _page(entries: list[FindingEntry], **changes: Any) -> str:
    fragments = [f"<div class='finding'>F:{e.function}:{e.kind}</div>" for e in entries]
    return render_page(_document(entries, **changes), fragments)


def test_the_summary_comes_first_and_new_findings_before_known_ones() -> None:
    # Known first in the document, alphabetically first too: the page still leads with new.
    entries = [
        _entry("add", "signed-zero", known=True),
        _entry("multiply", "signed-zero", known=True),
        _entry("exp", "crash", known=False),
        _entry("log1p", "nan", known=False),
        _entry("sin", "hang", known=False),
    ]
    page = _page(entries)
    summary, new, known = (page.index(mark) for mark in ("id='summary'", "id='new'", "id='known'"))
    first_finding = page.index("F:")
    assert summary < new < known
    assert summary < first_finding
    assert page.index("<h1>") < summary < page.index("<h2")  # nothing but the title above it
    for entry in entries:
        where = page.index(f"F:{entry.function}:{entry.kind}")
        assert (known < where) if entry.known else (new < where < known)
    top = page[summary:new]
    assert "3 new finding" in top
    assert "3 new</a> (not declared)" in top
    assert "2 known</a>" in top
    assert "1 crash, 1 hang" in top
    assert "seed</th><td>11<" in top
    assert "10 per function (50 drawn, 10 shrink runs)" in top
    assert "<b>cand:cpu</b>" in top
    assert "<b>numpy</b>" in top
    assert "ordinary 25" in top
    assert "class='verdict bad'" in top


@pytest.mark.parametrize(
    ("entries", "tone", "headline"),
    [
        ([], "ok", "No findings"),
        ([_entry("multiply", "signed-zero", known=True)], "partial", "No new findings"),
        ([_entry("exp", "nan", known=False)], "bad", "1 new finding: no declared"),
    ],
)
def test_the_verdict_says_whether_anything_new_was_found(
    entries: list[FindingEntry], tone: str, headline: str
) -> None:
    page = _page(entries)
    verdict = re.search(r"<div class='verdict (\w+)'>([^<]*)</div>", page)
    assert verdict is not None
    assert verdict.groups()[0] == tone
    assert verdict.groups()[1].startswith(headline)


def test_an_interrupted_run_is_never_green_and_a_hole_in_coverage_is_named() -> None:
    doc = _document([])
    holes = [run.model_copy(update={"coverage": {"ordinary": 3}}) for run in doc.functions_tried]
    page = _page([], complete=False, functions_tried=holes)
    assert "class='verdict partial'>No findings (interrupted" in page
    assert "never drawn: subnormal, zero, inf, nan" in page
    assert "never drawn" not in _page([])
