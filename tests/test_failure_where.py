"""Every failure line says where: the worst element by its index in the output's shape, the
segment that holds it, and the values around it (diffcheck run, replay and show)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters import resolve
from diffcheck.cli import main
from diffcheck.differ import diff
from diffcheck.differ.render import failure_line, index_in, render_text
from diffcheck.runner import run as runner
from diffcheck.testing import WrappedAdapter

CANDIDATE = "array_api_strict"
#: gemm's output is (m, n) = (4, 6); the wrong element is at row 2, column 3.
ROW, COL, M, N = 2, 3, 4, 6


def _wrong_at_2_3(values: Any, precision: Any) -> Any:
    values[ROW * N + COL] += np.float32(100.0)
    return values


@pytest.fixture
def wrong_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = WrappedAdapter(resolve(CANDIDATE), transform=_wrong_at_2_3)
    real = runner.resolve
    monkeypatch.setattr(
        runner, "resolve", lambda name: adapter if name == CANDIDATE else real(name)
    )


def _run(report: Path) -> int:
    shape = ["--m", str(M), "--n", str(N), "--k", "5"]
    return main(
        ["run", "--require-backend", CANDIDATE, "--op", "gemm", *shape, "--report", str(report)]
    )


@pytest.mark.usefixtures("wrong_candidate")
def test_run_replay_and_show_name_the_element_by_row_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    assert _run(report) == 1
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1
    (where,) = [line for line in out.splitlines() if line.startswith("where: ")]
    assert f"at [{ROW}, {COL}] (flat index {ROW * N + COL}) of output shape ({M}, {N})" in where
    # gemm judges its output whole (no segments): the line names none.
    assert "segment" not in where
    assert re.search(r"reference .*\[[-0-9.e+]+\].*; actual .*\[[-0-9.e+]+\]", where), where

    assert main(["replay", str(report)]) == 0
    out, _ = capsys.readouterr()
    assert f"{report}: agrees: failed" in out
    assert f"{report}: note: where: worst |diff|" in out
    assert f"at [{ROW}, {COL}]" in out

    assert main(["show", str(report)]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[
        0
    ] == f"{report}: gemm on {CANDIDATE} at f32, seed 0, output shape ({M}, {N})" or out.startswith(
        f"{report}: gemm on {CANDIDATE} at f32"
    )
    assert out.splitlines()[1].startswith("FAILED")
    assert (
        f"max |diff| 1.000e+02 at [{ROW}, {COL}]" in out or f"at [{ROW}, {COL}] (flat index" in out
    )
    assert f"around max |diff| at [{ROW}, {COL}]" in out


def test_a_passing_report_shows_no_failure_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    assert _run(report) == 0
    out, _ = capsys.readouterr()
    assert "where:" not in out
    assert main(["replay", str(report)]) == 0
    assert "where:" not in capsys.readouterr().out
    assert main(["show", str(report)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("PASSED")


def test_show_of_a_missing_report_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(tmp_path / "nope.json")]) == 1
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1
    assert err.startswith("diffcheck: ")


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 7), min_size=1, max_size=4).map(tuple),
    data=st.data(),
)
def test_the_index_is_the_wrong_elements_position_in_any_shape(
    shape: tuple[int, ...], data: st.DataObject
) -> None:
    position = tuple(data.draw(st.integers(0, extent - 1)) for extent in shape)
    reference = np.linspace(1.0, 2.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    actual = reference.copy()
    actual[position] += 10.0
    verdict = diff(reference, actual, max_nmse=1e-7)
    line = failure_line(verdict, shape)
    assert line is not None
    flat = int(np.ravel_multi_index(position, shape))
    assert f"at [{', '.join(map(str, position))}] (flat index {flat})" in line
    assert f"[{actual[position]:.7g}]" in line  # the wrong value, bracketed among its neighbours
    assert f"at [{', '.join(map(str, position))}]" in render_text(verdict, shape)


@pytest.mark.parametrize(
    ("flat", "shape", "expected"),
    [
        (0, (3,), "[0] (flat index 0)"),
        (7, (2, 4), "[1, 3] (flat index 7)"),
        (8, (2, 4), "flat index 8"),  # past the end: a truncated output has no such element
        (5, None, "flat index 5"),
        (5, (), "flat index 5"),
    ],
)
def test_index_in(flat: int, shape: tuple[int, ...] | None, expected: str) -> None:
    assert index_in(flat, shape) == expected


def test_the_failing_segment_is_named_when_the_worst_element_is_elsewhere() -> None:
    reference = np.concatenate([np.full(8, 1000.0), np.full(8, 1e-3)]).astype(np.float32)
    actual = reference.copy()
    actual[0] += 0.01  # the largest difference, in a segment that still passes
    actual[12] = 0.005  # a small segment gone wrong, by less than the largest difference
    verdict = diff(reference, actual, max_nmse=1e-7, segments=[("big", 0, 8), ("small", 8, 16)])
    line = failure_line(verdict, (16,))
    assert line is not None
    assert "at [0] (flat index 0)" in line
    assert "in segment big [0:8] (passed)" in line
    assert "first failing segment small: nmse" in line


def test_a_pass_has_no_failure_line() -> None:
    verdict = diff(np.ones(4), np.ones(4), max_nmse=1e-7)
    assert failure_line(verdict, (2, 2)) is None
