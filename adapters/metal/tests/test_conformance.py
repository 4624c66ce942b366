"""diffcheck's adapter conformance suite, run against the metal backend."""

from __future__ import annotations

from diffcheck.testing import ConformanceTests


class TestConformance(ConformanceTests):
    backends = ("metal",)
