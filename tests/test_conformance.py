"""The adapter conformance suite, run against every registered adapter and the array-api
libraries this repository supports with no adapter code (unavailable ones skip, with why)."""

from diffcheck.testing import conformance_suite, registered_backends

TestConformance = conformance_suite(
    *registered_backends(),
    "numpy:cpu",  # the reference's own adapter, checked against the reference by name
    "array_api_strict",
    "array_api_strict:no_float64",
    "torch:cpu",
    "torch:cuda",
)
