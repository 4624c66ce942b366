"""The adapter conformance suite, run against every registered adapter and the array-api
libraries this repository supports with no adapter code (unavailable ones skip, with why)."""

from diffcheck.testing import conformance_suite, registered_backends

TestConformance = conformance_suite(
    *registered_backends(),
    "array_api_strict",
    "array_api_strict:no_float64",
    "torch:cpu",
    "torch:cuda",
)

#: The reference's own adapter, checked against the reference: a declared self-test (without
#: ``allow_self_test`` every test of it fails, since a backend cannot vouch for itself).
TestReferenceSelfTest = conformance_suite("numpy:cpu", allow_self_test=True)
