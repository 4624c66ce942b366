"""``index.html`` of an API search: a summary, then the new findings before the known ones,
each grouped by function with its inputs and both outputs.

Self-contained (inline CSS, no script, no network); every text from a backend, a reason or
an input is escaped, control characters made visible (:func:`~diffcheck.text.html_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

import numpy as np

from ..text import html_text as escape
from ..values.call import Outcome
from ..values.compare import host_value
from .coverage import CLASSES
from .findings import FindingEntry, FindingsDocument
from .output import describe_example
from .page_summary import SUMMARY_CSS, summary
from .runner import Finding

__all__ = ["fragment", "render_page"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#24292f}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 6px}
.meta{color:#57606a}.finding{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;
margin:8px 0}.finding.known{background:#fff8c5}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;
background:#cf222e}.badge.known{background:#bf8700}
pre{background:#f6f8fa;padding:6px;font-size:12px;margin:4px 0;white-space:pre-wrap;
overflow-wrap:anywhere}
h3{font-size:15px;margin:16px 0 4px}.finding div{overflow-wrap:anywhere}
table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #d0d7de;
padding:3px 8px;text-align:left}
"""


def _own_examples(finding: Finding) -> str:
    """Each joined dtype's own minimal example (the one above may pass in it)."""
    return "".join(
        f"<div>minimal inputs in {escape(dtype)}</div><pre>{escape(describe_example(example))}</pre>"
        for dtype, example in finding.own_examples
    )


def _output(outcome: Outcome) -> str:
    if outcome.missing is not None:
        return f"missing: {outcome.missing}"
    if outcome.raised is not None:
        return f"raised: {outcome.raised}"
    value = outcome.value
    tagged = isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)
    items: Any = value if isinstance(value, tuple) and not tagged else (value,)
    lines = []
    for item in items:
        array, dtype = host_value(item)
        text = np.array2string(np.asarray(array), threshold=64, floatmode="unique")
        lines.append(f"{dtype}{list(array.shape)} {text}")
    return "\n".join(lines)


def fragment(entry: FindingEntry, finding: Finding) -> str:
    """One finding's block (kept in the journal, so a resumed run's page has every one)."""
    known = entry.known
    badge = (
        f'<span class="badge known">known</span> {escape(known.reason)} '
        f"(upstream: {escape(known.upstream)})"
        if known
        else '<span class="badge">finding</span>'
    )
    return (
        f'<div class="finding{" known" if known else ""}">'
        f"<b>{escape(entry.kind)}</b> on <code>{escape(', '.join(entry.dtypes))}</code> {badge}"
        f"<div>blame: <b>{escape(entry.blame)}</b> ({escape(entry.blame_evidence)}): "
        f"{escape(entry.blame_why)}</div>"
        f"<div>{escape(entry.reason)}</div>"
        f"<div class='meta'>bound: {escape(entry.bound)}; bundle: "
        f"<a href='{escape(entry.bundle)}'>{escape(entry.bundle)}</a></div>"
        f"<div>minimal inputs</div><pre>{escape(describe_example(finding.example))}</pre>"
        f"{_own_examples(finding)}"
        f"<div>reference output</div><pre>{escape(_output(finding.reference))}</pre>"
        f"<div>candidate output</div><pre>{escape(_output(finding.candidate))}</pre></div>"
    )


def _coverage(doc: FindingsDocument) -> str:
    classes = list(CLASSES)
    rows = "".join(
        f"<tr><td>{escape(r.function)}</td><td>{r.examples}</td>"
        + "".join(f"<td>{r.coverage.get(c, 0)}</td>" for c in classes)
        + f"<td>{escape(r.cut or '')}</td></tr>"
        for r in doc.functions_tried
    )
    heads = "".join(f"<th>{c}</th>" for c in classes)
    return (
        "<h2 id='coverage'>Coverage: distinct input values drawn per function</h2>"
        f"<table><tr><th>function</th><th>examples</th>{heads}<th>time budget cut</th></tr>"
        f"{rows}</table>"
    )


def _findings(
    pairs: Sequence[tuple[FindingEntry, str]], section: str, title: str, empty: str
) -> str:
    """One section of findings, grouped by function (in the standard's order of the run)."""
    body = [f"<h2 id='{section}'>{title} ({len(pairs)})</h2>"]
    ordered = sorted(pairs, key=lambda p: p[0].function)
    for function, group in groupby(ordered, key=lambda p: p[0].function):
        items = list(group)
        body.append(f"<h3 id='{section}-{escape(function)}'>{escape(function)} ({len(items)})</h3>")
        body.extend(text for _, text in items)
    return "".join(body) if pairs else f"{body[0]}<p>{empty}</p>"


def render_page(document: FindingsDocument, fragments: Sequence[str]) -> str:
    """The whole page as text; ``fragments`` are :func:`fragment`'s, one per finding.

    The summary comes first, then the new findings (no declared divergence explains them:
    what a reader came for), then the known ones, then what was not seen, covered or
    skipped.
    """
    doc = document
    head = (
        f"<h1>API search: {escape(doc.candidate.backend)} against "
        f"{escape(doc.reference.backend)}</h1>{summary(doc)}"
    )
    pairs = list(zip(doc.findings, fragments, strict=True))
    new = _findings(
        [p for p in pairs if p[0].known is None],
        "new",
        "New findings: no declared divergence explains them",
        "None: every finding is a declared known divergence."
        if pairs
        else "None: the search found no divergence.",
    )
    known = _findings(
        [p for p in pairs if p[0].known is not None],
        "known",
        "Known findings: declared divergences of the candidate's adapter",
        "None.",
    )
    missed = "".join(
        f"<tr><td>{escape(d.function)}</td><td>{escape(d.kind)}</td>"
        f"<td>{escape(d.condition)}</td><td>{escape(d.reason)}</td></tr>"
        for d in doc.no_longer_reproduces
    )
    skipped = "".join(
        f"<tr><td>{escape(s.function)}</td><td>{escape(s.reason)}</td></tr>" for s in doc.skipped
    )
    tail = (
        "<h2 id='not-seen'>Declared known divergences not seen</h2>"
        + (
            f"<table><tr><th>function</th><th>kind</th><th>condition</th><th>reason</th></tr>"
            f"{missed}</table>"
            if missed
            else "<p>none</p>"
        )
        + _coverage(doc)
        + "<h2 id='skipped'>Skipped functions</h2>"
        + (
            f"<table><tr><th>function</th><th>reason</th></tr>{skipped}</table>"
            if skipped
            else "<p>none</p>"
        )
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>diffcheck API search</title><style>{_CSS}{SUMMARY_CSS}</style></head><body>"
        f"{head}{new}{known}{tail}</body></html>\n"
    )
