"""Every install hint names a command that works, and first-party adapters are known uninstalled.

diffcheck's distributions are not on the package index, so a hint such as ``pip install
'diffcheck-mlx[cuda]'`` sends a reader nowhere. Hints are built by :mod:`diffcheck.install`;
the tests below check that no source file or document spells one by hand, that the commands
it builds name folders and extras that exist, that the README gives the same commands, and
that a first-party adapter that is not installed is listed and resolved with its command.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from diffcheck.adapters import _registry, resolve
from diffcheck.cli import main
from diffcheck.errors import UnknownBackendError
from diffcheck.install import FIRST_PARTY_ADAPTERS, core_install, plugin_install

ROOT = Path(__file__).resolve().parents[1]

#: A pip command naming one of diffcheck's own distributions by its index name, which does
#: not exist there (``diffcheck-mlx``, ``diffcheck-numerics[fuzz]``, ``diffcheck[dask]``); a
#: direct reference (``'diffcheck-numerics[fuzz] @ git+URL'``) installs from elsewhere.
_INDEX_NAME = re.compile(
    r"diffcheck(?:-[a-z]+)?\[[\w,]+\](?! @)"
    r"|pip install(?: -\S+)* ['\"]?diffcheck(?:-[a-z]+)?(?=['\"\s]|$)(?! @)",
    re.MULTILINE,
)


def _sources() -> Iterator[Path]:
    for top in ("src", "adapters", "ops"):
        yield from (ROOT / top).rglob("*.py")
    yield from (ROOT / top for top in ("README.md", "CONTRIBUTING.md"))
    yield from (ROOT / "docs").rglob("*.md")
    yield from (ROOT / "adapters").rglob("README.md")
    yield from (ROOT / "ops").rglob("README.md")


def test_no_file_names_an_index_package_that_does_not_exist() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)!r}"
        for path in _sources()
        if path.name != "install.py" and "tests" not in path.relative_to(ROOT).parts
        for match in _INDEX_NAME.finditer(path.read_text())
    ]
    assert found == [], "build install hints with diffcheck.install"


@pytest.mark.parametrize(
    "text",
    [
        "run \"pip install 'diffcheck[fuzz]'\"",
        "pip install 'diffcheck-mlx[cuda]'",
        "pip install diffcheck-wgpu now",
        "needs the diffcheck-numerics[dask] extra",
    ],
)
def test_the_scan_finds_a_hand_written_index_name(text: str) -> None:
    assert _INDEX_NAME.search(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "pip install 'diffcheck-numerics[fuzz] @ git+URL'",
        "pip install -e adapters/mybackend && diffcheck backends",
        core_install("fuzz"),
        plugin_install("adapters/mlx", "cuda"),
    ],
)
def test_the_scan_leaves_working_commands_alone(text: str) -> None:
    assert _INDEX_NAME.search(text) is None


def _pyproject(folder: Path) -> dict[str, object]:
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def _extras(command: str) -> tuple[Path, set[str]]:
    """The folder and extras a ``pip install -e`` command built here installs."""
    spec = command.removeprefix("pip install -e ").split(" ")[0].strip("'")
    folder, _, extras = spec.partition("[")
    return ROOT / folder, set(filter(None, extras.rstrip("]").split(",")))


def test_every_adapter_folder_is_listed_with_its_name_devices_and_extras() -> None:
    for folder in sorted((ROOT / "adapters").glob("*/pyproject.toml")):
        project = _pyproject(folder.parent)
        names = set(project["entry-points"]["diffcheck.adapters"])  # type: ignore[index]
        for name in names:
            listed = FIRST_PARTY_ADAPTERS[name]
            assert listed.folder == folder.parent.relative_to(ROOT).as_posix()
            adapter = resolve(name)  # installed in the test environment: compare its devices
            assert listed.devices == type(adapter).devices, name
    for name, listed in FIRST_PARTY_ADAPTERS.items():
        path, extras = _extras(listed.install)
        assert path == ROOT / listed.folder, name
        assert extras <= set(_pyproject(path).get("optional-dependencies", {})), name  # type: ignore[arg-type]


@pytest.mark.parametrize("extra", ["fuzz", "dask"])
def test_core_install_names_an_extra_the_core_has(extra: str) -> None:
    path, extras = _extras(core_install(extra))
    assert path == ROOT / "."
    assert extras == {extra} <= set(_pyproject(ROOT)["optional-dependencies"])  # type: ignore[arg-type]


def test_the_readme_gives_the_commands_the_hints_give() -> None:
    readme = (ROOT / "README.md").read_text()
    for command in (
        core_install("fuzz"),
        plugin_install("adapters/mlx", "cpu"),
        plugin_install("adapters/wgpu"),
    ):
        assert command.split(" in a diffcheck checkout")[0] in readme, command


@pytest.fixture
def without_mlx(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as it is where only the core is installed: no mlx entry point."""
    real = _registry._scan

    def scan() -> dict[str, EntryPoint]:
        return {name: ep for name, ep in real().items() if name != "mlx"}

    monkeypatch.setattr(_registry, "_scan", scan)


@pytest.mark.parametrize("name", ["mlx", "mlx:cpu", "mlx:gpu"])
def test_an_uninstalled_first_party_adapter_says_how_to_install_it(
    without_mlx: None, name: str
) -> None:
    with pytest.raises(UnknownBackendError) as raised:
        resolve(name)
    assert f"its adapter is not installed: {FIRST_PARTY_ADAPTERS['mlx'].install}" in str(
        raised.value
    )
    assert "\n" not in str(raised.value)


def test_backends_lists_an_uninstalled_first_party_adapter_with_its_command(
    without_mlx: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backends"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["mlx"].split()[1] == "unavailable"
    assert rows["mlx"].endswith(f"adapter not installed: {FIRST_PARTY_ADAPTERS['mlx'].install}")
    assert "mlx:cpu" not in rows  # its devices are known only once it is installed


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("mlx:cup", "mlx:cpu"), ("mlxx:cpu", "mlx:cpu"), ("wgpu:vulcan", "wgpu:vulkan")],
)
def test_a_misspelt_library_or_device_gets_a_did_you_mean(typed: str, meant: str) -> None:
    with pytest.raises(UnknownBackendError, match=f'did you mean "{meant}"'):
        resolve(typed)
