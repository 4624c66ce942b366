"""Readable renderings of a verdict: plain text for terminals and assertion messages, HTML
for notebooks.

Both lead with the answer (PASSED/FAILED, NMSE against the tolerance and how far from it),
then say where: the largest difference as a flat index into the output, and one row per
segment with its own NMSE, so the segment that failed is visible without reading the reason.
NMSE spans many decades, so the bars are logarithmic: :data:`DECADES` decades below the
tolerance fill the bar up to the tolerance mark, and anything at or past the mark is a failure.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .._numbers import short_float
from ..text import rounded, ulps

if TYPE_CHECKING:
    from .verdict import Around, Metrics, SegmentVerdict, Verdict

__all__ = [
    "DECADES",
    "TOLERANCE_MARK",
    "bar_fraction",
    "failure_line",
    "index_in",
    "render_html",
    "render_text",
]

#: Decades of NMSE below the tolerance that the bar spans (1e-8 x tolerance is empty).
DECADES: Final = 8
#: Decades past the tolerance the bar still shows before it is full.
_OVER: Final = 2
_TEXT_BAR: Final = 20
#: Partial cells, in eighths (index 0 unused: an empty eighth is a space).
_EIGHTHS: Final = " \u258f\u258e\u258d\u258c\u258b\u258a\u2589"
_PASS_COLOUR: Final = "#2e7d32"
_FAIL_COLOUR: Final = "#c62828"


def _g(value: float) -> str:
    """A short float: ``1e-07``, ``3.42e-15``, ``0.25`` (the report keeps the exact digits)."""
    return short_float(value)


def _e(value: float) -> str:
    return f"{value:.3e}"


def bar_fraction(nmse: float, tolerance: float) -> float:
    """Where ``nmse`` sits on the bar, from 0 to 1; the tolerance mark is at ``TOLERANCE_MARK``.

    The scale is log10(nmse / tolerance), from -DECADES (empty) to +2 (full). Zero error is
    an empty bar; a non-finite ratio is a full one.
    """
    if not tolerance > 0 or not math.isfinite(nmse):
        return 1.0
    if nmse <= 0:
        return 0.0
    position = math.log10(nmse / tolerance) + DECADES
    return min(1.0, max(0.0, position / (DECADES + _OVER)))


#: Fraction of the bar where the tolerance sits.
TOLERANCE_MARK: Final = DECADES / (DECADES + _OVER)


def _ratio(nmse: float, tolerance: float) -> str:
    if not tolerance > 0 or not math.isfinite(nmse):
        return "n/a"
    ratio = nmse / tolerance
    if ratio < 10:
        return f"{ratio:.2g}x"
    return f"{ratio:.0f}x" if ratio < 1000 else f"{ratio:.1e}x"


def _text_bar(nmse: float, tolerance: float, passed: bool) -> str:
    """``[████▍          |    ]``: filled to the NMSE in eighths of a cell; ``|`` is the tolerance.

    Each cell holds eight steps, so one step is ``(DECADES + 2) / (8 * cells)`` of a decade
    (1/16 with 20 cells): 0.24x and 0.53x of the tolerance are five steps apart. The mark is
    its own character between the cells below and above the tolerance, so it always shows;
    a failing bar is drawn with ``!``.
    """
    steps = round(bar_fraction(nmse, tolerance) * _TEXT_BAR * 8)
    whole, part = divmod(steps, 8)
    if passed:
        cells = "\u2588" * whole + (_EIGHTHS[part] if part else "")
    else:
        cells = "!" * (whole + (1 if part else 0))
    cells = cells.ljust(_TEXT_BAR)
    mark = round(TOLERANCE_MARK * _TEXT_BAR)
    return f"[{cells[:mark]}|{cells[mark:]}]"


def index_in(flat: int, shape: Sequence[int] | None) -> str:
    """``[5, 17] (flat index 182)`` in an output of ``shape``; ``flat index 182`` without one.

    A shape whose element count does not hold ``flat`` (a truncated output) gives the flat
    index alone: a multi-dimensional index there would name an element that is not there.
    """
    if not shape or not 0 <= flat < math.prod(shape):
        return f"flat index {flat}"
    position = []
    rest = flat
    for extent in reversed(shape):
        rest, index = divmod(rest, extent)
        position.append(index)
    return f"[{', '.join(str(i) for i in reversed(position))}] (flat index {flat})"


def _where(metrics: Metrics, offset: int, shape: Sequence[int] | None = None) -> str:
    return (
        f"max |diff| {_e(metrics.max_abs)} at {index_in(offset + metrics.max_abs_index, shape)}, "
        f"max {ulps(metrics.max_ulp)} ulp"
    )


def _measure(metrics: Metrics, tolerance: float) -> str:
    """``nmse 3.142e-05 >= tolerance 1e-07 (314x of tolerance)``."""
    relation = "<" if metrics.nmse < tolerance else ">="
    kind = "absolute MSE" if metrics.uses_absolute_mse else "nmse"
    return (
        f"{kind} {_e(metrics.nmse)} {relation} tolerance {_g(tolerance)} "
        f"({_ratio(metrics.nmse, tolerance)} of tolerance)"
    )


def _headline(verdict: Verdict) -> str:
    """The answer first: the status and what it rests on.

    A failure whose aggregate NMSE is within the tolerance failed for another reason (a
    segment, a shape, a NaN): the headline names that first, then the aggregate, so it never
    reads ``FAILED  nmse 1e-16 < tolerance``.
    """
    status = verdict.status.upper()
    metrics = verdict.metrics
    if metrics is None:
        return f"{status}  (not measured) tolerance {_g(verdict.tolerance)}"
    aggregate = f"{_measure(metrics, verdict.tolerance)}, n={metrics.element_count}"
    if verdict.passed or metrics.nmse >= verdict.tolerance:
        return f"{status}  {aggregate}"
    failing = [s for s in verdict.segments if s.status == "failed"]
    if failing:
        first = failing[0]
        what = (
            _measure(first.metrics, verdict.tolerance)
            if first.metrics is not None
            else rounded(first.reason or "not measured")
        )
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        cause = f"segment {first.segment.name}{more}: {what}"
    else:
        cause = rounded(verdict.reason or "failed")
    return f"{status}  {cause}; aggregate {aggregate}"


def _segment_rows(verdict: Verdict) -> list[str]:
    width = max(len("segment"), *(len(s.segment.name) for s in verdict.segments))
    ranges = [f"[{s.segment.start}:{s.segment.stop}]" for s in verdict.segments]
    span = max(len("range"), *(len(r) for r in ranges))
    rows = [
        f"  {'segment'.ljust(width)}  {'range'.ljust(span)}  status  "
        f"{'log10 nmse, |=tol'.ljust(_TEXT_BAR + 3)} {'nmse':>9}  {'x tol':>7}  {'max |diff|':>10}  "
        f"{'at':>6}  ulp"
    ]
    for judged, where in zip(verdict.segments, ranges, strict=True):
        status = "ok" if judged.status == "passed" else "FAIL"
        head = f"  {judged.segment.name.ljust(width)}  {where.ljust(span)}  {status:<6}  "
        metrics = judged.metrics
        if metrics is None:
            rows.append(f"{head}not measured: {rounded(judged.reason or '')}")
            continue
        rows.append(
            f"{head}{_text_bar(metrics.nmse, verdict.tolerance, judged.status == 'passed')} "
            f"{_e(metrics.nmse)}  {_ratio(metrics.nmse, verdict.tolerance):>7}  "
            f"{_e(metrics.max_abs)}  {judged.segment.start + metrics.max_abs_index:>6}  "
            f"{ulps(metrics.max_ulp)}"
        )
    return rows


def _clauses(reason: str) -> list[str]:
    """The reason's ``; ``-joined failures, one each, keeping ``max_abs=`` with its NMSE."""
    clauses: list[str] = []
    for part in rounded(reason).split("; "):
        if clauses and part.startswith("max_abs="):
            clauses[-1] += f"; {part}"
        else:
            clauses.append(part)
    return clauses


def _values(values: tuple[float, ...], start: int, index: int) -> str:
    """``1.5 [2.25] 3`` with the value at ``index`` in brackets (``%.7g``: float32 digits)."""
    cells = [f"{v:.7g}" for v in values]
    if 0 <= index - start < len(cells):
        cells[index - start] = f"[{cells[index - start]}]"
    return " ".join(cells)


def _around_rows(shown: Around, shape: Sequence[int] | None = None) -> list[str]:
    stop = shown.start + len(shown.reference)
    return [
        f"  around {shown.what} at {index_in(shown.index, shape)} ([{shown.start}:{stop}]):",
        f"    reference {_values(shown.reference, shown.start, shown.index)}",
        f"    actual    {_values(shown.actual, shown.start, shown.index)}",
    ]


def render_text(verdict: Verdict, shape: Sequence[int] | None = None) -> str:
    """Status and NMSE against the tolerance, where the worst difference is, each segment,
    the values around a failure's worst and first non-finite indices, then the reason (one
    clause per line). With the output's ``shape``, indices are also given as ``[row, col]``."""
    lines = [_headline(verdict)]
    if verdict.metrics is not None:
        lines.append(f"  {_where(verdict.metrics, 0, shape)}")
    failing = verdict.first_failing_segment
    if failing is not None:
        lines.append(
            f"  first failing segment: {failing.segment.display} "
            f"[{failing.segment.start}:{failing.segment.stop}]"
        )
    if verdict.segments:
        lines += _segment_rows(verdict)
    for shown in () if verdict.passed else verdict.around:
        lines += _around_rows(shown, shape)
    if verdict.reason:
        clauses = _clauses(verdict.reason)
        lines.append("  reason:" if len(clauses) > 1 else f"  reason: {clauses[0]}")
        if len(clauses) > 1:
            lines += [f"    - {clause}" for clause in clauses]
    if verdict.floor is not None:
        lines.append(f"  precision floor: {verdict.floor.summary()}")
    elif verdict.floor_note is not None:
        lines.append(f"  precision floor: not measured ({verdict.floor_note})")
    if verdict.provenance is not None:
        lines.append(f"  computed by: {verdict.provenance}")
    return "\n".join(lines)


def _segment_holding(verdict: Verdict, flat: int) -> SegmentVerdict | None:
    """The segment that holds ``flat``: a failing one first (ranges may overlap)."""
    holding = [s for s in verdict.segments if s.segment.start <= flat < s.segment.stop]
    return next((s for s in holding if s.status == "failed"), holding[0] if holding else None)


def failure_line(verdict: Verdict, shape: Sequence[int] | None = None) -> str | None:
    """One line saying where a failure is: the worst element by its index in ``shape``, the
    segment that holds it (and the first failing one, when another), and the values around it.

    ``None`` for a pass, and for a failure with nothing measured and nothing to point at (a
    shape mismatch, a missing output): its reason is the whole story.
    """
    if verdict.passed:
        return None
    shown = next(iter(verdict.around), None)
    parts: list[str] = []
    if verdict.metrics is not None and verdict.metrics.element_count:
        flat = verdict.metrics.max_abs_index
        parts.append(f"worst |diff| {_e(verdict.metrics.max_abs)} at {index_in(flat, shape)}")
    elif shown is not None:
        flat = shown.index
        parts.append(f"{shown.what} at {index_in(flat, shape)}")
    else:
        return None
    if shape:
        parts[0] += f" of output shape {tuple(shape)}"
    holding = _segment_holding(verdict, flat)
    if holding is not None:
        segment = holding.segment
        parts.append(
            f"in segment {segment.display} [{segment.start}:{segment.stop}] ({holding.status})"
        )
    failing = verdict.first_failing_segment
    if failing is not None and failing is not holding:
        what = (
            _measure(failing.metrics, verdict.tolerance)
            if failing.metrics is not None
            else (failing.reason or "not measured")
        )
        parts.append(f"first failing segment {failing.segment.display}: {what}")
    for around_one in verdict.around:
        if around_one.start <= flat < around_one.start + len(around_one.reference):
            parts.append(
                f"reference {_values(around_one.reference, around_one.start, flat)}; "
                f"actual {_values(around_one.actual, around_one.start, flat)}"
            )
            break
    return "; ".join(parts)


# -- HTML -------------------------------------------------------------------------------------


def _html_bar(metrics: Metrics | None, tolerance: float, passed: bool) -> str:
    if metrics is None:
        return '<span style="color:#888">not measured</span>'
    fraction = bar_fraction(metrics.nmse, tolerance)
    colour = _PASS_COLOUR if passed else _FAIL_COLOUR
    title = html.escape(f"nmse {metrics.nmse!r}; tolerance {tolerance!r}", quote=True)
    return (
        f'<div title="{title}" style="position:relative;background:#eee;width:200px;'
        f'height:10px;display:inline-block;vertical-align:middle">'
        f'<div style="background:{colour};width:{100 * fraction:.1f}%;height:10px"></div>'
        f'<div style="position:absolute;top:-2px;left:{100 * TOLERANCE_MARK:.1f}%;width:1px;'
        f'height:14px;background:#000"></div></div>'
    )


def _html_row(
    name: str,
    span: str,
    status: str,
    metrics: Metrics | None,
    offset: int,
    tolerance: float,
    reason: str | None,
    *,
    bold: bool = False,
) -> str:
    passed = status == "passed"
    colour = _PASS_COLOUR if passed else _FAIL_COLOUR
    cells = [
        html.escape(name),
        html.escape(span),
        f'<span style="color:{colour}">{html.escape(status)}</span>',
        _html_bar(metrics, tolerance, passed),
        _e(metrics.nmse) if metrics else "",
        _ratio(metrics.nmse, tolerance) if metrics else "",
        _e(metrics.max_abs) if metrics else "",
        str(offset + metrics.max_abs_index) if metrics else "",
        ulps(metrics.max_ulp) if metrics else "",
        html.escape(rounded(reason or "")),
    ]
    weight = ' style="font-weight:bold"' if bold else ""
    return f"<tr{weight}>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def _segment_html(judged: SegmentVerdict, tolerance: float) -> str:
    segment = judged.segment
    return _html_row(
        segment.name,
        f"[{segment.start}:{segment.stop}]",
        judged.status,
        judged.metrics,
        segment.start,
        tolerance,
        judged.reason,
    )


def render_html(verdict: Verdict) -> str:
    """A self-contained table: the aggregate, then one row per segment with a log-scale NMSE
    bar (the black tick is the tolerance), the ratio to the tolerance and where the largest
    difference is. Every string from the verdict is escaped."""
    colour = _PASS_COLOUR if verdict.passed else _FAIL_COLOUR
    total = verdict.metrics.element_count if verdict.metrics else 0
    rows = [
        _html_row(
            "aggregate",
            f"[0:{total}]" if verdict.metrics else "",
            verdict.status,
            verdict.metrics,
            0,
            verdict.tolerance,
            None if verdict.segments else verdict.reason,
            bold=True,
        )
    ]
    rows += [_segment_html(judged, verdict.tolerance) for judged in verdict.segments]
    headers = (
        "segment",
        "range",
        "status",
        f"NMSE (log; tick = tolerance, {DECADES} decades below it are empty)",
        "nmse",
        "x tol",
        "max |diff|",
        "at",
        "ulp",
        "reason",
    )
    head = "".join(f'<th style="text-align:left">{html.escape(h)}</th>' for h in headers)
    reason = (
        f'<div style="color:{_FAIL_COLOUR}">{html.escape(rounded(verdict.reason))}</div>'
        if verdict.reason
        else ""
    )
    computed = (
        f"<div>computed by: {html.escape(str(verdict.provenance))}</div>"
        if verdict.provenance is not None
        else ""
    )
    return (
        '<div class="diffcheck-verdict" style="font-family:monospace">'
        f'<div><b style="color:{colour}">{html.escape(verdict.status.upper())}</b> '
        f"{html.escape(_headline(verdict).split('  ', 1)[1])}</div>{reason}"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"{computed}</div>"
    )
