"""What ``run`` says about its result, and what ``backends`` and ``ops`` list."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from diffcheck.cli import main


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    report = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
    code = main(["run", "--require-backend", "array_api_strict", "--report", str(report), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_states_the_status_and_nmse_against_the_tolerance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("array_api_strict")
    code, out, _ = _run(tmp_path, capsys, "--op", "attention")
    assert code == 0
    first, second = out.splitlines()
    assert first.startswith("Numerical check completed; report: ")  # the contract's line
    assert second.startswith("status: passed (attention on array_api_strict at f32); nmse ")
    assert " < tolerance 1e-07; " in second
    # Then how far the candidate is from what float32 can do, against the floor's multiple.
    assert re.search(r"; [0-9.e+-]+x the float32 floor [0-9.e+-]+ \(< 100x\)$", second), second


def test_a_failed_run_states_it_on_stdout_and_keeps_the_contract_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("array_api_strict")
    # A tolerance no f32 softmax can meet: the status line must say failed, with the NMSE.
    code, out, err = _run(tmp_path, capsys, "--op", "softmax", "--max-nmse", "1e-40")
    assert code == 1
    assert out.startswith("status: failed (softmax on array_api_strict at f32); nmse ")
    assert " >= tolerance 1e-40" in out
    assert "Numerical check completed" not in out
    assert err.startswith("diffcheck: NMSE ")
    assert len(err.splitlines()) == 1


def test_a_not_run_check_says_not_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("array_api_strict")
    code, out, _ = _run(tmp_path, capsys, "--op", "gemm", "--precision", "bf16")
    assert code == 1
    assert out.strip() == "status: not_run (gemm on array_api_strict at bf16); not measured"


def test_backends_lists_array_api_libraries_without_importing_them() -> None:
    code = (
        "import sys\n"
        "from diffcheck.cli import main\n"
        "assert main(['backends']) == 0\n"
        "heavy = [m for m in ('torch', 'jax', 'cupy', 'dask', 'array_api_strict') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    for name in ("torch", "cupy", "jax", "dask", "array_api_strict"):
        assert name in rows, name
    assert rows["cupy"].split()[1] == "unavailable"
    assert "cupy is not installed; install it (pip install cupy)" in rows["cupy"]
    assert rows["array_api_strict"].split()[1] == "installed"
    assert "'diffcheck backends --all' probes it" in rows["array_api_strict"]
    assert rows["numpy"].split()[1] == "available"  # registered adapters are still probed


def test_ops_lists_every_op_with_its_source_and_own_tolerances(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert (
        "softmax (diffcheck-numerics): --tokens 4 --dim 256 --causal false --temperature 1.0" in out
    )
    assert "    default --max-nmse: f16 4e-06, bf16 0.0004 (others by precision)" in out
    assert "attention (diffcheck-numerics): " in out
    assert "--causal true" in out
    assert "context-lifecycle (alias metal-context) (diffcheck-numerics): " in out


def test_the_numerics_session_installs_what_the_readme_examples_need() -> None:
    # The README shows `diffcheck fuzz`, which needs Hypothesis (the fuzz extra): the
    # session that the README sends users to must install it, or the example fails there.
    import ast
    import tomllib

    root = Path(__file__).parents[1]
    assert "diffcheck fuzz --require-backend" in (root / "README.md").read_text()
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(dep.startswith("hypothesis") for dep in extras["fuzz"])
    tree = ast.parse((root / "noxfile.py").read_text())
    numerics = next(
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "numerics"
    )
    installs = [
        [arg.value for arg in call.args if isinstance(arg, ast.Constant)]
        for call in ast.walk(numerics)
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "_install_project"
    ]
    assert installs == [["fuzz"]]
