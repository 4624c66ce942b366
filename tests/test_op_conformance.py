"""Every first-party op passes the op conformance suite a plugin's op runs."""

from __future__ import annotations

from diffcheck.ops import OPS
from diffcheck.ops._registry import CORE_PACKAGE
from diffcheck.ops.conformance import op_conformance_suite

TestFirstPartyOps = op_conformance_suite(
    *(name for name in OPS if OPS.source(name).package == CORE_PACKAGE)
)
