"""``diffcheck replay --require-pass`` means one thing for a report and a sweep directory:
every check passed; a failure with a known divergence only with ``--allow-known``.

The sweep directory's flag followed the sweep's exit status, which excuses a known
divergence: over a directory whose only check failed (known), it exited 0 while the same
flag on that check's report exited 1.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.adapters import KnownDivergence
from diffcheck.adapters.array_api import ArrayApiAdapter
from diffcheck.cli import main

GEMM = KnownDivergence(
    ops=("gemm",),
    precisions=("f32",),
    reason="test-only: a tolerance below float32 rounding",
    upstream="https://example.org/issues/1",
    max_nmse=1e-10,
    measured_nmse=1e-11,
    bound_source="test-only: float32 rounding of a 35-term dot product stays far below it",
    twin="float32",
)
#: One check, a measured gemm failure (tolerance 1e-30) that GEMM explains.
ONLY_KNOWN = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
required = true
[ops.gemm]
shapes = [{ m = 64, n = 33, k = 35, seeds = [7], max_nmse = 1e-30 }]
"""
FAILS = f"{STRICT}/gemm/gemm-64x33x35-f32-s7"


@pytest.fixture
def declares_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    """array_api_strict declares GEMM, in this process only (workers need not know)."""
    monkeypatch.setattr(ArrayApiAdapter, "known_divergences", lambda self: (GEMM,))


@pytest.mark.usefixtures("declares_gemm")
def test_require_pass_is_one_rule_for_a_report_and_its_directory(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun], capsys: pytest.CaptureFixture[str]
) -> None:
    run = sweep_cli(write_matrix(tmp_path, ONLY_KNOWN), tmp_path / "out")
    assert run.code == 0  # the sweep itself excuses a known divergence
    assert run.summary["counts"]["known"] == 1
    directory, report = str(run.directory), str(run.directory / f"{FAILS}.json")
    for target in (report, directory):
        assert main(["replay", target]) == 0
        capsys.readouterr()
        assert main(["replay", "--require-pass", target]) == 1, target
        capsys.readouterr()
        assert main(["replay", "--require-pass", "--allow-known", target]) == 0, target
        capsys.readouterr()
    main(["replay", "--require-pass", directory])
    assert f"not a pass: {FAILS}: known" in capsys.readouterr().err


def test_allow_known_never_accepts_an_undeclared_failure(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun], capsys: pytest.CaptureFixture[str]
) -> None:
    run = sweep_cli(write_matrix(tmp_path, ONLY_KNOWN), tmp_path / "out")
    assert run.code == 1  # nothing declares it: a plain failure
    capsys.readouterr()
    for target in (run.directory / f"{FAILS}.json", run.directory):
        assert main(["replay", "--require-pass", "--allow-known", str(target)]) == 1
        capsys.readouterr()
