"""Inline SVG plots for the sweep page, drawn in Python (no JS, no fonts, no network).

Every plot uses a log-10 scale, because NMSE spans many decades: exact agreement (0) is
drawn at the bottom of the axis and marked "0", and a value past the top is clamped and
marked with an arrow. Each mark has a ``<title>`` so hovering shows the exact numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ..text import html_text as escape
from .summary import SummaryRow

__all__ = [
    "OP_MARKS",
    "LogRange",
    "floor_overview",
    "nmse_strip",
    "op_legend",
    "op_marks",
    "phase_bars",
    "ratio_overview",
    "segment_labels",
]

#: By row outcome: a failure with a known divergence is "known", in amber.
STATUS_COLOURS = {
    "passed": "#1a7f37",
    "failed": "#cf222e",
    "known": "#bf8700",
    "not_run": "#8c959f",
}
_FLOOR = -20  # decades: anything smaller is drawn as zero

#: One mark shape per op in the overview (colour is the status, so shape tells the op).
#: Beyond ten ops the shapes repeat and the legend numbers them. No cross (a failure with
#: no measurement) and nothing round but the circle: at 9 px a hexagon reads as a circle.
OP_MARKS: Final = (
    "circle",
    "square",
    "triangle",
    "diamond",
    "triangle-down",
    "plus",
    "pentagon",
    "star",
    "triangle-right",
    "bar",
)


def op_marks(ops: Iterable[str]) -> dict[str, str]:
    """Each op's mark shape, in first-seen order."""
    marks: dict[str, str] = {}
    for op in ops:
        if op not in marks:
            marks[op] = OP_MARKS[len(marks) % len(OP_MARKS)]
    return marks


def _mark(
    shape: str, x: float, y: float, *, fill: str, stroke: str, inner: str = "", attrs: str = ""
) -> str:
    """An op's mark centred at (x, y), about 9 px across; ``inner`` goes inside (a title).

    The plus is lines only: an exact match (hollow) draws it thinner instead.
    """
    r = 4.0
    paint = f'fill="{fill}" stroke="{stroke}" stroke-width="1.2"{attrs}'
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" {paint}>{inner}</circle>'
    if shape in ("square", "bar"):
        w, h = (r * 1.7, r * 1.7) if shape == "square" else (3.2, 2 * r + 2)
        return (
            f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f"{paint}>{inner}</rect>"
        )
    if shape == "plus":
        width = "1" if fill == "none" else "2.2"
        d = f"M{x - r - 1:.1f} {y:.1f}H{x + r + 1:.1f}M{x:.1f} {y - r - 1:.1f}V{y + r + 1:.1f}"
        return (
            f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{width}"{attrs}>'
            f"{inner}</path>"
        )
    outer = r + 1.2
    pentagon = [math.radians(a - 90) for a in range(0, 360, 72)]
    points: dict[str, Sequence[tuple[float, float]]] = {
        "triangle": ((0, -r - 0.8), (r + 0.6, r - 0.4), (-r - 0.6, r - 0.4)),
        "triangle-down": ((0, r + 0.8), (r + 0.6, -r + 0.4), (-r - 0.6, -r + 0.4)),
        "diamond": ((0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)),
        "triangle-right": ((r + 0.8, 0), (-r + 0.4, -r - 0.6), (-r + 0.4, r + 0.6)),
        "pentagon": [(outer * math.cos(a), outer * math.sin(a)) for a in pentagon],
        # Five points: outer and inner radius alternating every 36 degrees.
        "star": [
            (
                (outer if i % 2 == 0 else r / 2) * math.sin(math.radians(36 * i)),
                -(outer if i % 2 == 0 else r / 2) * math.cos(math.radians(36 * i)),
            )
            for i in range(10)
        ],
    }
    corners = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in points[shape])
    return f'<polygon points="{corners}" {paint}>{inner}</polygon>'


def op_legend(marks: dict[str, str], colour: str = "#24292f") -> str:
    """The ops and their marks as inline HTML: a tiny SVG per op, wrapping with the text."""
    repeat = len(marks) > len(OP_MARKS)
    items = []
    for index, (op, shape) in enumerate(marks.items()):
        mark = _mark(shape, 7, 7, fill=colour, stroke=colour)
        number = f" ({index + 1})" if repeat else ""
        items.append(
            f'<span class="op-mark" data-op="{escape(op)}"><svg xmlns="http://www.w3.org/2000/svg" '
            f'width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">{mark}'
            f"</svg>&nbsp;{escape(op)}{number}</span>"
        )
    return " ".join(items)


class LogRange:
    """A decade range ``[10**lo, 10**hi]`` mapped onto a pixel interval."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, max(hi, lo + 1)

    @classmethod
    def covering(cls, values: Iterable[float | None], *, lo: int, hi: int) -> LogRange:
        """The smallest decade range holding every positive finite value and [10**lo, 10**hi]."""
        logs = [math.log10(v) for v in values if v is not None and math.isfinite(v) and v > 0]
        low = max(_FLOOR, math.floor(min(logs, default=lo)))
        high = math.ceil(max(logs, default=hi))
        return cls(min(lo, low), max(hi, high))

    def fraction(self, value: float) -> float:
        """Where ``value`` falls, 0 at ``10**lo`` and 1 at ``10**hi`` (clamped)."""
        if not value > 0:
            return 0.0
        if not math.isfinite(value):
            return 1.0
        return min(1.0, max(0.0, (math.log10(value) - self.lo) / (self.hi - self.lo)))

    def decades(self, step: int = 1) -> range:
        return range(self.lo, self.hi + 1, step)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else ("0" if value == 0 else f"{value:.3g}")


def _tick_step(scale: LogRange, ticks: int) -> int:
    return max(1, math.ceil((scale.hi - scale.lo) / ticks))


def _plot_frame(
    scale: LogRange,
    box: tuple[float, float, float, float],
    *,
    ticks: int,
    font_size: int,
    label_gap: int,
) -> tuple[list[str], Callable[[float], float]]:
    """The background, decade grid lines and labels of a log-scale plot.

    ``box`` is (left, top, width, height) of the plot area. Returns the SVG elements and the
    function mapping a value to its y coordinate.
    """
    left, top, plot_w, plot_h = box
    body = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#f6f8fa"/>']

    def y_of(value: float) -> float:
        return top + plot_h * (1.0 - scale.fraction(value))

    for decade in scale.decades(_tick_step(scale, ticks)):
        y = y_of(10.0**decade)
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d0d7de"/>'
        )
        body.append(
            f'<text x="{left - label_gap}" y="{y + 4:.1f}" font-size="{font_size}" '
            f'text-anchor="end">1e{decade}</text>'
        )
    return body, y_of


def _fit_label(full: str, short: str, room: float, *, char_px: float = 5.6) -> str:
    """The pair label that fits ``room`` pixels at 10 px type: full, then short, then cut."""
    for text in (full, short):
        if len(text) * char_px <= room:
            return text
    keep = int(room // char_px) - 1
    return short[:keep] + "…" if keep > 0 else ""


def _svg(width: int, height: int, body: Sequence[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
        + "".join(body)
        + "</svg>"
    )


def ratio_overview(
    rows: Sequence[SummaryRow],
    marks: dict[str, str] | None = None,
    *,
    width: int = 1100,
    height: int = 280,
) -> str:
    """Every check's nmse / tolerance on a log axis, with the pass line at 1.

    Checks are laid out in summary order and grouped by pair (dotted separators). The colour
    of a mark is its status, its shape its op (``marks``, :func:`op_marks` by default; the
    page shows them with :func:`op_legend`), and its tooltip names both. A failed check with
    no measurement (crash, timeout) is a red cross at the top; not_run checks are grey ticks
    under the axis.
    """
    return _overview(
        rows,
        marks,
        lambda row: row.ratio,
        [(1.0, "tolerance (ratio 1)")],
        "nmse / tolerance",
        "NMSE against tolerance, every check, log scale",
        (-8, 1),
        width=width,
        height=height,
    )


def floor_overview(
    rows: Sequence[SummaryRow],
    marks: dict[str, str] | None = None,
    *,
    width: int = 1100,
    height: int = 280,
) -> str:
    """Every check's NMSE against the float64 truth in units of its precision floor, with
    the derived tolerance of each precision that ran (its multiple of the floor) as a line.

    An honest candidate sits near 1; TF32 or half-precision arithmetic under an f32 check
    sits 10^5 and more above it. Checks without a floor (not compared) are left out.
    """
    multiples = sorted(
        {
            (r.floor.derived_tolerance / r.floor.floor_nmse, r.precision)
            for r in rows
            if r.floor is not None and r.floor.floor_nmse > 0
        }
    )
    lines: dict[float, list[str]] = {}
    for multiple, precision in multiples:
        lines.setdefault(round(multiple, 6), []).append(precision)
    return _overview(
        rows,
        marks,
        lambda row: None if row.floor is None else row.floor.ratio,
        [(k, f"derived tolerance {k:g}x ({', '.join(v)})") for k, v in lines.items()],
        "nmse vs truth / floor",
        "NMSE against the float64 truth in units of the precision floor, every check",
        (-2, 3),
        width=width,
        height=height,
    )


def _overview(
    rows: Sequence[SummaryRow],
    marks: dict[str, str] | None,
    value: Callable[[SummaryRow], float | None],
    limits: Sequence[tuple[float, str]],
    axis_label: str,
    title: str,
    span: tuple[int, int],
    *,
    width: int,
    height: int,
) -> str:
    """One mark per check at ``value(row)`` on a log axis, with a dashed line per limit."""
    marks = op_marks(r.op for r in rows) if marks is None else marks
    left, right, top, bottom = 56, 12, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    scale = LogRange.covering(
        [value(r) for r in rows] + [y for y, _ in limits], lo=span[0], hi=span[1]
    )
    step = plot_w / max(1, len(rows))
    body, y_of = _plot_frame(scale, (left, top, plot_w, plot_h), ticks=8, font_size=11, label_gap=6)
    for limit, label in limits:
        at = y_of(limit)
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{at:.1f}" y2="{at:.1f}" '
            'stroke="#cf222e" stroke-dasharray="6 3"/>'
            f'<text x="{left + plot_w - 4}" y="{at - 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="#cf222e">{escape(label)}</text>'
        )
    group_sizes: dict[str, int] = {}
    for row in rows:
        key = f"{row.reference} -> {row.candidate}"
        group_sizes[key] = group_sizes.get(key, 0) + 1
    previous_pair = None
    for index, row in enumerate(rows):
        x = left + step * (index + 0.5)
        pair = f"{row.reference} -> {row.candidate}"
        if pair != previous_pair:
            if previous_pair is not None:
                edge = left + step * index
                body.append(
                    f'<line x1="{edge:.1f}" x2="{edge:.1f}" y1="{top}" y2="{top + plot_h}" '
                    'stroke="#57606a" stroke-dasharray="2 3"/>'
                )
            label = _fit_label(pair, row.candidate, step * group_sizes[pair] - 6)
            body.append(
                f'<text x="{left + step * index + 3:.1f}" y="{height - 8}" font-size="10" '
                f'fill="#57606a"><title>{escape(pair)}</title>{escape(label)}</text>'
            )
            previous_pair = pair
        colour = STATUS_COLOURS[row.outcome]
        shown = value(row)
        tip = (
            f"<title>{escape(row.op)}: {escape(row.id)}: {row.outcome}; {axis_label} "
            f"{_fmt(shown)}; nmse {_fmt(row.nmse)}; tolerance {row.tolerance:g}</title>"
        )
        op = f' data-op="{escape(row.op)}"'
        if shown is not None:
            fill = "none" if shown == 0 else colour
            shape = marks[row.op]
            body.append(_mark(shape, x, y_of(shown), fill=fill, stroke=colour, inner=tip, attrs=op))
        elif row.status == "failed":
            y = top + 6
            body.append(
                f'<path d="M{x - 4:.1f} {y - 4:.1f}L{x + 4:.1f} {y + 4:.1f}M{x - 4:.1f} {y + 4:.1f}L{x + 4:.1f} {y - 4:.1f}" '
                f'stroke="{colour}" stroke-width="2"{op}>{tip}</path>'
            )
        else:
            y = top + plot_h + 4
            body.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y:.1f}" y2="{y + 8:.1f}" stroke="{colour}" stroke-width="2"{op}>{tip}</line>'
            )
    body.append(
        f'<text x="12" y="{top + plot_h / 2:.0f}" font-size="11" '
        f'transform="rotate(-90 12 {top + plot_h / 2:.0f})" text-anchor="middle">'
        f"{escape(axis_label)}</text>"
    )
    return _svg(width, height, body, title)


def nmse_strip(row: SummaryRow, scale: LogRange, *, width: int = 200, height: int = 22) -> str:
    """One check's NMSE (dot) and tolerance (bar) on a shared log axis; red beyond tolerance."""
    pad = 4
    usable = width - 2 * pad
    tolerance_x = pad + usable * scale.fraction(row.tolerance)
    mid = height / 2
    body = [
        f'<rect x="{pad}" y="{mid - 3}" width="{tolerance_x - pad:.1f}" height="6" fill="#dafbe1"/>',
        f'<rect x="{tolerance_x:.1f}" y="{mid - 3}" width="{width - pad - tolerance_x:.1f}" height="6" fill="#ffebe9"/>',
        f'<line x1="{tolerance_x:.1f}" x2="{tolerance_x:.1f}" y1="2" y2="{height - 2}" stroke="#24292f" stroke-width="2">'
        f"<title>tolerance {row.tolerance:g}</title></line>",
    ]
    if row.nmse is not None:
        x = pad + usable * scale.fraction(row.nmse)
        colour = STATUS_COLOURS[row.outcome]
        fill = "none" if row.nmse == 0 else colour
        body.append(
            f'<circle cx="{x:.1f}" cy="{mid}" r="4.5" fill="{fill}" stroke="{colour}" stroke-width="1.5">'
            f"<title>nmse {_fmt(row.nmse)} (1e{scale.lo} .. 1e{scale.hi}, log)</title></circle>"
        )
    return _svg(width, height, body, f"nmse {_fmt(row.nmse)} against tolerance {row.tolerance:g}")


#: Width of one character of the 9 px segment labels (DejaVu/Helvetica average, generous).
_LABEL_PX: Final = 5.6
#: Angle of segment labels that do not fit their slot lying flat.
_LABEL_ANGLE: Final = 40.0


def segment_labels(names: Sequence[str], slot: float) -> tuple[bool, int, float]:
    """How the x labels of ``names`` fit slots ``slot`` px wide: (rotated, every k-th, height).

    Flat when the longest fits its slot; otherwise rotated by 40 degrees, and when even a
    rotated label's 11 px line height does not fit, only every k-th is drawn (the bar keeps
    its tooltip). ``height`` is the vertical room the labels need.
    """
    longest = max((len(name) for name in names), default=0) * _LABEL_PX
    if longest <= slot * 0.95:
        return False, 1, 12.0
    every = max(1, math.ceil(11.0 / slot))
    return True, every, longest * math.sin(math.radians(_LABEL_ANGLE)) + 14.0


def phase_bars(row: SummaryRow, scale: LogRange, *, width: int = 340, plot_h: int = 126) -> str:
    """Per-segment NMSE bars of a check (lifecycle phases, attention heads) on a log axis.

    The tolerance is the dashed line. X labels lie flat when they fit their slot, else they
    are rotated, and thinned to every k-th when the slots are narrower than a line of text.
    """
    left, right, top = 48, 8, 10
    plot_w = width - left - right
    count = max(1, len(row.segments))
    slot = plot_w / count
    rotated, every, label_h = segment_labels([s.name for s in row.segments], slot)
    height = int(top + plot_h + label_h + 18)
    body, y_of = _plot_frame(scale, (left, top, plot_w, plot_h), ticks=5, font_size=10, label_gap=4)
    base = top + plot_h
    for index, segment in enumerate(row.segments):
        x = left + slot * index + slot * 0.2
        colour = STATUS_COLOURS[segment.status]
        tip = f"<title>{escape(segment.name)}: {segment.status}, nmse {_fmt(segment.nmse)}</title>"
        if segment.nmse is not None:
            y = y_of(segment.nmse)
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.6:.1f}" height="{base - y:.1f}" fill="{colour}">{tip}</rect>'
            )
        if index % every:
            continue
        centre, label_y = x + slot * 0.3, base + 11
        if rotated:
            body.append(
                f'<text x="{centre:.1f}" y="{label_y:.1f}" font-size="9" text-anchor="end" '
                f'transform="rotate(-{_LABEL_ANGLE:g} {centre:.1f} {label_y:.1f})">'
                f"{escape(segment.name)}</text>"
            )
        else:
            body.append(
                f'<text x="{centre:.1f}" y="{label_y:.1f}" font-size="9" text-anchor="middle">{escape(segment.name)}</text>'
            )
    tolerance_y = y_of(row.tolerance)
    body.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{tolerance_y:.1f}" y2="{tolerance_y:.1f}" '
        f'stroke="#cf222e" stroke-dasharray="5 3"><title>tolerance {row.tolerance:g}</title></line>'
    )
    body.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 4}" font-size="10" text-anchor="middle" fill="#57606a">'
        f"{escape(row.candidate)} {escape(row.shape)} {row.precision} s{row.seed}</text>"
    )
    return _svg(width, height, body, f"per-segment nmse of {row.id}")
