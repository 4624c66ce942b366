"""diffcheck.reduce: a located divergence as the fewest calls that still diverge, as a script.

Every script here is run as written, in a fresh interpreter, with only the namespaces it
imports on the path: it must say ``reproduced`` and exit 1.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.errors import ConfigError
from localize_fakes import BuggyAdapter, FusedAdapter, SqrtAdapter

TESTS = Path(__file__).parents[1]
ROOT = TESTS.parent
RNG = np.random.default_rng(5)


def _run(script: Path) -> subprocess.CompletedProcess[str]:
    """The script in a fresh interpreter: the tests folder on the path (for the fake
    namespace module), nothing of diffcheck's imported by it."""
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )


def _imports(script: Path) -> set[str]:
    tree = ast.parse(script.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
    return found


def fused_program(xp: Any, x: Any, w: Any) -> Any:
    h = xp.matmul(x, w)[1:, ::2].T
    e = xp.exp(h)  # the divergence shows here, and only after the matmul
    return xp.sum(e, axis=0)


def test_a_bug_that_needs_its_producers_is_reduced_to_the_chain_that_feeds_it(
    tmp_path: Path,
) -> None:
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    w = RNG.standard_normal((8, 6)).astype(np.float32)
    located = diffcheck.locate(fused_program, x, w, candidate=FusedAdapter())
    assert located.first_wrong is None  # exp alone on the reference's inputs is right
    assert located.first_drift is not None
    assert located.first_drift.function == "exp"
    reduction = diffcheck.reduce(fused_program, x, w, candidate=FusedAdapter())
    assert reduction.target.function == "exp"
    assert reduction.prefix == 4  # the sum after it is not part of the program
    assert [c.function for c in reduction.calls] == ["matmul", "__getitem__", "T", "exp"]
    script = reduction.write(tmp_path / "fused_repro.py")
    assert _imports(script) == {
        "sys",
        "pathlib",
        "typing",
        "numpy",
        "array_api_compat.numpy",
        "localize_fused_ns",
    }
    assert set(np.load(script.with_suffix(".npz"))) == {"a0", "a1"}  # x and w
    run = _run(script)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("reproduced: "), run.stdout


def test_a_namespace_that_is_no_importable_module_is_one_config_error() -> None:
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    w = RNG.standard_normal((8, 8)).astype(np.float32)

    def program(xp: Any, x: Any, w: Any) -> Any:
        h = xp.exp(x * 0.5)  # right on any inputs
        return xp.sum(xp.matmul(h, w), axis=-1)

    # BuggyAdapter's namespace is an object, not a module a script could import.
    located = diffcheck.locate(program, x, w, candidate=BuggyAdapter("matmul-square-transpose"))
    assert located.first_wrong is not None
    assert located.first_wrong.function == "matmul"
    with pytest.raises(ConfigError, match="is not an importable module"):
        diffcheck.reduce(program, x, w, candidate=BuggyAdapter("matmul-square-transpose"))


def test_an_elementwise_call_keeps_only_the_elements_beyond_its_bound(tmp_path: Path) -> None:
    x = np.linspace(0.5, 9.5, 40).astype(np.float32).reshape(4, 10)

    def program(xp: Any, x: Any) -> Any:
        return xp.sum(xp.sqrt(x * 2.0), axis=0)

    reduction = diffcheck.reduce(program, x, candidate=SqrtAdapter())
    assert [c.function for c in reduction.calls] == ["sqrt"]
    doubled = x * 2.0
    root = np.sqrt(doubled)
    beyond = int(np.count_nonzero((doubled > 4) & (np.nextafter(root, np.inf) != root)))
    assert reduction.elements == (beyond, 40)
    script = reduction.write(tmp_path / "sqrt_repro.py")
    stored = np.load(script.with_suffix(".npz"))["a0"]
    assert stored.shape == (beyond,)
    assert bool((stored > 4).all())  # only the arguments the bug touches
    assert f"on the {beyond} of its 40 elements beyond the bound" in script.read_text()
    run = _run(script)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith(f"reproduced: {beyond} of {beyond} elements beyond 0 ULP")


def test_a_clean_program_has_nothing_to_reduce() -> None:
    x = RNG.standard_normal(8).astype(np.float32)
    with pytest.raises(ConfigError) as caught:
        diffcheck.reduce(lambda xp, x: xp.exp(x), x, candidate="array_api_strict")
    assert "\n" not in str(caught.value)
    assert "no call of the program diverges on array_api_strict" in str(caught.value)


def test_a_path_split_with_no_wrong_call_before_it_is_named_in_the_refusal() -> None:
    from types import SimpleNamespace

    from diffcheck.adapters import resolve
    from diffcheck.localize._repro import reduce_on

    split = SimpleNamespace(first_wrong=None, first_drift=None, path_split=SimpleNamespace(index=3))
    strict = resolve("array_api_strict")
    with pytest.raises(ConfigError) as caught:
        reduce_on(lambda xp: None, (), resolve("numpy"), strict, split)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "no call of the program diverges on array_api_strict; the two sides took different "
        "paths at call 3, which a script of the calls cannot reproduce; there is nothing to "
        "reduce"
    )


def test_a_repro_is_never_written_over_an_existing_file(tmp_path: Path) -> None:
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    w = RNG.standard_normal((8, 6)).astype(np.float32)
    reduction = diffcheck.reduce(fused_program, x, w, candidate=FusedAdapter())
    first = reduction.write(tmp_path / "repro.py")
    before = first.read_text(), first.with_suffix(".npz").read_bytes()
    with pytest.raises(ConfigError, match=r"repro\.py exists already"):
        reduction.write(first)
    (tmp_path / "only.npz").write_bytes(b"")
    with pytest.raises(ConfigError, match=r"only\.npz exists already"):
        reduction.write(tmp_path / "only.py")
    assert not (tmp_path / "only.py").exists()
    assert (first.read_text(), first.with_suffix(".npz").read_bytes()) == before


@pytest.mark.parametrize("candidate", ["mlx:cpu"])
def test_a_real_mlx_deviation_is_reduced_and_reproduces_as_written(
    candidate: str, tmp_path: Path
) -> None:
    pytest.importorskip("mlx.core")

    def mlp(xp: Any, x: Any, w1: Any, w2: Any) -> Any:
        h = xp.matmul(x, w1)
        h = xp.exp(h * 0.1)  # MLX computes float64 exp at float32 precision
        return xp.sum(h @ w2, axis=-1)

    rng = np.random.default_rng(0)
    x, w1, w2 = (
        rng.standard_normal((4, 8)),
        rng.standard_normal((8, 8)),
        rng.standard_normal((8, 3)),
    )
    reduction = diffcheck.reduce(mlp, x, w1, w2, candidate=candidate)
    assert [c.function for c in reduction.calls] == ["exp"]
    assert reduction.prefix == 3
    script = reduction.write(tmp_path / "mlx_exp.py")
    assert "import mlx.core as candidate_xp" in script.read_text()
    assert reduction.elements is None  # every element is off: all are kept
    run = _run(script)
    assert (run.returncode, run.stdout.split(":")[0]) == (1, "reproduced"), run.stderr


def test_the_committed_mlx_repro_runs_as_written() -> None:
    pytest.importorskip("mlx.core")
    script = ROOT / "docs" / "repros" / "mlx_float32_exp.py"
    assert not any("diffcheck" in name for name in _imports(script))
    run = _run(script)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("reproduced: "), run.stdout
    assert "beyond 2 ULP" in run.stdout


def test_the_script_check_is_the_values_models_ulp_distance() -> None:
    # The script carries its own ULP distance (no diffcheck import): it must be the model's.
    from diffcheck.localize._repro_check import beyond, ulp_gap
    from diffcheck.values.ulp import ulp_distance

    rng = np.random.default_rng(7)
    for dtype in ("float16", "float32", "float64"):
        a = (rng.standard_normal(4000) * 10.0 ** rng.integers(-2, 3, 4000)).astype(dtype)
        b = np.nextafter(a, np.asarray(np.inf, dtype))
        b = np.where(rng.random(4000) < 0.5, -a, b).astype(dtype)  # opposite signs too
        b[:10] = a[:10]
        assert np.array_equal(ulp_gap(a, b), ulp_distance(a, b, dtype)), dtype
        assert beyond(a, a.copy(), "ulp", 0, 0, None)[0] is False
        assert beyond(a, b, "ulp", 0, 0, None)[0] is True
