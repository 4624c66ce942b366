"""Fixtures: the NumPy stand-in for PyObjC's Metal bindings, installed as ``Metal`` and ``objc``."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import diffcheck_metal._adapter
from diffcheck.adapters import Adapter, resolve
from diffcheck_metal import open_runtime

# The inference kernels' cases and float64 formulas are shared with the wgpu adapter's tests,
# so both backends answer the same questions.
sys.path.insert(0, str(Path(__file__).parents[2] / "wgpu" / "tests"))
# fake_metal.py imports its kernel emulators from the module beside it.
sys.path.insert(0, str(Path(__file__).parent))


def _load_fake() -> ModuleType:
    path = Path(__file__).with_name("fake_metal.py")
    spec = importlib.util.spec_from_file_location("diffcheck_metal_fake_metal", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install_fake(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Make this process look like macOS with the NumPy stand-in as ``Metal`` and ``objc``."""
    fake = _load_fake()
    monkeypatch.setattr(diffcheck_metal._adapter, "_platform", lambda: "darwin")
    monkeypatch.setitem(sys.modules, "Metal", fake)
    monkeypatch.setitem(sys.modules, "objc", fake)
    open_runtime.cache_clear()
    return fake


@pytest.fixture(scope="class")
def fake_metal_for_class() -> Iterator[ModuleType]:
    """The stand-in for a whole test class (the conformance suite's fixtures are class-scoped)."""
    with pytest.MonkeyPatch.context() as patch:
        yield install_fake(patch)
    open_runtime.cache_clear()


@pytest.fixture
def fake_metal(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A macOS-looking process whose ``Metal`` and ``objc`` are the NumPy stand-in (fresh per test)."""
    yield install_fake(monkeypatch)
    open_runtime.cache_clear()


@pytest.fixture(scope="session")
def reference() -> Adapter:
    return resolve("numpy")
