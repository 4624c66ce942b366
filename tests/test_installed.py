"""Installed versions are read once while the import path is unchanged, and again after."""

from __future__ import annotations

import shutil
import sys
from importlib import metadata
from pathlib import Path

import pytest

from diffcheck import _installed
from diffcheck._installed import installed_version, installed_versions


def _install(folder: Path, name: str, version: str) -> Path:
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return info


def test_a_version_is_read_once_while_nothing_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = metadata.version

    def counting(name: str) -> str:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", counting)
    assert installed_version("numpy") == real("numpy")
    assert installed_versions("numpy", "numpy") == {"numpy": real("numpy")}
    assert installed_version("numpy") == real("numpy")
    assert calls == ["numpy"]


def test_installing_or_removing_a_distribution_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "diffcheck-installed-probe"
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installed_version(name) is None
    first = _install(tmp_path, name, "1.0")
    assert installed_version(name) == "1.0"
    shutil.rmtree(first)
    _install(tmp_path, name, "2.5")
    assert installed_version(name) == "2.5"
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    assert installed_version(name) is None


def test_absent_and_invalid_names_are_none() -> None:
    assert installed_version("no-such-distribution-here") is None
    assert installed_versions("", "numpy")[""] is None


def test_the_cache_key_changes_with_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _installed.path_state()
    assert _installed.path_state() == before
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _installed.path_state() != before
