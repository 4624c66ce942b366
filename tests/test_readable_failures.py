"""A failure as a person reads it: figures at three significant digits, and from ``compare``
the pair, the precision, the default tolerance and the next step.

Reports keep the contract's reasons (Rust ``Display``: ``0.0000000000001666267867029068``),
which replay re-derives; every view rounds them through :func:`diffcheck._numbers.rounded`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import diffcheck
from diffcheck._numbers import rust_display, short_float
from diffcheck.cli import main
from diffcheck.differ.render import render_html, render_text
from diffcheck.text import rounded

_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+")


class _Long:
    """What no reason may show: a decimal with five or more digits after the point that
    is not exact in four significant digits (``0.0000000000001666``, ``3.14159``; the
    tables' ``1.000e+00`` has four, and ``1.9375``, an exact max_abs, is short enough)."""

    @staticmethod
    def search(text: str) -> str | None:
        for match in _DECIMAL.finditer(text):
            after = match.group().partition(".")[2]
            if len(after) >= 5 and len(match.group().replace(".", "").lstrip("0")) > 4:
                return match.group()
        return None


LONG = _Long()


def _reason_lines(text: str) -> list[str]:
    """The lines of a view that state a reason (the values around an index are values, at
    float32's digits, not figures)."""
    # A bar's hover title keeps the exact figures, on purpose.
    text = re.sub(r' title="[^"]*"', "", text)
    return [line for line in text.splitlines() if "NMSE" in line or "tolerance" in line]


_FIGURES = st.floats(min_value=1e-300, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(_FIGURES)
def test_a_contract_decimal_is_shown_at_three_significant_digits(value: float) -> None:
    text = f"NMSE {rust_display(value)} is not below tolerance 0.0000001; max_abs=2"
    shown = rounded(text)
    assert LONG.search(shown) is None, shown
    figure = shown.split()[1]
    assert math.isclose(float(figure), value, rel_tol=5e-3)
    assert figure == short_float(value) or figure == rust_display(value)  # short ones stay


@pytest.mark.parametrize("kept", ["at 4607182418800017408", "n=32768", "2840.5", "[3, 4]"])
def test_integers_and_short_decimals_are_left_alone(kept: str) -> None:
    assert rounded(kept) == kept


@given(
    st.floats(min_value=1e-3, max_value=1e3),
    st.floats(min_value=1e-30, max_value=1e-8),
    st.sampled_from([1, 2, 4, 8]),
)
def test_no_view_of_a_failed_verdict_shows_a_long_decimal(
    scale: float, tolerance: float, segments: int
) -> None:
    reference = np.linspace(1.0, 2.0, 64)
    verdict = diffcheck.diff(
        reference, reference * (1 + scale), max_nmse=tolerance, segments=segments
    )
    assert not verdict.passed
    assert verdict.reason is not None
    assert "NMSE " in verdict.reason
    for view in (render_text(verdict), render_html(verdict), str(verdict)):
        lines = _reason_lines(view)
        assert lines
        assert [line for line in lines if LONG.search(line)] == [], view


def test_show_rounds_a_stored_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("array_api_strict")
    report = tmp_path / "r.json"
    args = ["--require-backend", "array_api_strict", "--op", "softmax", "--max-nmse", "1e-40"]
    assert main(["run", *args, "--report", str(report)]) == 1
    stored = report.read_text()
    assert "0.0000000000000000000000000000000000000001" in stored  # the contract's digits
    capsys.readouterr()
    assert main(["show", str(report)]) == 0
    out = capsys.readouterr().out
    assert "reason: NMSE 4.83e-15 is not below tolerance 1e-40" in out or "tolerance 1e-40" in out
    assert [line for line in _reason_lines(out) if LONG.search(line)] == [], out


@pytest.fixture
def strict() -> str:
    pytest.importorskip("array_api_strict")
    return "array_api_strict"


def _off(xp: object, x: object) -> object:
    # A candidate that is wrong by 1e-3 relative: a measured error, not a shape.
    return x * (1.0 if "numpy" in getattr(xp, "__name__", "") else 1.001)  # type: ignore[operator]


def test_a_failed_compare_names_the_pair_precision_and_the_next_step(strict: str) -> None:
    x = np.linspace(1.0, 2.0, 256)
    verdict = diffcheck.compare(_off, x, candidate=strict, precision="f32")
    assert not verdict.passed
    assert verdict.reason is not None
    assert verdict.reason.startswith(f"{strict} at f32 against numpy: NMSE ")
    assert verdict.reason.endswith(
        "; locate=True names the call inside the function that went wrong"
    )
    assert "given" not in verdict.reason  # the default tolerance: nothing to say
    assert LONG.search(verdict.reason) is None, verdict.reason


def test_a_given_tolerance_is_set_beside_the_precisions_default(strict: str) -> None:
    x = np.linspace(1.0, 2.0, 256)
    verdict = diffcheck.compare(_off, x, candidate=strict, max_nmse=1e-15)
    assert verdict.reason is not None
    assert "is not below tolerance 1e-15" in verdict.reason
    assert "; tolerance 1e-15 given, f32's default is 1e-07" in verdict.reason


def test_with_locate_the_next_step_is_not_offered_again(strict: str) -> None:
    pytest.importorskip("mlx.core")
    x = np.linspace(1.0, 2.0, 256)
    verdict = diffcheck.compare(
        lambda xp, v: xp.exp(v), x, candidate="mlx:cpu", mode="nmse", max_nmse=1e-30, locate=True
    )
    assert verdict.reason is not None
    assert verdict.reason.startswith("mlx:cpu at f32 against numpy: ")
    assert "locate=True" not in verdict.reason


def test_a_passed_compare_has_no_reason(strict: str) -> None:
    verdict = diffcheck.compare(lambda xp, v: v * 2, np.ones(8), candidate=strict)
    assert verdict.passed
    assert verdict.reason is None


_FAILING_MATRIX = """
schema_version = 1
description = "one check no float32 softmax can pass"
[defaults]
seeds = [42]
precisions = ["f32"]
max_nmse = 1e-40
[[pairs]]
reference = "numpy"
candidate = "array_api_strict"
[ops.softmax]
shapes = [{ tokens = 2, dim = 33 }]
"""


def test_the_sweep_console_and_page_round_reasons(
    strict: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(_FAILING_MATRIX)
    out = tmp_path / "out"
    assert main(["sweep", str(matrix), "--out", str(out), "--quiet", "--jobs", "1"]) == 1
    console = capsys.readouterr().out
    assert "failed numpy -> array_api_strict" in console or "failed " in console
    assert "is not below tolerance 1e-40" in console
    assert [line for line in _reason_lines(console) if LONG.search(line)] == [], console
    page = (out / "index.html").read_text()
    assert "is not below tolerance 1e-40" in page
    # Where it failed, as diffcheck show says it: the worst element by [row, col].
    report = next(out.rglob("softmax-*.json"))
    main(["show", str(report)])  # its exit status is replay's business, not this test's
    shown = next(line for line in capsys.readouterr().out.splitlines() if "max |diff|" in line)
    index = re.search(r"at (\[\d+, \d+\])", shown)
    assert index is not None
    assert "<div class='where'>where: worst |diff| " in page
    assert f"at {index.group(1)} (flat index" in page.split("<div class='where'>")[1]


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0"), (1515, "1515"), (999_999, "999999"), (4607182418800017408, "4.61e+18")],
)
def test_a_ulp_count_is_exact_until_it_is_astronomical(count: int, shown: str) -> None:
    from diffcheck.text import ulps

    assert ulps(count) == shown


def test_a_float64_verdict_across_zero_shows_its_ulps_shortly() -> None:
    verdict = diffcheck.diff(
        np.array([1.0, 2.0]), np.array([0.0, 2.0]), max_nmse=1e-7, ulp_dtype="f64"
    )
    assert verdict.metrics is not None
    assert verdict.metrics.max_ulp > 10**18  # the exact count stays in the metrics
    assert str(verdict.metrics.max_ulp) not in render_text(verdict)
    assert "e+18 ulp" in render_text(verdict)
