"""Every chore of the project is a nox session: `nox -l` lists them."""

from __future__ import annotations

import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
# First-party adapter plugins, each installed from its own folder as a third party would be.
# On Linux MLX's CPU build is an extra: mlx-cpu and mlx-cuda ship the same library file, so
# the adapter cannot depend on either (see adapters/mlx/README.md).
MLX = "adapters/mlx[cpu]" if sys.platform.startswith("linux") else "adapters/mlx"
# Raw Metal needs PyObjC's Metal bindings, which exist on macOS only.
METAL = "adapters/metal[pyobjc]" if sys.platform == "darwin" else "adapters/metal"
ADAPTERS = [MLX, "adapters/wgpu", METAL, "adapters/example"]
# Op plugins, each installed from its own folder like the adapters (the example is a third
# party's op; the tests run it through run, sweep, fuzz and replay).
OP_PLUGINS = ["ops/example"]
# Examples per function of `nox -s api_search`: 35 s to 7 min on 2 cores (docs/api-search.md).
API_SEARCH_EXAMPLES = 100
# The CPU build of PyTorch that installs without a multi-gigabyte CUDA download.
TORCH_CPU = "torch==2.13.0"


def _install_project(session: nox.Session, *extras: str) -> None:
    spec = f".[{','.join(extras)}]" if extras else "."
    plugins = ADAPTERS + OP_PLUGINS
    session.install("-e", spec, *[arg for path in plugins for arg in ("-e", path)])


def _ensure_chromium(session: nox.Session) -> None:
    """Install Debian's Chromium for the HTML rendering test on CI machines (root, apt).

    Best effort: where it cannot be installed the browser test skips with that reason.
    """
    if shutil.which("chromium") or not os.environ.get("CI"):
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        session.warn("chromium is missing and cannot be installed here; the browser test will skip")
        return
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    try:
        session.run("apt-get", "update", "-qq", external=True, silent=True, env=env)
        session.run(
            "apt-get",
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
            external=True,
            silent=True,
            env=env,
        )
    except nox.command.CommandFailed:
        session.warn("installing chromium failed; the browser test will skip")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (core, adapters, sweep, API) with every CI-installable backend."""
    _install_project(session, "test", "dask", "fuzz")
    session.install("array-api-strict", TORCH_CPU)
    _ensure_chromium(session)
    session.run("pytest", *session.posargs)


@nox.session
def numerics(session: nox.Session) -> None:
    """Sweep the default matrix over every backend available here; write reports/.

    Also installs what the README's other examples need (the fuzz extra for diffcheck fuzz),
    so every command the README shows runs in this environment too.
    """
    _install_project(session, "fuzz")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = ROOT / "reports" / f"numerics-{stamp}"
    args = session.posargs or ["matrices/default.toml", "--out", str(out)]
    session.run("diffcheck", "sweep", *args)


@nox.session
def api_search(session: nox.Session) -> None:
    """Search every Array API function of MLX (CPU) against NumPy; write reports/api-search-*/.

    A new directory per run, holding findings.json, index.html and one replay bundle per
    finding (`diffcheck replay BUNDLE`). Posargs replace the default arguments.
    """
    _install_project(session, "fuzz")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = ROOT / "reports" / f"api-search-{stamp}"
    args = session.posargs or [
        "--require-backend",
        "mlx:cpu",
        "--api",
        "--examples",
        str(API_SEARCH_EXAMPLES),
        "--seed",
        "0",
        "--out",
        str(out),
    ]
    # Exit 1 means findings no known divergence explains: the search still succeeded.
    session.run("diffcheck", "fuzz", *args, success_codes=[0, 1])


@nox.session
def lint(session: nox.Session) -> None:
    """Lint and format-check with ruff."""
    session.install("ruff")
    session.run(
        "ruff",
        "check",
        "src",
        "tests",
        "adapters",
        "ops",
        "bench",
        "tools",
        "noxfile.py",
        *session.posargs,
    )
    session.run(
        "ruff",
        "format",
        "--check",
        "src",
        "tests",
        "adapters",
        "ops",
        "bench",
        "tools",
        "noxfile.py",
    )


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check src/ and the adapters with mypy --strict."""
    _install_project(session, "test", "dask")  # the pytest plugin and kit import pytest
    session.install("mypy")
    session.run(
        "mypy",
        "src",
        *[f"{path.split('[')[0]}/src" for path in ADAPTERS + OP_PLUGINS],
        *session.posargs,
    )


@nox.session
def schema(session: nox.Session) -> None:
    """Regenerate the checked-in JSON Schemas under reports/schema/."""
    _install_project(session)
    session.run("diffcheck", "schema", "--write", "reports/schema")


@nox.session
def mutants(session: nox.Session) -> None:
    """Mutation testing of the verdict path (differ, replay, runner, writer): score and survivors.

    Every mutant of the four modules by default; posargs are mutant-name globs that narrow the
    run, e.g. ``nox -s mutants -- "diffcheck.differ*" "diffcheck.runner*"``. The verdict
    counts only the mutants checked, and fails on a survivor that tests/mutants_equivalent.toml
    does not explain or on a mutant that no test reaches.
    """
    _install_project(session, "test", "fuzz")  # the selected tests fuzz and sweep in process
    session.install("array-api-strict", "mutmut==3.8.1")
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    session.run("mutmut", "run", "--max-children", str(os.cpu_count() or 1), *session.posargs)
    session.run("python", "tools/mutants_verdict.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: each prints ratios against a peer measured in the same run.

    Every script under bench/ runs: the differ against assert_allclose, torch's assert_close
    and the memory-read floor (10^5 to 10^8 elements); the on-device comparison (where CUDA
    is present; it says why not otherwise); the others' report and sweep benchmarks; and the
    API search's examples per second with calls in a worker process and in-process.
    """
    _install_project(session, "fuzz")  # the API search benchmark needs hypothesis
    session.install("array-api-strict", TORCH_CPU)
    for script in sorted((ROOT / "bench").glob("*.py")):
        session.run("python", str(script), *session.posargs)
