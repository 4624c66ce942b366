"""diffcheck's adapter conformance suite, run against the wgpu backend."""

from __future__ import annotations

from diffcheck.testing import ConformanceTests


class TestConformance(ConformanceTests):
    backends = ("wgpu",)
