"""The verdict's terminal text and notebook HTML: they say what failed, where, and by how much."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.differ.render import DECADES, TOLERANCE_MARK, bar_fraction


def _pair(size: int = 1024) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    reference = np.linspace(-3, 3, size, dtype=np.float32)
    return reference, reference.copy()


def _failing_second_half() -> diffcheck.Verdict:
    reference, actual = _pair()
    actual[700:710] *= np.float32(1.01)
    return diffcheck.diff(reference, actual, max_nmse=1e-7, segments=2)


class _Tags(HTMLParser):
    """Checks that every opened tag is closed in order, and collects the visible text."""

    VOID = frozenset({"br", "hr", "img"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []
        self.widths: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)
        style = dict(attrs).get("style") or ""
        self.widths += [part for part in style.split(";") if part.startswith("width:")]

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1:] == [tag], f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    parser.close()
    assert parser.stack == [], f"unclosed tags: {parser.stack}"
    return parser


# -- text ----------------------------------------------------------------------------------------


def test_a_pass_leads_with_nmse_below_the_tolerance_and_its_headroom() -> None:
    reference, actual = _pair()
    actual[10] += np.float32(1e-4)
    text = str(diffcheck.diff(reference, actual, max_nmse=1e-7))
    first = text.splitlines()[0]
    assert first.startswith("PASSED  nmse ")
    assert "< tolerance 1e-07" in first
    assert "of tolerance), n=1024" in first
    assert "at flat index 10" in text
    assert "reason" not in text


def test_a_failure_names_the_failing_segment_and_where_it_diverges() -> None:
    text = str(_failing_second_half())
    lines = text.splitlines()
    assert lines[0].startswith("FAILED  nmse ")
    assert ">= tolerance 1e-07" in lines[0]
    assert "first failing segment: segment1 [512:1024]" in text
    rows = {line.split()[0]: line for line in lines if line.strip().startswith("segment")}
    assert " ok " in rows["segment0"]
    assert " FAIL " in rows["segment1"]
    assert "!" in rows["segment1"]  # the bar overflows the tolerance mark
    assert rows["segment1"].split()[-2] == "709"  # the worst element, as a flat index
    # One clause per line, each NMSE kept with its max_abs.
    clauses = [line for line in lines if line.startswith("    - ")]
    assert len(clauses) == 2
    assert clauses[1].startswith("    - segment1: NMSE ")
    assert "max_abs=" in clauses[1]


def test_an_unmeasured_failure_says_so_and_gives_the_reason() -> None:
    reference, actual = _pair(8)
    actual[3] = np.nan
    text = str(diffcheck.diff(reference, actual, max_nmse=1e-7))
    assert text.splitlines()[0] == "FAILED  (not measured) tolerance 1e-07"
    assert "reason: required backend contains a non-finite value at 3" in text


def test_absolute_mse_is_named_when_the_reference_is_silent() -> None:
    text = str(diffcheck.diff(np.zeros(4), np.full(4, 1e-3), max_nmse=1e-7))
    assert text.startswith("FAILED  absolute MSE 1.000e-06 >= tolerance 1e-07")


def test_a_segment_failure_under_a_passing_aggregate_leads_with_the_segment() -> None:
    # The aggregate NMSE is tiny (a quiet segment in a loud output), so the headline must not
    # read "FAILED  nmse 6.5e-14 < tolerance": it names the segment, its NMSE and tolerance.
    reference = np.linspace(-3, 3, 4096, dtype=np.float32)
    reference[:8] = np.float32(1e-3)
    actual = reference.copy()
    actual[:8] *= np.float32(1.01)
    first = str(diffcheck.diff(reference, actual, max_nmse=1e-7, segments=512)).splitlines()[0]
    assert first.startswith("FAILED  segment segment0: nmse 1.000e-04 >= tolerance 1e-07 (")
    assert "; aggregate nmse 6.5" in first
    assert first.endswith("< tolerance 1e-07 (6.5e-07x of tolerance), n=4096")
    actual[4000] *= np.float32(1.01)  # a second failing segment is counted
    first = str(diffcheck.diff(reference, actual, max_nmse=1e-7, segments=512)).splitlines()[0]
    assert first.startswith("FAILED  segment segment0 (and 1 more): nmse ")


def test_a_shape_failure_under_a_passing_aggregate_leads_with_the_reason() -> None:
    reference, actual = _pair(8)
    verdict = diffcheck.diff(reference, actual, max_nmse=1e-7, expected_elements=9)
    first = str(verdict).splitlines()[0]
    assert first.startswith("FAILED  ")
    assert "9" in first.split("; aggregate")[0]
    assert "; aggregate nmse 0.000e+00 < tolerance 1e-07" in first


# -- bars ----------------------------------------------------------------------------------------


def test_text_bars_resolve_a_sixteenth_of_a_decade_and_keep_the_mark() -> None:
    from diffcheck.differ.render import _text_bar

    ratios = [0.01, 0.1, 0.24, 0.3, 0.53, 0.9]
    bars = [_text_bar(r * 1e-7, 1e-7, True) for r in ratios]
    assert len(set(bars)) == len(bars), bars  # 0.24x and 0.53x no longer look alike
    filled = [
        sum(
            8
            if c == "\u2588"
            else (" \u258f\u258e\u258d\u258c\u258b\u258a\u2589".find(c) if c not in " |" else 0)
            for c in b
        )
        for b in bars
    ]
    assert filled == sorted(filled)
    assert all(b[17] == "|" for b in bars)  # the tolerance mark is always drawn
    assert _text_bar(3e-7, 1e-7, False) == "[!!!!!!!!!!!!!!!!|!   ]"
    assert _text_bar(0.0, 1e-7, True) == "[                |    ]"


def test_bar_is_logarithmic_with_the_tolerance_at_its_mark() -> None:
    assert bar_fraction(0.0, 1e-7) == 0.0
    assert bar_fraction(1e-7 * 10.0**-DECADES, 1e-7) == 0.0
    assert bar_fraction(1e-7, 1e-7) == pytest.approx(TOLERANCE_MARK)
    assert bar_fraction(1e-3, 1e-7) == 1.0
    assert bar_fraction(float("nan"), 1e-7) == 1.0
    values = [bar_fraction(1e-7 * 10.0**e, 1e-7) for e in range(-8, 3)]
    assert values == sorted(values)
    assert len(set(values)) == len(values)


# -- HTML ----------------------------------------------------------------------------------------


def test_html_has_one_bar_per_segment_and_is_well_formed() -> None:
    verdict = _failing_second_half()
    markup = verdict._repr_html_()
    parsed = _parse(markup)
    text = "".join(parsed.text)
    assert "FAILED" in text
    assert "segment0" in text
    assert "segment1" in text
    assert "aggregate" in text
    assert markup.count("<tr") == 1 + 1 + len(verdict.segments)  # header, aggregate, segments
    # Each measured row has a filled bar: aggregate and segment1 past the mark, segment0 empty.
    fills = [w for w in parsed.widths if w.startswith("width:") and w.endswith("%")]
    assert len(fills) == 3
    percentages = [float(w.removeprefix("width:").removesuffix("%")) for w in fills]
    assert percentages[1] == 0.0
    assert percentages[0] > 100 * TOLERANCE_MARK
    assert percentages[2] > 100 * TOLERANCE_MARK
    assert "#c62828" in markup  # failure colour


def test_html_escapes_every_string_from_the_verdict() -> None:
    reference, actual = _pair(8)
    actual[5] *= 2
    evil = diffcheck.Segment("<script>alert(1)</script>", 0, 8)
    markup = diffcheck.diff(reference, actual, max_nmse=1e-7, segments=[evil])._repr_html_()
    assert "<script>" not in markup
    assert "&lt;script&gt;" in markup
    _parse(markup)


def test_html_of_a_pass_without_segments_has_just_the_aggregate() -> None:
    reference, actual = _pair()
    markup = diffcheck.diff(reference, actual, max_nmse=1e-7)._repr_html_()
    parsed = _parse(markup)
    assert "PASSED" in "".join(parsed.text)
    assert markup.count("<tr") == 2
    assert "#2e7d32" in markup


def test_html_of_an_unmeasured_failure_shows_not_measured() -> None:
    reference, actual = _pair(8)
    actual[0] = np.inf
    markup = diffcheck.diff(reference, actual, max_nmse=1e-7, segments=2)._repr_html_()
    parsed = _parse(markup)
    text = "".join(parsed.text)
    assert "not measured" in text
    assert "required backend contains a non-finite value at 0" in text
