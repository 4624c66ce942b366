"""``index.html``: a self-contained page a person reads at a glance.

Inline CSS and inline SVG only: no script, no font, no network, so it opens from disk (and
from a CI artifact) with no server. It shows the verdict and why, per pair and op totals,
every check's NMSE against its tolerance on a log scale, a table of every check (with links
to the report files, relative so the directory can be moved) and per-phase bars for the
lifecycle op. A failure with a known divergence of its adapter has an amber ``known`` badge
with the declared reason and a link to the upstream reference (the only link that leaves the
page, and only when a person follows it); a pass that matches one is listed as not seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._numbers import short_float
from ..text import html_text as escape
from ..text import rounded
from .summary import RESUMED_RERUN, KnownDivergenceNote, SummaryRow, SweepSummary
from .svg import (
    STATUS_COLOURS,
    LogRange,
    floor_overview,
    nmse_strip,
    op_legend,
    op_marks,
    phase_bars,
    ratio_overview,
)
from .words import verdict_text, worst_case

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#24292f}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#57606a;margin:0 0 12px}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0}
.verdict.ok{background:#dafbe1;color:#116329}.verdict.bad{background:#ffebe9;color:#a40e26}
.verdict.partial{background:#fff8c5;color:#7d4e00}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px}
.passed{background:#1a7f37}.failed{background:#cf222e}.not_run{background:#8c959f}
.known{background:#bf8700}
.divergence{margin-top:4px;color:#7d4e00}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:middle}
th{background:#f6f8fa;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.pair{overflow-wrap:anywhere}td.op{overflow-wrap:break-word;min-width:60px}
tr.pair-head th{background:#eaeef2;font-size:13px;position:static;overflow-wrap:anywhere}
td.case{min-width:90px;max-width:190px}td.case code{overflow-wrap:anywhere}
td.worker{min-width:70px;max-width:150px;font-size:12px}
tr.status-failed td{background:#fff5f5}tr.status-not_run td{color:#57606a}
tr.status-known td{background:#fff8c5}
td.reason{min-width:180px;max-width:420px;font-size:12px;overflow-wrap:anywhere}
details summary{cursor:pointer}
.phases{display:flex;flex-wrap:wrap;gap:12px}.phases figure{margin:0}
.phases figcaption{font-size:12px;color:#57606a}
code{font-size:12px}
.scroll{overflow-x:auto}
.op-mark{white-space:nowrap;margin-right:10px}.op-mark svg{vertical-align:-2px}
"""


def _num(value: float | None) -> str:
    if value is None:
        return "&ndash;"
    return "0" if value == 0 else short_float(value)


def _reason(reason: str | None, *, fold: int = 140) -> str:
    """The reason with long decimals rounded; the exact one folded into a <details> (no
    script needed) when rounding or length hides something."""
    text = reason or ""
    short = rounded(text)
    if short == text and len(text) <= fold:
        return escape(text)
    head = escape(short) if len(short) <= fold else f"{escape(short[: fold - 20])}&hellip;"
    return f"<details><summary>{head}</summary>{escape(text)}</details>"


def _worker(row: SummaryRow) -> str:
    """How the worker ended. A worker that exited 0 ran the check to its end: for a failed
    check that reads "finished", so "exit 0" is never shown beside a failure."""
    text = row.worker
    if row.resumed and row.status == "passed" and text != RESUMED_RERUN:
        # A pass taken from a stored report whose candidate was not run again: its output
        # is the report's word (sweep --resume --rerun re-runs it).
        text = f"{text}: reused unverified (candidate not re-run)"
    if row.status != "passed" and text == "exit 0":
        text = "finished (the check itself failed)" if row.status == "failed" else "finished"
    wall = "" if row.worker_wall_s is None else f"<br>{row.worker_wall_s:.2f} s"
    return f"{escape(text)}{wall}"


def _badge(status: str) -> str:
    return f'<span class="badge {status}">{escape(status)}</span>'


def _upstream(text: str) -> str:
    """The upstream reference, as a link when it is a web address."""
    if text.startswith(("https://", "http://")):
        return f"<a href='{escape(text)}' rel='noreferrer'>{escape(text)}</a>"
    return escape(text)


def _divergence(row: SummaryRow) -> str:
    note = row.known_divergence
    if note is None:
        return ""
    lead = "known divergence" if row.status == "failed" else "known divergence not seen"
    return (
        f"<div class='divergence'><strong>{lead}:</strong> {escape(note.reason)} "
        f"&middot; upstream: {_upstream(note.upstream)}</div>"
    )


def _not_seen(rows: Sequence[SummaryRow]) -> str:
    unseen = [row for row in rows if row.divergence_not_seen]
    if not unseen:
        return ""
    notes: dict[KnownDivergenceNote, list[SummaryRow]] = {}
    for row in unseen:
        assert row.known_divergence is not None
        notes.setdefault(row.known_divergence, []).append(row)
    items = "".join(
        f"<li>{escape(note.reason)} (upstream: {_upstream(note.upstream)}): "
        + ", ".join(f"<a href='#{escape(r.id)}'>{escape(r.id)}</a>" for r in members)
        + "</li>"
        for note, members in notes.items()
    )
    return f"<p id='not-seen'>Known divergences not seen (these checks passed):</p><ul>{items}</ul>"


def _groups(summary: SweepSummary) -> str:
    lines = [
        "<table class='groups'><thead><tr><th>pair</th><th>op</th><th>passed</th><th>failed</th>"
        "<th>known</th><th>not_run</th><th>worst check (by nmse / tol)</th><th>its nmse</th>"
        "<th>its tolerance</th><th>nmse / tol</th></tr></thead><tbody>"
    ]
    for g in summary.groups:
        required = " <em>(required)</em>" if g.required else ""
        worst = (
            "status-failed"
            if g.failed
            else "status-known"
            if g.known
            else ("status-not_run" if not g.passed else "")
        )
        lines.append(
            f"<tr class='group {worst}'><td class='pair'>{escape(g.reference)} &rarr; {escape(g.candidate)}{required}</td>"
            f"<td class='op'>{escape(g.op)}</td><td class='num'>{g.passed}</td><td class='num'>{g.failed}</td>"
            f"<td class='num'>{g.known}</td><td class='num'>{g.not_run}</td>"
            f"<td class='case'>{escape(worst_case(summary, g))}</td><td class='num'>{_num(g.worst_nmse)}</td>"
            f"<td class='num'>{_num(g.worst_tolerance)}</td><td class='num'>{_num(g.worst_ratio)}</td></tr>"
        )
    lines.append("</tbody></table>")
    return "".join(lines)


#: Columns of the checks table; a pair's checks follow a header row spanning them all.
_CHECK_COLUMNS = 10


def _checks(
    rows: Sequence[SummaryRow], scale: LogRange, wheres: Mapping[str, str] | None = None
) -> str:
    """Every check, under a header row per pair (so no column repeats the pair's names and
    the table fits a 1280 px screen)."""
    lines = [
        "<table class='checks'><thead><tr><th>status</th><th>op</th><th>case</th>"
        "<th>nmse</th><th>tolerance</th><th>nmse / tol</th>"
        f"<th>nmse vs tolerance (log, 1e{scale.lo}&ndash;1e{scale.hi})</th><th>worker</th>"
        "<th>reason</th><th>report</th></tr></thead><tbody>"
    ]
    first_with: dict[str, SummaryRow] = {}
    pair = None
    for row in rows:
        if (row.reference, row.candidate) != pair:
            pair = (row.reference, row.candidate)
            lines.append(
                f"<tr class='pair-head'><th colspan='{_CHECK_COLUMNS}' class='pair'>"
                f"{escape(row.reference)} &rarr; {escape(row.candidate)}</th></tr>"
            )
        reason = f"{_reason(row.why)}{_divergence(row)}"
        if (
            wheres and row.id in wheres
        ):  # as diffcheck show says it: the worst element by [row, col]
            reason += f"<div class='where'>where: {escape(wheres[row.id])}</div>"
        if row.outcome == "not_run" and row.reason:
            first = first_with.setdefault(row.reason, row)
            if first.id != row.id:  # one not_run reason repeated on every check of a pair
                reason = (
                    f"same as <a href='#{escape(first.id)}' title='{escape(first.id)}'>"
                    f"{escape(first.op)} {escape(first.shape)}</a>"
                )
        lines.append(
            f"<tr class='check status-{row.outcome}' data-status='{row.outcome}' id='{escape(row.id)}'>"
            f"<td>{_badge(row.outcome)}</td>"
            f"<td class='op'>{escape(row.op)}</td>"
            f"<td class='case'><code>{escape(row.shape)}</code> {escape(row.precision)} "
            f"seed&nbsp;{row.seed}</td>"
            f"<td class='num'>{_num(row.nmse)}</td><td class='num'>{row.tolerance:g}</td>"
            f"<td class='num'>{_num(row.ratio)}</td><td>{nmse_strip(row, scale)}</td>"
            f"<td class='worker'>{_worker(row)}</td>"
            f"<td class='reason'>{reason}</td>"
            f"<td><a href='{escape(row.report)}'>json</a></td></tr>"
        )
    lines.append("</tbody></table>")
    return "".join(lines)


def _phases(rows: Sequence[SummaryRow]) -> str:
    lifecycle = [r for r in rows if r.segments]
    if not lifecycle:
        return "<p>No check with judged segments ran.</p>"
    scale = LogRange.covering(
        [s.nmse for r in lifecycle for s in r.segments] + [r.tolerance for r in lifecycle],
        lo=-16,
        hi=-4,
    )
    figures = [
        f"<figure>{phase_bars(row, scale)}<figcaption>{_badge(row.outcome)} "
        f"<a href='#{escape(row.id)}'>{escape(row.id)}</a></figcaption></figure>"
        for row in lifecycle
    ]
    return f"<div class='phases'>{''.join(figures)}</div>"


def render_html(summary: SweepSummary, wheres: Mapping[str, str] | None = None) -> str:
    """The whole page for ``summary`` as one HTML string; ``wheres`` says where each failed
    check (by id) is worst, as ``diffcheck show`` does (:func:`.where.failure_wheres`)."""
    rows = summary.checks
    counts = summary.counts
    plain, tone = verdict_text(summary)
    verdict = escape(plain)
    strip_scale = LogRange.covering(
        [r.nmse for r in rows] + [r.tolerance for r in rows], lo=-16, hi=-2
    )
    left_out = "".join(
        f"<li>{escape(p.reference)} &rarr; {escape(p.candidate)}: {escape(p.reason)}</li>"
        for p in summary.left_out
    )
    legend = " ".join(
        f"<span style='color:{colour}'>&#9679; {status}</span>"
        for status, colour in STATUS_COLOURS.items()
    )
    marks = op_marks(r.op for r in rows)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>diffcheck sweep: {escape(summary.matrix)}</title>
<style>{_CSS}</style></head>
<body>
<h1>diffcheck sweep</h1>
<p class="meta">matrix <code>{escape(summary.matrix)}</code> ({escape(summary.description)}) &middot;
{escape(summary.executor)} &middot; timeout {summary.timeout_s:g} s &middot; started {escape(summary.started_at)}
&middot; {summary.elapsed_s:.1f} s &middot; diffcheck {escape(summary.diffcheck_version)}</p>
<div class="verdict {tone}">{verdict}</div>
<p id="counts">{counts.total} checks: {_badge("passed")} {counts.passed}
&nbsp; {_badge("failed")} {counts.failed} &nbsp; {_badge("known")} {counts.known}
&nbsp; {_badge("not_run")} {counts.not_run}</p>
{_not_seen(rows)}
{f"<p>Pairs left out (--only-available):</p><ul>{left_out}</ul>" if left_out else ""}
<h2>Per pair and op</h2>
{_groups(summary)}
<h2>NMSE against tolerance, every check (log scale)</h2>
<p class="meta">Colour is the status: {legend} (known: a failure with a known divergence of its adapter).
Shape is the op: <span id="op-legend">{op_legend(marks)}</span></p>
<p class="meta">Hollow marks are exact matches (nmse 0); a cross at the top is a failure
with no measurement (crash, timeout); ticks below the axis are not_run. Hover a mark for its check.</p>
<div class="scroll">{ratio_overview(rows, marks)}</div>
<h2 id="floor">NMSE against the precision floor, every check (log scale)</h2>
<p class="meta">Each check's NMSE against the float64 truth in units of what an honest
implementation at its precision errs by (its floor); a check fails above the dashed line of
its precision (docs/precision-floor.md). Honest candidates sit near 1.</p>
<div class="scroll">{floor_overview(rows, marks)}</div>
<h2 id="checks">Checks</h2>
<div class="scroll">{_checks(rows, strip_scale, wheres or {})}</div>
<h2 id="phases">Segments: lifecycle phases, attention heads, fused outputs (per-segment nmse, log scale)</h2>
{_phases(rows)}
</body></html>
"""
