"""Fixtures: the wgpu adapter (skipped with the probe's reason where no adapter exists) and the reference."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from diffcheck.adapters import Adapter, resolve
from diffcheck_wgpu import WgpuAdapter

# The kernel-level helpers (kernel_refs, fused_cases) are plain modules beside the tests; the
# Metal adapter's tests load the same cases, so both backends answer the same questions.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def wgpu_adapter() -> WgpuAdapter:
    adapter = WgpuAdapter()
    probe = adapter.probe()
    if not probe.is_available:
        pytest.skip(f"wgpu backend {probe.status}: {probe.reason}")
    return adapter


@pytest.fixture(scope="session")
def reference() -> Adapter:
    return resolve("numpy")
