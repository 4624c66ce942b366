"""The whole op contract, run against this package's op in one line."""

from diffcheck.ops.conformance import op_conformance_suite

TestGelu = op_conformance_suite("gelu")
