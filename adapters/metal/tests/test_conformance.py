"""diffcheck's adapter conformance suite, run against the metal backend.

Off macOS the real runtime is unavailable and :class:`TestConformance` skips with why; the
same contract checks then run on any machine against the NumPy stand-in for the Metal
runtime (``fake_metal.py``), which executes the adapter's real dispatch code and emulates
its MSL kernels: :class:`TestConformanceOnTheStandIn`.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from diffcheck.testing import ConformanceTests


class TestConformance(ConformanceTests):
    backends = ("metal",)


class TestConformanceOnTheStandIn(ConformanceTests):
    """The whole contract, on the NumPy stand-in for PyObjC's Metal (any machine)."""

    backends = ("metal",)
    # The stand-in is installed at setup: probed at collection, Metal would look missing.
    probe_at_collection = False

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _stand_in(cls, fake_metal_for_class: ModuleType) -> ModuleType:
        return fake_metal_for_class
