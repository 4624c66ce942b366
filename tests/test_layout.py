"""The package's layering: the import contracts in pyproject.toml, and that they can fail.

``nox -s lint`` runs ``lint-imports``; these tests pin what the contracts say (so deleting
or reordering one fails here), check the layering at import time without import-linter,
and, where import-linter is installed, that the contracts hold on this tree and break on a
tree with one forbidden import added back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
_PATH = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part]


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["root_package"] == "diffcheck"
    return {contract["id"]: contract for contract in config["contracts"]}


def _layer_of(layers: list[str]) -> dict[str, int]:
    """Each module's layer index, 0 at the top."""
    return {
        module.strip(): index
        for index, layer in enumerate(layers)
        for module in layer.replace(":", "|").split("|")
    }


def test_the_layers_put_each_concept_above_what_it_uses() -> None:
    contract = _contracts()["layers"]
    assert contract["type"] == "layers"
    layer = _layer_of(contract["layers"])
    above = [
        ("cli", "report"),
        ("cli", "runner"),
        ("runner", "differ"),
        ("runner", "report"),
        ("fuzz", "runner"),
        ("fuzz", "ops"),
        ("gpu_plan", "ops"),
        ("programs", "ops"),
        ("adapters", "gpu_plan"),
        ("ops", "launch"),
        ("ops", "differ"),
        ("differ", "errors"),
        ("differ", "_numbers"),
    ]
    for high, low in above:
        assert layer[f"diffcheck.{high}"] < layer[f"diffcheck.{low}"], (high, low)
    # errors and _numbers are the bottom layer: they import nothing of diffcheck.
    assert layer["diffcheck.errors"] == layer["diffcheck._numbers"] == max(layer.values())


def test_the_ops_may_not_import_their_runner_programs_or_fuzzer() -> None:
    contract = _contracts()["ops-own-their-plans"]
    assert contract["type"] == "forbidden"
    assert {"diffcheck.ops", "diffcheck.launch"} <= set(contract["source_modules"])
    assert {"diffcheck.gpu_plan", "diffcheck.programs", "diffcheck.fuzz"} <= set(
        contract["forbidden_modules"]
    )


def test_every_ignored_import_is_a_named_exception() -> None:
    """An ignore is one module's edge, never a whole package's (that would void a contract)."""
    allowed = {
        "diffcheck.ops.conformance -> diffcheck.**",
        "diffcheck.report.world -> diffcheck.runner",
        "diffcheck.api -> diffcheck.localize",
        "diffcheck.api -> diffcheck.localize._attached",
    }
    for contract in _contracts().values():
        assert set(contract.get("ignore_imports", [])) <= allowed, contract["id"]


def _loaded_after(module: str) -> set[str]:
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return set(completed.stdout.split())


@pytest.mark.parametrize(
    ("module", "not_loaded"),
    [
        ("diffcheck.ops", ("diffcheck.gpu_plan", "diffcheck.programs", "diffcheck.fuzz")),
        # (every import loads the package root first, and with it the differ)
        ("diffcheck.launch", ("diffcheck.ops", "diffcheck.gpu_plan")),
        ("diffcheck.differ", ("diffcheck.ops", "diffcheck.runner", "diffcheck.report")),
    ],
)
def test_a_lower_layer_imports_without_loading_a_higher_one(
    module: str, not_loaded: tuple[str, ...]
) -> None:
    loaded = _loaded_after(module)
    assert module in loaded
    assert not loaded & set(not_loaded)


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from importlinter.cli import lint_imports\n"
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        # The tree under test first, so grimp reads its copy of the package.
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), *_PATH])},
        capture_output=True,
        text=True,
        check=False,
    )


def test_lint_imports_keeps_every_contract() -> None:
    pytest.importorskip("importlinter", reason="import-linter is not installed (nox -s lint)")
    completed = _lint_imports(ROOT)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "0 broken" in completed.stdout


def test_the_ops_importing_the_gpu_runner_again_breaks_two_contracts(tmp_path: Path) -> None:
    """The cycle ops -> gpu_plan -> ops put back in a copy of the tree is found."""
    pytest.importorskip("importlinter", reason="import-linter is not installed (nox -s lint)")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "diffcheck",
        tmp_path / "src" / "diffcheck",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    softmax = tmp_path / "src" / "diffcheck" / "ops" / "softmax.py"
    softmax.write_text(softmax.read_text() + "\nfrom ..gpu_plan import run_op  # noqa: E402\n")
    completed = _lint_imports(tmp_path)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "2 broken" in completed.stdout
    assert "diffcheck.ops.softmax -> diffcheck.gpu_plan" in completed.stdout
