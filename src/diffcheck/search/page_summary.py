"""The summary at the top of an API search's page: what was searched and what it found.

One verdict line (new findings, that no declared divergence explains, are what a reader
came for), then one row each for the pair, the seed, the examples, the findings new and
known, crashes and hangs, coverage and the run itself, each linking to its section below.
"""

from __future__ import annotations

from collections import Counter

from ..text import html_text as escape
from .coverage import CLASSES
from .findings import FindingsDocument

__all__ = ["SUMMARY_CSS", "summary"]

SUMMARY_CSS = """
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0}
.verdict.ok{background:#dafbe1;color:#116329}.verdict.bad{background:#ffebe9;color:#a40e26}
.verdict.partial{background:#fff8c5;color:#7d4e00}
table.summary th{background:#f6f8fa;white-space:nowrap;vertical-align:top}
table.summary td{overflow-wrap:anywhere}
"""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _identity(doc: FindingsDocument) -> str:
    candidate, reference = doc.candidate, doc.reference
    where = f" on {candidate.device}" if candidate.device else ""
    return (
        f"<b>{escape(candidate.backend)}</b> ({escape(candidate.library)} "
        f"{escape(candidate.version)}{escape(where)}) against <b>{escape(reference.backend)}</b> "
        f"({escape(reference.library)} {escape(reference.version)})"
        + (
            " &middot; <b>self-test</b>: evidence about the search, not a backend"
            if doc.self_test
            else ""
        )
    )


def _verdict(new: int, known: int, complete: bool) -> tuple[str, str]:
    """The headline and its tone: red for new findings, amber when only known ones (or an
    interrupted run), green when nothing diverged."""
    tail = "" if complete else " (interrupted: --resume continues it)"
    if new:
        return (
            f"{_plural(new, 'new finding')}: no declared known divergence explains "
            f"{'it' if new == 1 else 'them'}" + (f"; {known} more known" if known else "") + tail,
            "bad",
        )
    if known:
        return f"No new findings: all {known} are declared known divergences{tail}", "partial"
    return f"No findings{tail}", "ok" if complete else "partial"


def _kinds(doc: FindingsDocument) -> str:
    by_kind = ", ".join(
        f"{count} {escape(kind)}" for kind, count in sorted(doc.counts.by_kind.items())
    )
    return f" &middot; by kind: {by_kind}" if by_kind else ""


def _crashes(doc: FindingsDocument) -> str:
    kinds = Counter(f.kind for f in doc.findings)
    iso = doc.isolation
    if iso.mode == "in-process":
        where = "calls ran in-process (no crash or hang protection)"
    else:
        where = (
            f"calls in a worker process ({iso.call_timeout_s:g} s per call, "
            f"{_plural(iso.workers_started, 'worker')} started)"
        )
    return f"{_plural(kinds['crash'], 'crash')}, {_plural(kinds['hang'], 'hang')} &middot; {where}"


def _coverage(doc: FindingsDocument) -> str:
    totals = {c: sum(r.coverage.get(c, 0) for r in doc.functions_tried) for c in CLASSES}
    drawn = ", ".join(f"{c} {n}" for c, n in totals.items())
    # A floating class no function drew is a hole a reader should see without the table.
    never = [
        c for c in ("subnormal", "zero", "inf", "nan") if doc.functions_tried and not totals[c]
    ]
    cuts = doc.time_budget_cuts
    return (
        f"distinct input values drawn, all functions: {drawn}"
        + (f" &middot; <b>never drawn: {', '.join(never)}</b>" if never else "")
        + (f" &middot; time budget cut {_plural(len(cuts), 'function')}" if cuts else "")
        + " (<a href='#coverage'>per function</a>)"
    )


def summary(doc: FindingsDocument) -> str:
    """The summary block: a verdict line and a table of what the search covered and found."""
    known = sum(1 for f in doc.findings if f.known is not None)
    new = len(doc.findings) - known
    headline, tone = _verdict(new, known, doc.complete)
    examples = sum(r.examples for r in doc.functions_tried)
    shrinks = sum(r.shrink_runs for r in doc.functions_tried)
    errors = [r.function for r in doc.functions_tried if r.error]
    rows = [
        ("pair", _identity(doc)),
        ("seed", str(doc.seed)),
        (
            "examples",
            f"{doc.examples_per_function} per function ({examples} drawn, {shrinks} shrink "
            f"runs) &middot; {_plural(len(doc.functions_tried), 'function')} searched, "
            f"<a href='#skipped'>{len(doc.skipped)} skipped</a>",
        ),
        (
            "findings",
            f"<a href='#new'>{new} new</a> (not declared) &middot; <a href='#known'>{known} "
            f"known</a> (declared by the adapter) &middot; <a href='#not-seen'>"
            f"{len(doc.no_longer_reproduces)} declared but not seen</a>{_kinds(doc)}",
        ),
        ("crashes, hangs", _crashes(doc)),
        ("coverage", _coverage(doc)),
        (
            "run",
            f"{doc.duration_s:.0f} s, started {escape(doc.started)}"
            + ("" if doc.complete else " &middot; <b>INTERRUPTED</b> (--resume continues it)")
            + (f" &middot; <b>search errors in: {escape(', '.join(errors))}</b>" if errors else ""),
        ),
    ]
    table = "".join(f"<tr><th>{name}</th><td>{text}</td></tr>" for name, text in rows)
    return (
        f"<section id='summary'><div class='verdict {tone}'>{headline}</div>"
        f"<table class='summary'>{table}</table></section>"
    )
