"""The noxfile finds plugin folders itself, and `nox -s dev` installs all of them.

The README's set-up line (`nox -s dev && . .venv/bin/activate`) gives the `diffcheck`
command only when the dev session installs the core and every plugin into `.venv`.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nox.registry
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]


def _load_noxfile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("diffcheck_noxfile", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # nox registers each session globally and the tests below read that registry: load
    # into an empty one, so a load by another test file is not registered twice.
    nox.registry._REGISTRY.clear()
    spec.loader.exec_module(module)
    return module


noxfile = _load_noxfile()


def _editables(args: list[str]) -> list[str]:
    assert all(args[i] == "-e" for i in range(0, len(args), 2)), args
    return args[1::2]


def test_every_plugin_folder_of_this_tree_is_installed() -> None:
    folders = {
        p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("adapters/*/pyproject.toml")
    }
    folders |= {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("ops/*/pyproject.toml")}
    assert {
        "adapters/mlx",
        "adapters/wgpu",
        "adapters/metal",
        "adapters/example",
        "ops/example",
    } <= folders
    installed = _editables(noxfile.install_args("test"))
    assert installed[0] == ".[test]"
    assert {spec.split("[")[0] for spec in installed[1:]} == folders


@pytest.mark.parametrize(
    ("platform", "mlx", "metal"),
    [
        ("linux", "adapters/mlx[cpu]", "adapters/metal"),
        ("darwin", "adapters/mlx", "adapters/metal[pyobjc]"),
        ("win32", "adapters/mlx", "adapters/metal"),
    ],
)
def test_platform_extras(platform: str, mlx: str, metal: str) -> None:
    specs = noxfile.plugin_specs(ROOT, platform)
    assert mlx in specs
    assert metal in specs


_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=25, deadline=None)
@given(
    adapters=st.sets(_NAME, max_size=4),
    ops=st.sets(_NAME, max_size=3),
    not_plugins=st.sets(_NAME, max_size=2),
)
def test_a_new_folder_is_found_without_an_edit(
    adapters: set[str], ops: set[str], not_plugins: set[str]
) -> None:
    # Built in a fresh temporary tree per example: Hypothesis and tmp_path do not mix.
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for parent, names in (("adapters", adapters), ("ops", ops)):
            for name in names:
                (root / parent / name).mkdir(parents=True)
                (root / parent / name / "pyproject.toml").write_text("[project]\n")
        for name in not_plugins - adapters:  # a folder without a pyproject is not a plugin
            (root / "adapters" / name).mkdir(parents=True)
        expected = sorted([f"adapters/{n}" for n in adapters] + [f"ops/{n}" for n in ops])
        assert noxfile.plugin_folders(root) == expected
        assert _editables(noxfile.install_args(root=root, platform="linux")) == [".", *expected]


def test_the_dev_session_builds_dot_venv_with_everything(tmp_path: Path) -> None:
    assert "dev" in noxfile.nox.registry.get()
    venv = tmp_path / ".venv"
    create, upgrade, install = noxfile.dev_commands(venv, "python3")
    assert create == ["python3", "-m", "venv", str(venv)]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    assert upgrade[: len(pip)] == pip
    assert install[: len(pip)] == pip
    rest = install[len(pip) :]
    # The core with the test, fuzz and dask extras, every plugin, and the examples' backends.
    assert rest[:2] == ["-e", ".[test,fuzz,dask]"]
    assert "array-api-strict" in rest
    assert (
        list(noxfile.install_args("test", "fuzz", "dask")) == rest[: -len(noxfile.EXAMPLE_EXTRAS)]
    )
    assert noxfile.DEV_VENV == ROOT / ".venv"


def test_the_readme_gives_the_setup_line_and_git_ignores_the_venv() -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"nox -s dev && \. \.venv/bin/activate", readme)
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()
    # The console script the activated environment puts on PATH.
    assert 'diffcheck = "diffcheck.cli:main"' in (ROOT / "pyproject.toml").read_text()


def test_the_noxfile_names_no_plugin_folder_by_hand() -> None:
    text = (ROOT / "noxfile.py").read_text()
    assert not re.search(
        r'"(adapters|ops)/[a-z]',
        text.replace('"adapters/mlx": "cpu"', "").replace('"adapters/metal": "pyobjc"', ""),
    ), "a plugin folder is listed by hand"
    assert sys.platform  # the module under test reads it


def test_contributings_quick_venv_installs_what_the_dev_session_does() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    match = re.search(r"^pip install (.*?)\n(?!\s)", text.replace("\\\n", " "), re.M)
    assert match is not None, "CONTRIBUTING.md lost its quick-venv pip line"
    words = [w.strip("\"'") for w in match[1].split()]
    editables = sorted(words[i + 1] for i, w in enumerate(words) if w == "-e")
    expected = noxfile.install_args("test", "fuzz", "dask", platform="linux")
    assert editables == sorted(expected[1::2])
    assert set(noxfile.EXAMPLE_EXTRAS) <= set(words)


def test_the_numerics_session_installs_what_the_readme_examples_need() -> None:
    import inspect

    # The README's values-mode example runs on array_api_strict (marked requires=).
    assert "array_api_strict" in (ROOT / "README.md").read_text()
    assert "array-api-strict" in noxfile.EXAMPLE_EXTRAS
    source = inspect.getsource(noxfile.numerics)
    assert "session.install(*EXAMPLE_EXTRAS)" in source
    assert '_install_project(session, "fuzz")' in source


def test_uv_gets_pips_find_links_and_pip_gets_nothing_extra() -> None:
    # uv reads no pip configuration: without the folder that holds torch's CPU build it would
    # resolve torch==2.13.0 to PyPI's CUDA build of several GB.
    listing = (
        ":env:.find-links='/opt/wheels https://example.org/wheels/'\n"
        "global.cert='/etc/ssl/certs/ca-certificates.crt'\n"
        "global.extra-index-url='file:///opt/pypi/simple'\n"
        "global.find-links='/opt/wheels'\n"
        "install.find-links='/srv/more'\n"
    )
    assert noxfile.find_links_args("uv", listing) == [
        "--find-links",
        "/opt/wheels",
        "--find-links",
        "https://example.org/wheels/",
        "--find-links",
        "/srv/more",
    ]
    assert noxfile.find_links_args("virtualenv", listing) == []
    assert noxfile.find_links_args("uv", "global.cert='/x'\n") == []
    assert noxfile.find_links_args("uv", "") == []


def test_pip_config_is_read_from_pip_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    # nox runs on the interpreter pip installed it into; a uv-made test environment has no
    # pip of its own, so ask the base interpreter's.
    python = str(Path(sys.base_prefix) / "bin" / "python3")
    if subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip(f"{python} has no pip to ask (nox's interpreter always has)")
    monkeypatch.setenv("PIP_FIND_LINKS", "/somewhere/wheels")
    args = noxfile.find_links_args("uv", noxfile._pip_config(python))
    assert args[args.index("/somewhere/wheels") - 1] == "--find-links"


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"^(python3 -m pip install [^&\n]+&& nox -s tests)\s", readme, re.M)
    assert match is not None, "the README lost its test command"
    ci = (ROOT / ".ci" / "run").read_text()
    command = [
        line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))
    ]
    # .ci/run adds only pip's -q.
    assert command == [match[1].replace("pip install ", "pip install -q ", 1)]
    assert "uv" in match[1].split("&&")[0].split(), "uv makes the sessions' environments"


def test_the_dev_session_uses_uv_where_it_is_installed(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    create, install = noxfile.dev_commands(venv, "python3", uv="/usr/bin/uv")
    assert create == [
        "/usr/bin/uv", "venv", "--seed", "--allow-existing", "--python", "python3", str(venv)
    ]  # fmt: skip
    assert install[:6] == [
        "/usr/bin/uv",
        "pip",
        "install",
        "-q",
        "--python",
        str(venv / "bin" / "python"),
    ]
    everything = [*noxfile.install_args("test", "fuzz", "dask"), *noxfile.EXAMPLE_EXTRAS]
    assert install[6:] == everything
    source = inspect.getsource(noxfile.dev)
    assert 'dev_commands(uv=shutil.which("uv"))' in source
