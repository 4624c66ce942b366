"""Shrinking's limits come from the run's own budget, and a shrink a limit stops is said.

Hypothesis stops a shrink after 300 s of wall time without a word: under a heavy load a
shrink of ``remainder`` was cut from 232 runs to 210, so the same seed gave another example.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
from hypothesis.internal.conjecture import engine

from diffcheck.search import search_api
from diffcheck.search.shrink import shrink_limits
from value_fakes import FaultyAdapter


def test_without_a_budget_a_shrink_has_no_clock_limit_and_with_one_the_budgets_rest() -> None:
    before = engine.MAX_SHRINKING_SECONDS
    with shrink_limits(None):
        assert math.inf == engine.MAX_SHRINKING_SECONDS
    with shrink_limits(time.monotonic() + 20.0):
        assert 15.0 < engine.MAX_SHRINKING_SECONDS <= 20.0
    assert before == engine.MAX_SHRINKING_SECONDS  # restored


def test_a_shrink_stopped_by_a_limit_is_recorded_with_the_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_SHRINKS", 2)  # a count limit the shrink will reach
    result = search_api(
        FaultyAdapter("ulp3"), functions=["exp"], examples=20, seed=0, out=tmp_path / "o",
        isolate=False,
    )  # fmt: skip
    (run,) = result.document.functions_tried
    assert result.document.findings
    assert run.cut is not None
    assert "shrinking stopped by Hypothesis' limit" in run.cut
    assert "max shrinks" in run.cut
    assert not run.stopped_by_time_budget  # not the budget's cut
    assert result.document.time_budget_cuts == []


def test_a_shrink_within_the_limits_records_nothing(tmp_path: Path) -> None:
    result = search_api(
        FaultyAdapter("ulp3"), functions=["exp"], examples=20, seed=0, out=tmp_path / "o",
        isolate=False,
    )  # fmt: skip
    (run,) = result.document.functions_tried
    assert result.document.findings
    assert run.cut is None
