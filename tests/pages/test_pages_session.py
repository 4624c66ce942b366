"""Where the browser checks run: `nox -s pages` requires Chromium, the main suite skips them
with a reason that names that session (never a silent pass)."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import nox.registry
import pytest
from page_browser import missing_browser

ROOT = Path(__file__).resolve().parents[2]


def _noxfile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("diffcheck_noxfile_pages", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    # nox registers each session globally; a second load (another test file) would
    # re-register them, so load into an empty registry and put the old one back.
    saved = dict(nox.registry._REGISTRY)
    nox.registry._REGISTRY.clear()
    try:
        spec.loader.exec_module(module)
    finally:
        nox.registry._REGISTRY.clear()
        nox.registry._REGISTRY.update(saved)
    return module


def test_the_session_fails_without_chromium_and_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    noxfile = _noxfile()
    monkeypatch.setenv("DIFFCHECK_CHROMIUM", str(tmp_path / "no-chromium"))
    assert noxfile.find_chromium() is None
    assert "apt-get install -y chromium" in noxfile.CHROMIUM_HINT
    source = inspect.getsource(noxfile.pages)
    assert "session.error(CHROMIUM_HINT)" in source
    assert '"DIFFCHECK_PAGES_REQUIRED": "1"' in source  # a skip there would hide the checks
    assert '"pages"' in source  # installs the extra below
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(req.startswith("playwright") for req in extras["pages"])
    assert not any("playwright" in req for req in extras["test"])  # nox -s tests stays light


def test_without_a_browser_the_checks_skip_naming_the_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "playwright" else real(name, *a),
    )
    reason = missing_browser()
    assert reason is not None
    assert "`nox -s pages`" in reason
