"""Issue 34 U3: planning is bounded by the memory budget before a check is planned.

Planning 10^6 checks (allowed by ``--max-checks``) took 4 GB, 570 times the matrix file. A
sweep holds every planned check, its row and its page entries for the whole run, so the count
a matrix expands to (computed without expanding it) is now refused past the budget, in one
line, holding little more than the parsed matrix.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from diffcheck import memory
from diffcheck.errors import ConfigError
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.plan import plan_matrix

from ._harness import assert_refused, cli


def _matrix(tmp_path: Path, seeds: int) -> Path:
    path = tmp_path / "m.toml"
    listed = ",".join(str(i) for i in range(seeds))
    path.write_text(
        'schema_version = 1\n[[pairs]]\ncandidate = "array_api_strict"\n'
        f"[[ops.gemm.shapes]]\nm = 2\nn = 2\nk = 2\nseeds = [{listed}]\n"
    )
    return path


@pytest.fixture
def small_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 MiB available: a budget of 100 MiB, room for about 25,000 planned checks.
    monkeypatch.setattr(memory, "available_memory", lambda: 200 * 2**20)


@pytest.mark.usefixtures("small_machine")
def test_a_sweep_past_the_budget_is_refused_before_planning(tmp_path: Path) -> None:
    matrix = load_matrix(_matrix(tmp_path, 100_000))
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="100000 checks, which a sweep holds in about"):
            plan_matrix(matrix, max_checks=10**6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


@pytest.mark.usefixtures("small_machine")
def test_the_cli_says_it_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    path = _matrix(tmp_path, 100_000)
    code, _, err = cli(
        ["sweep", str(path), "--out", str(tmp_path / "out"), "--max-checks", "1000000"]
    )
    assert_refused(code, err)
    assert "budget" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.usefixtures("small_machine")
def test_a_sweep_within_the_budget_plans(tmp_path: Path) -> None:
    assert len(plan_matrix(load_matrix(_matrix(tmp_path, 1000))).checks) == 1000
