"""Shared fixtures: a fresh directory per test, and the test doubles importable by name."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# The test doubles live beside the tests; make them importable as ``fakes`` under
# pytest's importlib import mode.
sys.path.insert(0, str(Path(__file__).parent))

# Property tests keep no example database: a test run leaves nothing in the tree.
settings.register_profile("diffcheck", database=None)
# In CI the draws are derandomized: a submission's run is repeatable, and new random
# exploration happens on developers' machines, where a failure is shrunk and kept as a test.
settings.register_profile("ci", database=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "diffcheck")


#: Test doubles installed as backends, so a report of one names what computed it (replay
#: binds a report's candidate name to the adapter of that name: diffcheck.report.candidate).
def _fake_backends() -> dict[str, str]:
    from fakes import REGISTERED

    return REGISTERED


@pytest.fixture(scope="module")
def fake_backends() -> Iterator[None]:
    """The fakes resolvable by name (``fake``, ``fakescalesegment``, ``fakechains``...,
    tests/fakes.py), for one module (it opts in with
    ``pytestmark``; module-scoped, so its module-scoped fixtures may name them too)."""
    from importlib.metadata import EntryPoint

    from diffcheck.adapters import _registry

    group = _registry.ENTRY_POINT_GROUP
    fakes = {name: EntryPoint(name, value, group) for name, value in _fake_backends().items()}
    registered = _registry.adapter_entry_points
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_registry, "adapter_entry_points", lambda: registered() | fakes)
        yield
