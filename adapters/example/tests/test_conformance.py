"""The whole adapter contract, run against this package's backend in one line."""

from diffcheck.testing import conformance_suite

TestConformance = conformance_suite("example:cpu")
