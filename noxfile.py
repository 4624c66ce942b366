"""Every chore of the project is a nox session: `nox -l` lists them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True
# uv builds a session's environment in seconds where pip takes a minute or more (the test
# environment: 7 s against 60-70 s on the 2-core machine); plain virtualenv and pip where uv
# is not installed.
nox.options.default_venv_backend = "uv|virtualenv"

ROOT = Path(__file__).parent
# Plugin folders: every adapters/*/ and ops/*/ holding a pyproject.toml is installed from its
# own folder, as a third party's would be. Adding a folder needs no edit here.
PLUGIN_PARENTS = ("adapters", "ops")
# Extras a plugin needs on one platform. On Linux MLX's CPU build is an extra: mlx-cpu and
# mlx-cuda ship the same library file, so the adapter cannot depend on either (see
# adapters/mlx/README.md). Raw Metal needs PyObjC's Metal bindings, which exist on macOS only.
PLATFORM_EXTRAS = {
    "linux": {"adapters/mlx": "cpu"},
    "darwin": {"adapters/metal": "pyobjc"},
}
# Where `nox -s dev` builds the development environment with the `diffcheck` command.
DEV_VENV = ROOT / ".venv"
# What the README's examples need besides the plugins (the values-mode example's candidate).
EXAMPLE_EXTRAS = ("array-api-strict",)


def plugin_folders(root: Path = ROOT) -> list[str]:
    """Every plugin folder under ``root`` (``adapters/mlx``, ``ops/example``...), sorted."""
    return sorted(
        path.parent.relative_to(root).as_posix()
        for parent in PLUGIN_PARENTS
        for path in (root / parent).glob("*/pyproject.toml")
    )


def plugin_specs(root: Path = ROOT, platform: str = sys.platform) -> list[str]:
    """Each plugin folder as a pip requirement, with the extras ``platform`` needs."""
    key = "linux" if platform.startswith("linux") else platform
    extras = PLATFORM_EXTRAS.get(key, {})
    return [
        f"{folder}[{extras[folder]}]" if folder in extras else folder
        for folder in plugin_folders(root)
    ]


def install_args(*extras: str, root: Path = ROOT, platform: str = sys.platform) -> list[str]:
    """``pip install`` arguments for the core (editable, with ``extras``) and every plugin."""
    spec = f".[{','.join(extras)}]" if extras else "."
    return ["-e", spec, *[arg for path in plugin_specs(root, platform) for arg in ("-e", path)]]


# Examples per function of `nox -s api_search`: 35 s to 7 min on 2 cores (docs/api-search.md).
API_SEARCH_EXAMPLES = 100
# The CPU build of PyTorch that installs without a multi-gigabyte CUDA download.
TORCH_CPU = "torch==2.13.0"


def _install_project(session: nox.Session, *extras: str) -> None:
    session.install(*install_args(*extras))


def find_links_args(backend: str | None, pip_config: str) -> list[str]:
    """pip's find-links as ``--find-links`` arguments for uv, which reads no pip
    configuration. A machine may keep wheels PyPI lacks in such a folder (the CPU build of
    torch): without it uv would take PyPI's CUDA build of several GB. pip needs no argument.

    ``pip_config`` is what ``pip config list`` prints: every ``find-links`` entry, from a
    configuration file or ``PIP_FIND_LINKS`` (``:env:.find-links``); uv searches them all.
    """
    if backend != "uv":
        return []
    links: list[str] = []
    for line in pip_config.splitlines():
        key, _, value = line.partition("=")
        if key.rsplit(".", 1)[-1] == "find-links":
            links += [link for link in value.strip("'\"").split() if link not in links]
    return [arg for link in links for arg in ("--find-links", link)]


def _pip_config(python: str = sys.executable) -> str:
    """What ``pip config list`` prints for ``python`` (nox's own interpreter, which pip
    installed nox into), or nothing where pip cannot say."""
    try:
        listing = subprocess.run(
            [python, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return listing.stdout


def _install_with_torch(session: nox.Session, *names: str) -> None:
    """Install ``names`` and the CPU build of torch."""
    uv = session.venv_backend == "uv"  # pip reads its own configuration: nothing to ask
    links = find_links_args(session.venv_backend, _pip_config() if uv else "")
    session.install(*names, TORCH_CPU, *links)


# Debian's Chromium for the HTML rendering test, installed on CI machines (root, apt).
CHROMIUM_APT = (
    "apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null"
)


def _start_chromium_install(session: nox.Session) -> subprocess.Popen[bytes] | None:
    """Start installing Chromium in the background, so apt's download overlaps the Python
    installs; `_finish_chromium_install` waits for it before the tests.

    Best effort: where it cannot be installed the browser test skips with that reason.
    """
    if shutil.which("chromium") or not os.environ.get("CI"):
        return None
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        session.warn("chromium is missing and cannot be installed here; the browser test will skip")
        return None
    session.log("installing chromium in the background (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.Popen(["sh", "-c", CHROMIUM_APT], env=env)


def _finish_chromium_install(session: nox.Session, apt: subprocess.Popen[bytes] | None) -> None:
    if apt is not None and apt.wait() != 0:
        session.warn("installing chromium failed; the browser test will skip")


def _suite(session: nox.Session, *pytest_args: str) -> None:
    """The test environment (core, plugins, torch CPU, array-api-strict), then pytest."""
    apt = _start_chromium_install(session)
    _install_project(session, "test", "dask", "fuzz")
    _install_with_torch(session, "array-api-strict")
    _finish_chromium_install(session, apt)
    # Where PYTHONDONTWRITEBYTECODE is set (as on some CI images) every xdist worker and every
    # test's subprocess compiles diffcheck and rewrites the test modules' asserts anew: about
    # a tenth of the suite's CPU time. The bytecode lands in ignored __pycache__ folders.
    session.run("pytest", *XDIST_ARGS, *pytest_args, env={"PYTHONDONTWRITEBYTECODE": None})


# pytest-xdist's scheduler for the suite: a worker that runs out of tests takes the queued
# ones of the other, so a few long property tests near the end do not leave a core idle.
XDIST_ARGS = ("-n", "auto")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (core, adapters, sweep, API) with every CI-installable backend.

    The ``exhaustive`` variants are deselected (pyproject's addopts); `nox -s tests_full`
    runs them too.
    """
    # One worker per core; posargs come later, so `-- -n 0` runs in one process.
    _suite(session, *session.posargs)


@nox.session
def tests_full(session: nox.Session) -> None:
    """The test suite with its ``exhaustive`` variants: every function, value and seed that
    the default run covers with one representative per code path (posargs to pytest)."""
    _suite(session, "-m", "exhaustive or not exhaustive", *session.posargs)


# Where Chromium is looked for by `nox -s pages` (and by tests/pages/conftest.py).
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser")
CHROMIUM_HINT = (
    "Chromium is missing: the pages session drives it through Playwright. Install it with "
    "`apt-get install -y chromium` (Debian/Ubuntu, as root), or point DIFFCHECK_CHROMIUM at "
    "a Chromium binary, then run `nox -s pages` again"
)


def find_chromium() -> str | None:
    """``$DIFFCHECK_CHROMIUM``, /usr/bin/chromium, or a Chromium on PATH."""
    chosen = os.environ.get("DIFFCHECK_CHROMIUM")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return next((found for name in CHROMIUM_CANDIDATES if (found := shutil.which(name))), None)


@nox.session
def pages(session: nox.Session) -> None:
    """Open the sweep and API-search pages of small real runs in headless Chromium.

    tests/pages at 1280 and 1920 px: no overflow, no cut text, the summary first. Needs the
    system's Chromium (not installed here: it needs root); fails, saying how to install it,
    when it is missing. Screenshots go to reports/pages/ (posargs go to pytest).
    """
    chromium = find_chromium()
    if chromium is None:
        session.error(CHROMIUM_HINT)
    _install_project(session, "test", "fuzz", "pages")
    session.install("array-api-strict")
    session.run(
        "pytest",
        "tests/pages",
        "-p",
        "no:cacheprovider",
        *session.posargs,
        env={
            "DIFFCHECK_CHROMIUM": chromium,
            # A skip here would be a silent pass: a missing browser fails instead.
            "DIFFCHECK_PAGES_REQUIRED": "1",
            "DIFFCHECK_PAGES_SHOTS": str(ROOT / "reports" / "pages"),
        },
    )


def dev_commands(
    venv: Path = DEV_VENV, python: str = sys.executable, uv: str | None = None
) -> list[list[str]]:
    """The commands `nox -s dev` runs: a venv at ``venv``, then everything installed into it.

    With ``uv`` (its path; where it is installed, as for the other sessions) uv builds it in
    seconds, seeded with pip so the activated environment has one; otherwise venv and pip.
    """
    everything = [*install_args("test", "fuzz", "dask"), *EXAMPLE_EXTRAS]
    if uv is not None:
        target = ["--python", str(venv / "bin" / "python")]
        return [
            [uv, "venv", "--seed", "--allow-existing", "--python", python, str(venv)],
            [uv, "pip", "install", "-q", *target, *everything],
        ]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    return [
        [python, "-m", "venv", str(venv)],
        [*pip, "--upgrade", "pip"],
        [*pip, *everything],
    ]


@nox.session(venv_backend="none")
def dev(session: nox.Session) -> None:
    """Build .venv for development: editable core and every plugin, so `diffcheck` is on PATH.

    `nox -s dev && . .venv/bin/activate` gives the `diffcheck` command of this tree; a rerun
    updates the environment in place.
    """
    for command in dev_commands(uv=shutil.which("uv")):
        session.run(*command, external=True)
    session.log(f"done: activate with `. {DEV_VENV.relative_to(ROOT)}/bin/activate`")


@nox.session
def hostile(session: nox.Session) -> None:
    """The hostile-input property suite at nightly size (200,000 cases; posargs to pytest).

    ``nox -s tests`` runs it at 10,000 cases; DIFFCHECK_HOSTILE_EXAMPLES sets the total.
    """
    _install_project(session, "test", "fuzz")
    session.install("array-api-strict")
    examples = os.environ.get("DIFFCHECK_HOSTILE_EXAMPLES", "200000")
    session.run(
        "pytest",
        "tests/hostile",
        *session.posargs,
        env={"DIFFCHECK_HOSTILE_EXAMPLES": examples},
    )


@nox.session
def numerics(session: nox.Session) -> None:
    """Sweep the default matrix over every backend available here; write reports/.

    Also installs what the README's other examples need (the fuzz extra for diffcheck fuzz),
    so every command the README shows runs in this environment too.
    """
    _install_project(session, "fuzz")
    session.install(*EXAMPLE_EXTRAS)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")  # as diffcheck.files.stamp
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
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")  # as diffcheck.files.stamp
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
    """Lint and format-check with ruff; check the package's layering with import-linter."""
    session.install("ruff", "import-linter")
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
    # The contracts of pyproject.toml's [tool.importlinter]; grimp reads the source tree only,
    # so the package need not be installed.
    session.run("lint-imports", "--no-cache", env={"PYTHONPATH": str(ROOT / "src")})


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check src/ and the adapters with mypy --strict."""
    _install_project(session, "test", "dask")  # the pytest plugin and kit import pytest
    session.install("mypy")
    session.run(
        "mypy",
        "src",
        *[f"{path}/src" for path in plugin_folders()],
        *session.posargs,
    )


@nox.session
def schema(session: nox.Session) -> None:
    """Regenerate the checked-in JSON Schemas under reports/schema/."""
    _install_project(session)
    session.run("diffcheck", "schema", "--write", "reports/schema")


@nox.session
def mutants(session: nox.Session) -> None:
    """Mutation testing of the verdict path: mutmut's mutants, then the hand-written ones.

    mutmut mutates the modules of ``[tool.mutmut] only_mutate`` (the differ, replay, runner
    and writer; the value model's compare, judges, blame and bounds; bundle replay; known
    divergences and API divergences with their input classes; sweep reuse; the Python API).
    posargs are mutant-name globs that narrow that run, e.g. ``nox -s mutants --
    "diffcheck.differ*"``. The verdict counts only the mutants checked, and fails on a
    survivor that tests/mutants_equivalent.toml does not explain or on a mutant that no test
    reaches. Then tools/hand_mutants.py applies tests/hand_mutants.toml (a skipped range, an
    ignored input dtype, a widened allowance...: changes mutmut's operators never make), and
    fails unless each is killed.
    """
    _install_project(session, "test", "fuzz")  # the selected tests fuzz and sweep in process
    # The selected tests replay torch-referenced reports: without torch they fail, not skip.
    _install_with_torch(session, "array-api-strict", "mutmut==3.8.1")
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    session.run("mutmut", "run", "--max-children", str(os.cpu_count() or 1), *session.posargs)
    session.run("python", "tools/mutants_verdict.py")
    session.run("python", "tools/hand_mutants.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: each prints ratios against a peer measured in the same run.

    Every script under bench/ runs: the differ against assert_allclose, torch's assert_close
    and the memory-read floor (10^5 to 10^8 elements); the on-device comparison (where CUDA
    is present; it says why not otherwise); the others' report and sweep benchmarks; and the
    API search's examples per second with calls in a worker process and in-process.
    """
    _install_project(session, "fuzz")  # the API search benchmark needs hypothesis
    _install_with_torch(session, "array-api-strict")
    for script in sorted((ROOT / "bench").glob("*.py")):
        session.run("python", str(script), *session.posargs)
