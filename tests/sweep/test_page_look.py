"""The sweep page says what it knows: no green pass over checks that did not run, no
"exit 0" beside a failure, short numbers, one not_run reason said once, and marks that
tell the op."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diffcheck.sweep.html import render_html, rounded
from diffcheck.sweep.summary import SweepSummary
from diffcheck.sweep.svg import OP_MARKS, op_legend, op_marks, ratio_overview

from .conftest import SweepRun


def _summary(run: SweepRun) -> SweepSummary:
    return SweepSummary.model_validate_json((run.directory / "summary.json").read_text())


def test_a_pass_with_not_run_checks_is_not_green(fault_sweep: SweepRun) -> None:
    summary = _summary(fault_sweep)
    assert summary.counts.not_run > 0
    # The same checks, judged a pass (the not_run pair not required, nothing failed).
    passed = summary.model_copy(update={"exit_status": 0, "exit_reasons": []})
    page = render_html(passed)
    ran = summary.counts.total - summary.counts.not_run
    assert '<div class="verdict partial">' in page
    assert f"{ran} of {summary.counts.total} checks ran, {summary.counts.not_run} not_run" in page
    assert '<div class="verdict ok">' not in page
    everything = passed.model_copy(
        update={"counts": summary.counts.model_copy(update={"not_run": 0})}
    )
    assert f"Sweep passed: all {summary.counts.total} checks ran" in render_html(everything)


def test_a_repeated_not_run_reason_is_said_once(fault_sweep: SweepRun) -> None:
    summary = _summary(fault_sweep)
    page = render_html(summary)
    not_run = [row for row in summary.checks if row.outcome == "not_run"]
    assert len(not_run) > 1
    reason = not_run[0].reason
    assert reason is not None
    assert page.count("same as <a href=") == len(not_run) - 1
    assert all(row.reason == reason for row in not_run)


def test_a_failed_check_never_shows_worker_exit_0(fault_sweep: SweepRun) -> None:
    summary = _summary(fault_sweep)
    row = next(row for row in summary.checks if row.outcome == "failed")
    lied = summary.model_copy(update={"checks": [row.model_copy(update={"worker": "exit 0"})]})
    page = render_html(lied)
    cells = re.findall(r"<td class='worker'>([^<]*)(?:<br>[^<]*)?</td>", page)
    assert cells
    assert "exit 0" not in cells
    assert "finished (the check itself failed)" in page


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "NMSE 0.00000014173460819139302 is not below tolerance 0.00000002; max_abs=0.0013238191604614258",
            "NMSE 1.42e-07 is not below tolerance 2e-08; max_abs=0.00132",
        ),
        ("shape 64x33x35 seed 42 took 1.5 s", "shape 64x33x35 seed 42 took 1.5 s"),
        ("v1.23456.7 stays", "v1.23456.7 stays"),
    ],
)
def test_long_decimals_are_rounded(text: str, shown: str) -> None:
    assert rounded(text) == shown


@given(st.floats(min_value=1e-30, max_value=1e6, allow_nan=False))
def test_a_rounded_decimal_keeps_three_significant_digits(value: float) -> None:
    text = f"{value:.20f}".rstrip("0")
    if "." not in text or len(text.split(".")[1]) < 5:
        return
    shown = rounded(f"x {text} y")
    number = float(shown.split()[1])
    assert number == pytest.approx(float(f"{float(text):.3g}"))


def _mark_tags(svg: str) -> dict[str, set[str]]:
    """Each op's set of element tags among the overview's marks (data-op carries the op)."""
    found: dict[str, set[str]] = {}
    for tag, attrs in re.findall(r"<(circle|rect|path|polygon|line)([^>]*data-op=[^>]*)>", svg):
        op = re.search(r'data-op="([^"]*)"', attrs)
        points = re.search(r'points="([^"]*)"', attrs)
        # Polygons differ by their corner count (triangle 3, diamond 4, pentagon 5, ...).
        shape = f"{tag}{len(points.group(1).split()) if points else ''}"
        if tag == "rect":
            shape += re.search(r'width="([\d.]+)"', attrs).group(1)  # type: ignore[union-attr]
        found.setdefault(op.group(1), set()).add(shape)  # type: ignore[union-attr]
    return found


def test_the_overview_marks_each_op_with_its_own_shape_and_names_it(
    fault_sweep: SweepRun,
) -> None:
    summary = _summary(fault_sweep)
    measured = [row for row in summary.checks if row.ratio is not None]
    ops = {row.op for row in measured}
    assert len(ops) >= 2
    svg = ratio_overview(measured)
    shapes = _mark_tags(svg)
    assert set(shapes) == ops
    assert all(len(kinds) == 1 for kinds in shapes.values())  # one shape per op...
    assert len({next(iter(kinds)) for kinds in shapes.values()}) == len(ops)  # ...none shared
    for row in measured:  # every mark's tooltip names its op and check
        assert f"<title>{row.op}: {row.id}:" in svg
    legend = op_legend(op_marks(row.op for row in summary.checks))
    assert re.findall(r'data-op="([^"]*)"', legend) == list(
        dict.fromkeys(r.op for r in summary.checks)
    )
    assert 'id="op-legend"' in render_html(summary)


def test_every_op_of_many_gets_a_shape_and_shapes_repeat_only_past_ten() -> None:
    ops = [f"op{i}" for i in range(12)]
    marks = op_marks(ops + ops[:3])
    assert list(marks) == ops
    assert len(set(list(marks.values())[: len(OP_MARKS)])) == len(OP_MARKS)
    assert marks["op10"] == marks["op0"]
    legend = op_legend(marks)
    assert "op0 (1)" in legend  # past ten the legend numbers the ops...
    assert "op0 (1)" not in op_legend(op_marks(ops[:3]))  # ...and not before


def _console(summary: SweepSummary) -> str:
    from io import StringIO

    from diffcheck.sweep.console import print_summary

    stream = StringIO()
    print_summary(summary, [], stream=stream)
    return stream.getvalue()


def test_the_console_says_passed_where_it_ran_as_the_page_does(fault_sweep: SweepRun) -> None:
    summary = _summary(fault_sweep)
    passed = summary.model_copy(update={"exit_status": 0, "exit_reasons": []})
    ran = summary.counts.total - summary.counts.not_run
    line = f"Sweep passed where it ran: {ran} of {summary.counts.total} checks ran"
    assert line in _console(passed)
    assert line in render_html(passed)
    assert "Sweep passed: all" not in _console(passed)
    everything = passed.model_copy(
        update={"counts": summary.counts.model_copy(update={"not_run": 0})}
    )
    assert f"Sweep passed: all {summary.counts.total} checks ran" in _console(everything)


def test_a_pair_that_never_ran_is_one_console_row(fault_sweep: SweepRun) -> None:
    summary = _summary(fault_sweep)
    idle = [g for g in summary.groups if g.candidate == "no_such_backend"]
    assert len(idle) > 1
    rows = [line for line in _console(summary).splitlines() if "no_such_backend" in line]
    table = [line for line in rows if line.startswith("│")]
    assert len(table) == 1
    assert f"all {len(idle)} ops" in table[0]
    assert f" {sum(g.not_run for g in idle)} " in table[0]


def test_the_worst_check_is_named_by_its_shape_and_precision(fault_sweep: SweepRun) -> None:
    summary = _summary(fault_sweep)
    group = next(g for g in summary.groups if g.worst_check is not None and g.passed)
    row = next(r for r in summary.checks if r.id == group.worst_check)
    case = f"{row.shape} {row.precision}"
    assert any(case in line and group.op in line for line in _console(summary).splitlines()), case
    assert f"<td class='case'>{case}</td>" in render_html(summary)
