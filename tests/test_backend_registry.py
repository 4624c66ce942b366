"""The adapter entry points are scanned once and read again when what is installed changes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from diffcheck.adapters import _registry
from diffcheck.adapters._registry import adapter_entry_points


def _install(site: Path, name: str) -> None:
    """A distribution declaring the adapter ``name`` (metadata only, as pip leaves it)."""
    info = site / f"fake_{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-{name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[diffcheck.adapters]\n{name} = fake_{name}:Adapter\n")


def test_an_unchanged_path_is_not_scanned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = _registry.entry_points

    def counting(**kwargs: str) -> object:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(_registry, "entry_points", counting)
    first = adapter_entry_points()
    for _ in range(5):
        assert adapter_entry_points() == first
    assert len(calls) == 1
    assert "numpy" in first


def test_a_distribution_installed_later_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    assert "firstfake" not in adapter_entry_points()
    _install(site, "firstfake")  # a new folder in a path entry: its mtime changes
    assert "firstfake" in adapter_entry_points()
    _install(site, "secondfake")
    assert {"firstfake", "secondfake"} <= set(adapter_entry_points())
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(site)])
    assert not {"firstfake", "secondfake"} & set(adapter_entry_points())
