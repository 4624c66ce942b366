"""The ``diffcheck.ops`` entry points: lazy discovery, broken plugins and name clashes.

Plugins here are fake distributions (a ``.dist-info`` folder and a module) on a temporary
``sys.path`` entry, which is all ``importlib.metadata`` reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import diffcheck.ops._registry as registry
from diffcheck.ops import OPS, OpPluginError, get_op
from diffcheck.ops.gemm import Gemm

ROOT = Path(__file__).parents[1]


def fake_plugin(site: Path, package: str, entries: dict[str, str], module: str = "") -> None:
    """A distribution ``package`` declaring ``entries`` (name -> module:attr), with a module."""
    info = site / f"{package.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (info / "entry_points.txt").write_text(f"[diffcheck.ops]\n{lines}")
    if module:
        name = next(iter(entries.values())).split(":")[0]
        (site / f"{name}.py").write_text(module)


BROKEN = "raise ImportError('needs libfoo, which is not installed')\n"
CLASHING = (
    "from diffcheck.ops.softmax import Softmax\n"
    "class OtherSoftmax(Softmax):\n    pass\n"
    "class Renamed(Softmax):\n    name = 'renamed'\n"
)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    OPS.reset()
    yield path
    monkeypatch.undo()
    for name in [m for m in sys.modules if m.startswith(("broken_mod", "clash_mod"))]:
        del sys.modules[name]
    OPS.reset()


def test_discovery_is_lazy_and_scans_the_entry_points_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = (
        "import sys, diffcheck, diffcheck.ops, diffcheck.adapters\n"
        "from diffcheck.ops import OPS\n"
        "assert OPS._ops is None, 'import discovered ops'\n"
        "assert not [m for m in sys.modules if m.startswith('diffcheck_example_ops')]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    calls = []
    real = registry.entry_points

    def counting(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(registry, "entry_points", counting)
    OPS.reset()
    try:
        assert isinstance(get_op("gemm"), Gemm)
        assert list(OPS)[:2] == ["rms-norm", "gemm"]
        assert get_op("metal-context") is get_op("context-lifecycle")
        assert calls == [{"group": "diffcheck.ops"}]
    finally:
        OPS.reset()


def test_the_core_entry_points_are_the_first_party_table() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared["diffcheck.ops"] == dict(registry.FIRST_PARTY)
    assert [name for name in OPS if OPS.source(name).package == registry.CORE_PACKAGE] == list(
        registry.FIRST_PARTY
    )


def test_a_broken_plugin_is_one_line_naming_it_and_the_rest_still_work(site: Path) -> None:
    fake_plugin(site, "broken-ops", {"broken": "broken_mod:Broken"}, BROKEN)
    with pytest.raises(OpPluginError) as raised:
        get_op("broken")
    assert str(raised.value) == (
        'op "broken" (broken_mod:Broken from package broken-ops) failed to load: '
        "ImportError: needs libfoo, which is not installed"
    )
    assert "broken" not in OPS
    assert isinstance(get_op("gemm"), Gemm)
    assert [str(p) for p in OPS.problems()] == [str(raised.value)]


def test_a_name_claimed_by_two_packages_is_an_error_for_both(site: Path) -> None:
    fake_plugin(
        site,
        "clash-ops",
        {"softmax": "clash_mod:OtherSoftmax", "renamed-op": "clash_mod:Renamed"},
        CLASHING,
    )
    with pytest.raises(OpPluginError) as raised:
        get_op("softmax")
    assert str(raised.value) == (
        'op name "softmax" is claimed by diffcheck.ops.softmax:Softmax from package diffcheck-numerics '
        "and clash_mod:OtherSoftmax from package clash-ops; uninstall one of them to use it"
    )
    assert "softmax" not in OPS
    with pytest.raises(OpPluginError, match='names itself "renamed"'):
        get_op("renamed-op")
    assert get_op("layer-norm").name == "layer-norm"


def test_an_alias_that_clashes_with_an_op_disables_both(site: Path) -> None:
    module = (
        "from diffcheck.ops.gemm import Gemm\n"
        "class MyGemm(Gemm):\n    name = 'my-gemm'\n    aliases = ('gemm',)\n"
    )
    fake_plugin(site, "alias-ops", {"my-gemm": "clash_mod_alias:MyGemm"}, module)
    with pytest.raises(OpPluginError, match=r'op name "gemm" is claimed by .* and '):
        get_op("gemm")
    assert get_op("my-gemm").name == "my-gemm"


def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_plugin(site, "broken-ops", {"broken": "broken_mod:Broken"}, BROKEN)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "diffcheck", *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    listed = cli("ops")
    assert listed.returncode == 1
    assert "gemm (diffcheck-numerics): --m 64 --n 32 --k 32" in listed.stdout
    assert listed.stderr.splitlines() == [
        'error: op "broken" (broken_mod:Broken from package broken-ops) failed to load: '
        "ImportError: needs libfoo, which is not installed"
    ]
    report = tmp_path / "r.json"
    run = cli("run", "--require-backend", "mlx:cpu", "--op", "broken", "--report", str(report))
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        'diffcheck: op "broken" (broken_mod:Broken from package broken-ops) failed to load: '
        "ImportError: needs libfoo, which is not installed"
    ]
    assert not report.exists()
