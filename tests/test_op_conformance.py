"""Every first-party op passes the op conformance suite a plugin's op runs."""

from __future__ import annotations

from typing import Any

import pytest

from diffcheck.ops import OPS
from diffcheck.ops._registry import CORE_PACKAGE
from diffcheck.ops.conformance import OpConformanceTests, op_conformance_suite
from diffcheck.ops.gemm import Gemm

TestFirstPartyOps = op_conformance_suite(
    *(name for name in OPS if OPS.source(name).package == CORE_PACKAGE)
)


def test_an_op_without_a_fuzz_space_is_skipped_with_the_reason() -> None:
    # fuzz_space() is optional (the docs say so, and Op's default returns None): the suite
    # skips that test with the reason instead of failing the plugin's op.
    class NoSpace(Gemm):
        def fuzz_space(self) -> Any:
            return None

    with pytest.raises(pytest.skip.Exception, match=r"gemm has no fuzz space .* returns None"):
        OpConformanceTests().test_fuzz_space_draws_only_valid_shapes(NoSpace())
    OpConformanceTests().test_fuzz_space_draws_only_valid_shapes(Gemm())  # one that has one
