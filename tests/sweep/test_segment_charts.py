"""The sweep page's per-segment charts and columns: labels that never overlap, no wrapping pair."""

from __future__ import annotations

import itertools
import re
from typing import Any

from diffcheck.sweep.summary import SegmentNmse, SummaryRow
from diffcheck.sweep.svg import LogRange, phase_bars, segment_labels

PHASES = ("initial", "reused_context", "independent_context", "drop_flush")


def _row(names: list[str]) -> SummaryRow:
    values: dict[str, Any] = {
        "id": "p/op/x",
        "reference": "numpy",
        "candidate": "mlx:cpu",
        "required": False,
        "op": "attention",
        "shape": "4x8",
        "params": {"causal": True, "layout": "half"},
        "precision": "f32",
        "seed": 42,
        "status": "passed",
        "reason": None,
        "not_independent": None,
        "nmse": 1e-12,
        "tolerance": 1e-7,
        "ratio": 1e-5,
        "segments": [SegmentNmse(name=n, status="passed", nmse=1e-12) for n in names],
        "report": "p/op/x.json",
        "elapsed_ms": 1.0,
        "worker_wall_s": 1.0,
        "worker": "exit 0",
        "parent_action": None,
        "resumed": False,
        "known_divergence": None,
    }
    return SummaryRow(**values)


def _labels(svg: str) -> list[tuple[float, str, str]]:
    """(x, transform, text) of every x label under the plot (9 px text)."""
    found = re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="9"([^>]*)>([^<]+)</text>', svg)
    return [(float(x), extra, text) for x, extra, text in found]


def test_short_labels_lie_flat_and_long_ones_rotate_instead_of_overlapping() -> None:
    scale = LogRange(-16, -4)
    flat = _labels(phase_bars(_row(["head0", "head1", "head2", "head3"]), scale))
    assert [text for _, _, text in flat] == ["head0", "head1", "head2", "head3"]
    assert not any("rotate" in extra for _, extra, _ in flat)
    svg = phase_bars(_row(list(PHASES)), scale)
    rotated = _labels(svg)
    assert [text for _, _, text in rotated] == list(PHASES)
    assert all("rotate(-40" in extra for _, extra, _ in rotated)
    # The rotated labels get room below the plot: the caption sits under the longest one.
    height = int(re.search(r'height="(\d+)"', svg).group(1))  # type: ignore[union-attr]
    assert height > 170


def test_many_narrow_slots_label_every_kth_and_keep_every_bar() -> None:
    names = [f"head{h}" for h in range(64)]
    rotated, every, _ = segment_labels(names, 284 / 64)
    assert rotated
    assert every == 3  # 11 px of text per label over slots of 4.4 px
    svg = phase_bars(_row(names), LogRange(-16, -4))
    assert [text for _, _, text in _labels(svg)] == names[::3]
    assert svg.count("<rect") == 1 + 64  # the plot background and every head's bar
    # Drawn labels are at least a line of text apart.
    xs = [x for x, _, _ in _labels(svg)]
    assert min(b - a for a, b in itertools.pairwise(xs)) >= 11


def test_flat_labels_fit_their_slot() -> None:
    rotated, every, _ = segment_labels(["residual", "normed"], 142.0)
    assert (rotated, every) == (False, 1)
    rotated, _, _ = segment_labels(list(PHASES), 71.0)  # the lifecycle in a 340 px figure
    assert rotated


def test_the_pair_heads_its_checks_and_breaks_only_where_the_table_must_fit() -> None:
    from diffcheck.sweep import html

    # Long backend names break anywhere rather than push the table past the page; an op's
    # name breaks only between words (at its hyphens), never inside one.
    assert "td.pair{overflow-wrap:anywhere}td.op{overflow-wrap:break-word" in html._CSS
    first, second = _row(["head0"]), _row(["head0"]).model_copy(update={"candidate": "torch"})
    table = html._checks(
        [first, first.model_copy(update={"id": "p/op/y"}), second], LogRange(-16, -4)
    )
    heads = re.findall(
        r"<tr class='pair-head'><th colspan='(\d+)' class='pair'>([^<]*)</th>", table
    )
    assert heads == [("10", "numpy &rarr; mlx:cpu"), ("10", "numpy &rarr; torch")]
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", table)
    assert header is not None
    assert header.group(1).count("<th>") == 10  # the head row spans every column
    assert table.count("<td class='op'>attention</td>") == 3
