"""Both HTML pages in a real browser: at 1280 and 1920 px nothing overflows, no text is cut
off, the summary is the first thing on the screen, and the sweep's marks tell the op.

Skipped with its reason where Playwright or Chromium is missing; ``nox -s pages`` runs them
(see conftest.py). Screenshots go to ``$DIFFCHECK_PAGES_SHOTS`` when it is set.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

WIDTHS = (1280, 1920)  # a laptop and a desktop screen
HEIGHT = 900

#: Everything the checks measure, in one pass over the laid-out page.
_MEASURE = """() => {
  const vw = window.innerWidth;
  const box = (r) => [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)];
  const result = {scrollWidth: document.documentElement.scrollWidth, innerWidth: vw,
                  tables: [], clipped: [], outside: [], svgText: []};
  for (const table of document.querySelectorAll('table')) {
    const r = table.getBoundingClientRect();
    result.tables.push([table.className, box(r)]);
  }
  // A box that clips or scrolls its content and holds more than it shows hides text.
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg')) continue;
    const style = getComputedStyle(el);
    const clips = ['hidden', 'clip', 'auto', 'scroll'].includes(style.overflowX);
    if ((clips || style.textOverflow === 'ellipsis') && el.scrollWidth > el.clientWidth + 1)
      result.clipped.push(el.tagName + '.' + el.className + ': ' + el.textContent.slice(0, 60));
  }
  // Every rendered piece of text lies inside the viewport's width.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim() || node.parentElement.closest('svg')) continue;
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) {
      if (r.width > 0 && (r.left < -0.5 || r.right > vw + 0.5))
        result.outside.push(node.textContent.trim().slice(0, 60) + ' ' + box(r));
    }
  }
  // SVG text (axis labels, pair names) lies inside its own drawing.
  for (const text of document.querySelectorAll('svg text')) {
    const s = text.ownerSVGElement.getBoundingClientRect();
    const r = text.getBoundingClientRect();
    if (r.width > 0 && (r.left < s.left - 1 || r.right > s.right + 1 ||
                        r.top < s.top - 1 || r.bottom > s.bottom + 1))
      result.svgText.push(text.textContent + ' ' + box(r) + ' in ' + box(s));
  }
  return result;
}"""


#: Each chart mark as (op, shape): a polygon by its corners moved to the origin, a rect by
#: its size, a path by its drawing commands; "tick" and "x" for not_run and no measurement.
_SHAPES = """els => els.map(e => {
  const op = e.dataset.op;
  if (e.tagName === 'line') return [op, 'tick'];
  if (e.tagName === 'circle') return [op, 'circle'];
  if (e.tagName === 'rect') return [op, 'rect ' + e.getAttribute('width') + 'x' + e.getAttribute('height')];
  if (e.tagName === 'path') return [op, e.getAttribute('d').includes('H') ? 'plus' : 'x'];
  const points = e.getAttribute('points').split(' ').map(p => p.split(',').map(Number));
  const x0 = Math.min(...points.map(p => p[0])), y0 = Math.min(...points.map(p => p[1]));
  return [op, 'polygon ' + points.map(p => (p[0] - x0).toFixed(1) + ',' + (p[1] - y0).toFixed(1)).join(' ')];
})"""


def _png_width(path: Path) -> int:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    (width,) = struct.unpack(">I", data[16:20])
    return int(width)


def _open(browser: Any, page_file: Path, width: int, shots: Path, name: str) -> Any:
    page = browser.new_page(viewport={"width": width, "height": HEIGHT})
    page.goto(page_file.as_uri())
    shot = shots / f"{name}-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert _png_width(shot) == width
    top = shots / f"{name}-{width}-top.png"
    page.screenshot(path=str(top))  # what a reader sees first
    return page


def _assert_fits(page: Any) -> None:
    seen = page.evaluate(_MEASURE)
    width = seen["innerWidth"]
    assert seen["scrollWidth"] <= width, "the page scrolls sideways"
    for name, (left, _, right, _) in seen["tables"]:
        assert left >= 0, f"table {name!r} starts at {left}"
        assert right <= width, f"table {name!r} spans {left}..{right} of {width}"
    assert seen["clipped"] == [], "text hidden in a clipping box"
    assert seen["outside"] == [], "text past the window's edge"
    assert seen["svgText"] == [], "chart text outside its chart"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sweep_page_fits_and_leads_with_its_verdict(
    browser: Any, sweep_html: Path, shots: Path, width: int
) -> None:
    page = _open(browser, sweep_html, width, shots, "sweep")
    try:
        _assert_fits(page)
        verdict = page.locator(".verdict").bounding_box()
        counts = page.locator("#counts").bounding_box()
        first_table = page.locator("table").first.bounding_box()
        # The verdict and the counts are on the first screen, above every table.
        assert verdict["y"] < 200
        assert counts["y"] + counts["height"] < HEIGHT
        assert verdict["y"] < counts["y"] < first_table["y"]
        assert page.locator(".verdict").inner_text().startswith("Sweep failed: 2 checks failed")
        # Each op of the run has its mark in the legend, and every check its mark in the chart.
        legend = page.locator("#op-legend .op-mark")
        ops = sorted(legend.evaluate_all("els => els.map(e => e.dataset.op)"))
        table_ops = page.locator("table.checks td.op").all_inner_texts()
        assert ops == sorted(set(table_ops))
        assert len(ops) == 9
        assert all(item.is_visible() for item in legend.all())
        marks = page.locator("svg [data-op]")
        assert marks.count() == len(table_ops)
        # A mark's tooltip names its op; distinct ops have distinct shapes.
        # Marks of measured checks (not the cross of a failure with no measurement, nor the
        # tick of a not_run): one shape per op, none shared between ops.
        shapes = marks.evaluate_all(_SHAPES)
        by_op: dict[str, set[str]] = {}
        for op, shape in shapes:
            if shape not in ("tick", "x"):
                by_op.setdefault(op, set()).add(shape)
        assert len(by_op) >= 7
        assert all(len(kinds) == 1 for kinds in by_op.values())
        assert len({next(iter(kinds)) for kinds in by_op.values()}) == len(by_op)
        titles = marks.evaluate_all("els => els.map(e => e.querySelector('title').textContent)")
        assert all(title.split(":")[0] in ops for title in titles)
    finally:
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_search_page_fits_and_leads_with_its_summary(
    browser: Any, search_html: Path, shots: Path, width: int
) -> None:
    page = _open(browser, search_html, width, shots, "search")
    try:
        _assert_fits(page)
        summary = page.locator("#summary").bounding_box()
        # The whole summary is on the first screen, directly under the title.
        assert summary["y"] < 150
        assert summary["y"] + summary["height"] < HEIGHT
        text = page.locator("#summary").inner_text()
        assert "new finding" in text
        for row in ("pair", "seed", "examples", "findings", "crashes, hangs", "coverage"):
            assert row in text
        assert "1 crash, 0 hangs" in text
        # New findings (red badges) all come before known ones (amber), below the summary.
        badges = page.locator(".finding .badge").evaluate_all(
            "els => els.map(e => [e.classList.contains('known'), e.getBoundingClientRect().top])"
        )
        kinds = [known for known, _ in badges]
        assert False in kinds
        assert True in kinds
        assert kinds == sorted(kinds)  # every False (new) before every True (known)
        assert min(top for _, top in badges) > summary["y"] + summary["height"]
    finally:
        page.close()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            "<table><tr><td style='white-space:nowrap'>" + "wide " * 400 + "</td></tr></table>",
            "sideways",
        ),
        (
            "<div style='width:100px;overflow:hidden;white-space:nowrap'>" + "cut " * 80 + "</div>",
            "clipping",
        ),
        ("<pre style='overflow-x:auto'>" + "x" * 900 + "</pre>", "clipping"),
        ("<p style='margin-left:1400px;white-space:nowrap'>far right</p>", "sideways"),
        (
            "<svg width='50' height='20'><text x='30' y='15'>a label too long</text></svg>",
            "chart text",
        ),
    ],
)
def test_the_fit_check_sees_what_overflows(browser: Any, body: str, words: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": HEIGHT})
    try:
        page.set_content(f"<!doctype html><html><body>{body}</body></html>")
        with pytest.raises(AssertionError, match=words):
            _assert_fits(page)
    finally:
        page.close()
