"""The sweep page says what it knows: no green pass over checks that did not run, no
"exit 0" beside a failure, short numbers, and one not_run reason said once."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diffcheck.sweep.html import render_html, rounded
from diffcheck.sweep.summary import SweepSummary

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
    cells = re.findall(r"<td class='num'>([^<]*)(?:<br>[^<]*)?</td>", page)
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
