"""``sweep --resume --rerun``: a reused pass is the candidate's output only when re-run.

A forger re-stamps a passing report with other candidate bits (still a pass by their own
figures); ``--resume`` reused it as it stood. With ``--rerun`` its candidate runs again and
the pass is reused only when its stored output reproduces; without it, the page says which
passes were reused unverified.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.sweep.summary import RESUMED, RESUMED_RERUN
from forgery import output, restamp, set_output

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7] }]
"""
FIRST, SECOND = f"{STRICT}/gemm/gemm-1x3x5-f32-s42", f"{STRICT}/gemm/gemm-4x3x5-f32-s7"

Sweep = Callable[..., SweepRun]


def _forge_other_bits(path: Path) -> None:
    data = json.loads(path.read_text())
    set_output(data, "actual", output(data, "actual") * np.float32(1 + 2e-7))  # a few ULP
    restamp(data)
    assert data["result"]["status"] == "passed"
    path.unlink()
    path.write_text(json.dumps(data))


def test_resume_rerun_reuses_only_passes_whose_candidate_reproduces_them(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    _forge_other_bits(out / f"{FIRST}.json")

    plain = sweep_cli(matrix, out, "--resume")
    assert plain.code == 0
    assert plain.rows()[FIRST]["resumed"] is True
    assert plain.rows()[FIRST]["worker"] == RESUMED
    page = (out / "index.html").read_text()
    assert page.count("reused unverified (candidate not re-run)") == 2

    rerun = sweep_cli(matrix, out, "--resume", "--rerun")
    assert rerun.code == 0
    # The forged pass is not its candidate's output: set aside and run again.
    assert "re-run: stored bits do not reproduce" in rerun.err
    assert rerun.rows()[FIRST]["resumed"] is False
    assert rerun.rows()[SECOND]["resumed"] is True
    assert rerun.rows()[SECOND]["worker"] == RESUMED_RERUN
    assert "reused unverified" not in (out / "index.html").read_text()
    assert list((out / STRICT / "gemm").glob("gemm-1x3x5-f32-s42*.unverified*"))


def test_rerun_without_resume_is_one_line(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    run = sweep_cli(matrix, tmp_path / "out", "--rerun")
    assert run.code != 0
    assert run.err.count("\n") == 1
    assert "pass --resume with it" in run.err
    assert not (tmp_path / "out").exists()


MLX_LIFECYCLE = """
schema_version = 1
[[pairs]]
candidate = "mlx:cpu"
[ops.context-lifecycle]
shapes = [{ tokens = 1, intermediate = 2, k = 3 }]
"""


def test_a_lifecycle_downgraded_to_chains_is_not_reused_for_the_planned_phases(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    import pytest

    from diffcheck.adapters import resolve
    from diffcheck.ops.lifecycle import CHAIN_COVERAGE

    if not resolve("mlx:cpu").probe().is_available:
        pytest.skip("mlx:cpu is not available here")
    out = tmp_path / "out"
    assert sweep_cli(write_matrix(tmp_path, MLX_LIFECYCLE), out).code == 0
    report = next(p for p in out.rglob("context-lifecycle-*.json"))
    data = json.loads(report.read_text())
    assert "submission_phases" in data
    data.pop("submission_phases")
    data.pop("submission_metrics", None)
    data["coverage"] = CHAIN_COVERAGE
    restamp(data)
    report.unlink()
    report.write_text(json.dumps(data))
    again = sweep_cli(write_matrix(tmp_path, MLX_LIFECYCLE), out, "--resume")
    assert "it does not replay (" in again.err
    (row,) = again.rows().values()
    assert row["resumed"] is False
