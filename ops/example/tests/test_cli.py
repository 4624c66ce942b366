"""The installed ``gelu`` plugin through the CLI: run, replay, a sweep matrix and fuzz --op.

Nothing in diffcheck's core names ``gelu``: the op arrives only through this package's
``diffcheck.ops`` entry point, so these tests fail if the plugin path breaks anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diffcheck.cli import main
from diffcheck.ops import OPS

CANDIDATE = "array_api_strict"


@pytest.fixture(autouse=True)
def _strict() -> None:
    pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")


def test_ops_lists_it_with_its_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ops"]) == 0
    listing = capsys.readouterr().out
    assert "gelu (diffcheck-example-ops): --tokens 4 --dim 256\n" in listing
    assert OPS.source("gelu").package == "diffcheck-example-ops"


def test_run_writes_a_report_that_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "gelu.json"
    argv = ["run", "--require-backend", CANDIDATE, "--op", "gelu", "--tokens", "3"]
    assert main([*argv, "--dim", "258", "--report", str(report)]) == 0, capsys.readouterr().err
    document = json.loads(report.read_text())
    assert document["config"]["op"] == "gelu"
    assert document["result"]["op"] == "gelu_tanh"
    assert document["result"]["status"] == "passed"
    assert [s["name"] for s in document["segments"]] == ["gate", "up"]
    assert main(["replay", "--require-pass", str(report)]) == 0
    assert "agrees: passed" in capsys.readouterr().out
    odd = tmp_path / "odd.json"
    assert main([*argv, "--dim", "7", "--report", str(odd)]) == 1
    assert capsys.readouterr().err.strip() == "diffcheck: GELU dim must be even (two halves), not 7"
    assert not odd.exists()


def test_a_sweep_matrix_runs_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = tmp_path / "gelu.toml"
    matrix.write_text(
        "schema_version = 1\n"
        f'[[pairs]]\ncandidate = "{CANDIDATE}"\n'
        "[ops.gelu]\nshapes = [{ tokens = 3, dim = 258 }]\n"
    )
    out = tmp_path / "out"
    code = main(["sweep", str(matrix), "--out", str(out), "--jobs", "1"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert [(c["op"], c["status"]) for c in summary["checks"]] == [("gelu", "passed")]
    report = out / f"{summary['checks'][0]['report']}"
    assert main(["replay", str(report if report.is_absolute() else out / report)]) == 0


def test_fuzz_draws_its_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["fuzz", "--require-backend", CANDIDATE, "--op", "gelu", "--examples", "5"]
    assert main([*argv, "--max-elements", "4000"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("fuzz: 5 examples of gelu on array_api_strict passed")


def test_the_python_api_runs_it_and_a_wrong_answer_fails(tmp_path: Path) -> None:
    import diffcheck
    from diffcheck.adapters import resolve
    from diffcheck.config import make_check
    from diffcheck.report.replay import replay
    from diffcheck.runner import run_check
    from diffcheck.testing import perturb

    document = diffcheck.run(
        {"require_backend": CANDIDATE, "op": "gelu", "tokens": 2, "dim": 10},
        report=tmp_path / "api.json",
    )
    assert document.result is not None
    assert document.result.status == "passed"
    # The `up` half scaled: only that segment fails, and the report says so and replays.
    check = make_check(CANDIDATE, "gelu", tokens=4, dim=256)
    wrong = run_check(check, candidate=perturb(resolve(CANDIDATE), "scale_segment"))
    assert wrong.result is not None
    assert wrong.result.status == "failed"
    assert {s.name: s.status for s in wrong.segments or []} == {"gate": "passed", "up": "failed"}
    assert replay(wrong).agrees
