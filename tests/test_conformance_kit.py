"""The conformance kit can fail: broken adapters, run through it, fail the right tests."""

from __future__ import annotations

import textwrap
from collections import Counter

import array_api_compat.numpy  # noqa: F401  # see below
import pytest

import diffcheck.testing  # noqa: F401  # see below
from diffcheck.testing import op_cases

# The unused imports above load, up front, what the inner runs use: in-process pytester runs
# drop the modules they imported afterwards, and NumPy's extension modules cannot be loaded
# twice in one process.
pytest_plugins = ["pytester"]

_BROKEN = '''
import dataclasses

import numpy as np
import pytest

from diffcheck.adapters import KnownDivergence, Probe
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.testing import ConformanceTests, conformance_suite


class WrongGemm(NumpyAdapter):
    """Right everywhere except GEMM, which is 1% high."""

    name = "wronggemm"

    def execute(self, op, params, inputs, precision, *, role="candidate"):
        run = super().execute(op, params, inputs, precision, role=role)
        if op.name != "gemm":
            return run
        return dataclasses.replace(run, output=run.output * np.float32(1.01))


class WrongGemmDeclared(NumpyAdapter):
    """A GEMM whose operands are TF32 (rounded to 10 significand bits, as tensor cores read
    float32), declared as a known divergence modelled by the floor's TF32 twin."""

    name = "wronggemmdeclared"

    def execute(self, op, params, inputs, precision, *, role="candidate"):
        if op.name == "gemm" and role == "candidate":
            bits = {k: v.astype(np.float32).view(np.uint32).astype(np.uint64) for k, v in inputs.items()}
            inputs = {
                k: ((b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000).astype(np.uint32).view(np.float32)
                for k, b in bits.items()
            }
        return super().execute(op, params, inputs, precision, role=role)

    def known_divergences(self):
        return (
            KnownDivergence(
                ops=("gemm",),
                precisions=("f32",),
                reason="gemm reads its operands as TF32",
                upstream="https://example.org/issues/7",
                max_nmse=1e-6,
                measured_nmse=1e-7,
                bound_source="10x the NMSE of a TF32 GEMM",
                twin="tf32 operands",
            ),
        )


class WrongGemmAsTf32(WrongGemm):
    """The 1% high GEMM declared as TF32 under a ceiling that would cover it: the TF32 twin
    does not model a 1% error, so nothing is excused."""

    name = "wronggemmastf32"

    def known_divergences(self):
        return (
            KnownDivergence(
                ops=("gemm",),
                precisions=("f32", "f16"),
                reason="gemm is 1% high, said to be TF32",
                upstream="https://example.org/issues/9",
                max_nmse=1e-3,
                measured_nmse=0.0001,
                bound_source="10x the NMSE of a 1% scale",
                twin="tf32 operands",
            ),
        )


class WrongGemmOverBound(WrongGemm):
    """Declared with a ceiling below what it measures, and declared for a silu-mul that passes."""

    name = "wronggemmoverbound"

    def known_divergences(self):
        return (
            KnownDivergence(
                ops=("gemm", "silu-mul"),
                precisions=("f32",),
                reason="gemm is a little high",
                upstream="https://example.org/issues/8",
                max_nmse=1e-5,
                measured_nmse=1e-06,
                bound_source="a ceiling the 1% error exceeds",
            ),
        )


class CrashingGemmDeclared(WrongGemmDeclared):
    """Declared for gemm, but gemm crashes: a crash is never the divergence."""

    name = "crashinggemm"

    def execute(self, op, params, inputs, precision, *, role="candidate"):
        if op.name == "gemm" and role == "candidate":
            raise RuntimeError("device lost")
        return super().execute(op, params, inputs, precision, role=role)


class StorageLie(NumpyAdapter):
    """Claims f16 but stores float32."""

    name = "storagelie"

    def storage_dtype(self, xp, precision):
        return xp.float32


class RaisingProbe(NumpyAdapter):
    name = "raising"

    def probe(self):
        raise RuntimeError("driver exploded")


class MalformedProbe(NumpyAdapter):
    name = "malformed"

    def _probe(self):
        return Probe("available", "an available probe with a reason")


class Gone(NumpyAdapter):
    name = "gone"

    def _probe(self):
        return Probe.unavailable("no such device on this machine")


# Every double computes with NumPy, the reference's own library: each suite is a self-test.
TestWrongGemm = conformance_suite(WrongGemm, allow_self_test=True)
TestWrongGemmDeclared = conformance_suite(WrongGemmDeclared, allow_self_test=True)
TestWrongGemmOverBound = conformance_suite(WrongGemmOverBound, allow_self_test=True)
TestWrongGemmAsTf32 = conformance_suite(WrongGemmAsTf32, allow_self_test=True)
TestCrashingGemmDeclared = conformance_suite(CrashingGemmDeclared, allow_self_test=True)
TestStorageLie = conformance_suite(StorageLie, allow_self_test=True)
TestRaisingProbe = conformance_suite(RaisingProbe, allow_self_test=True)
TestMalformedProbe = conformance_suite(MalformedProbe, allow_self_test=True)
TestGone = conformance_suite(Gone, allow_self_test=True)
TestUnregistered = conformance_suite("nope:cpu")
TestSelfVouching = conformance_suite(WrongGemm)


class TestWrongGemmKnown(ConformanceTests):
    """A known divergence, marked on exactly its cases by overriding one test."""

    backends = (WrongGemm,)
    allow_self_test = True

    def test_op_matches_reference(self, adapter, case, precision, request):
        if case.op == "gemm":
            request.applymarker(pytest.mark.xfail(strict=True, reason="known: gemm is 1% high"))
        super().test_op_matches_reference(adapter, case, precision)


class TestGoneNotProbed(ConformanceTests):
    """Not probed while collected (as for a stand-in a fixture installs): every case."""

    backends = (Gone,)
    allow_self_test = True
    probe_at_collection = False


class TestNoBackends(ConformanceTests):
    pass
'''


@pytest.mark.timeout(900)  # every broken adapter runs every case: minutes on a loaded machine
def test_each_kind_of_broken_adapter_fails_its_tests_and_says_why(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider -p no:hypothesispytest -ra\n")
    pytester.makepyfile(test_broken=textwrap.dedent(_BROKEN))
    result = pytester.runpytest("--continue-on-collection-errors")
    by_class: dict[str, Counter[tuple[str, str]]] = {}
    for report in result.reprec.getreports("pytest_runtest_logreport"):  # type: ignore[attr-defined]
        if report.when != "call" and report.outcome == "passed":
            continue
        cls, test = report.nodeid.split("::")[1:3]
        by_class.setdefault(cls, Counter())[(test.split("[")[0], report.outcome)] += 1

    wrong = by_class["TestWrongGemm"]
    # Three GEMM shapes at the two precisions NumPy stores; every other case passes.
    cases = len(op_cases())
    others = 2 * (cases - 3)
    assert wrong[("test_op_matches_reference", "failed")] == 6
    assert wrong[("test_op_matches_reference", "passed")] == others

    lie = by_class["TestStorageLie"]
    assert lie[("test_executed_storage_matches_precision", "failed")] == cases
    assert lie[("test_executed_storage_matches_precision", "passed")] == cases

    raising = by_class["TestRaisingProbe"]
    assert raising[("test_probe_never_raises", "failed")] == 1
    assert raising[("test_op_matches_reference", "failed")] == 3 * cases  # at setup, with why

    malformed = by_class["TestMalformedProbe"]
    assert malformed[("test_probe_never_raises", "failed")] == 1

    gone = by_class["TestGone"]
    assert gone[("test_probe_never_raises", "passed")] == 1
    assert {outcome for (_, outcome) in gone} == {"passed", "skipped"}
    # Unavailable when collected: one skipped item per test for all its cases, not one each.
    assert gone[("test_op_matches_reference", "skipped")] == 1
    assert gone[("test_wrong_output_is_caught", "skipped")] == 1
    # Not probed while collected: every case is its own item, skipped at setup.
    unprobed = by_class["TestGoneNotProbed"]
    assert unprobed[("test_op_matches_reference", "skipped")] == 3 * cases
    assert {outcome for (_, outcome) in unprobed} == {"passed", "skipped"}

    known = by_class["TestWrongGemmKnown"]
    # bf16, which NumPy does not execute, is one item for all its cases; and 6 xfails.
    assert known[("test_op_matches_reference", "skipped")] == 1 + 6
    assert known[("test_op_matches_reference", "passed")] == others
    assert ("test_op_matches_reference", "failed") not in known
    xfailed = [
        r
        for r in result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
        if "TestWrongGemmKnown" in r.nodeid and hasattr(r, "wasxfail")
    ]
    assert len(xfailed) == 6
    assert all("-gemm-" in r.nodeid for r in xfailed)

    # A declared divergence: strict xfails expecting KnownDivergenceFailure, raised only for
    # a measured NMSE within the declared ceiling that the declared twin models. TF32
    # operands of float16 inputs are the inputs themselves: the f16 GEMMs pass.
    declared = by_class["TestWrongGemmDeclared"]
    assert declared[("test_op_matches_reference", "skipped")] == 1 + 3  # bf16, 3 xfails
    assert declared[("test_op_matches_reference", "passed")] == others + 3
    assert ("test_op_matches_reference", "failed") not in declared
    # Still catches; the wrong-output tests run at the default and contract shapes only.
    assert declared[("test_wrong_output_is_caught", "passed")] == len(op_cases(tails=False)) * 5
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    marked = {
        r.nodeid.split("[")[1]: r.outcome
        for r in reports
        if "TestWrongGemmDeclared" in r.nodeid and hasattr(r, "wasxfail")
    }
    assert sorted(marked.values()) == ["skipped"] * 3
    assert all("-gemm-" in k and "-f32" in k for k in marked)

    # Declared as TF32 with a ceiling that covers it, a 1% error is still a failure: the
    # TF32 twin does not model it.
    as_tf32 = by_class["TestWrongGemmAsTf32"]
    assert as_tf32[("test_op_matches_reference", "failed")] == 6
    assert ("test_op_matches_reference", "skipped") in as_tf32  # bf16 only
    assert as_tf32[("test_op_matches_reference", "skipped")] == 1

    # Over the ceiling (NMSE 1e-4 > 1e-5) is a failure; so is the undeclared f16, and a
    # declared silu-mul that passes is an XPASS(strict) failure.
    silu_cases = sum(case.op == "silu-mul" for case in op_cases())
    over = by_class["TestWrongGemmOverBound"]
    assert over[("test_op_matches_reference", "failed")] == 6 + silu_cases
    xpassed = [
        r
        for r in reports
        if "TestWrongGemmOverBound" in r.nodeid
        and r.when == "call"
        and r.failed
        and "XPASS(strict)" in str(r.longrepr)
    ]
    assert len(xpassed) == silu_cases
    assert all("-silu-mul-" in r.nodeid and "-f32" in r.nodeid for r in xpassed)

    # A crash of a declared case is never the divergence.
    crashing = by_class["TestCrashingGemmDeclared"]
    assert crashing[("test_op_matches_reference", "failed")] == 6
    crashes = [
        r
        for r in reports
        if "TestCrashingGemmDeclared::test_op_matches_reference" in r.nodeid and r.failed
    ]
    assert len(crashes) == 6
    assert not any(hasattr(r, "wasxfail") for r in crashes)
    assert all("execution failed: RuntimeError: device lost" in str(r.longrepr) for r in crashes)

    # Without allow_self_test a NumPy double against the NumPy reference cannot vouch.
    vouching = by_class["TestSelfVouching"]
    assert vouching[("test_op_matches_reference", "failed")] == 3 * cases
    assert {o for (test, o) in vouching if test != "test_probe_never_raises"} == {"failed"}
    refused = [r for r in reports if "TestSelfVouching" in r.nodeid and r.failed]
    assert all(
        "is the reference numpy's own backend: a backend cannot vouch for itself" in str(r.longrepr)
        for r in refused
    )

    unregistered = by_class["TestUnregistered"]
    assert unregistered[("test_probe_never_raises", "failed")] == 1
    assert "passed" not in {outcome for (_, outcome) in unregistered}

    result.stdout.fnmatch_lines_random(
        [
            "*gemm-default at f32: failed: NMSE * is not below tolerance*",
            "*asked for f16, executed with inputs f32 and output f32*",
            "*probe() raised RuntimeError: driver exploded*",
            "*an available probe carries a reason*",
            f"SKIPPED*Gone: no such device on this machine ({3 * cases} cases, collected as one)",
            "SKIPPED*wronggemm does not execute precision bf16 (it executes: f32, f16) "
            f"({cases} cases, collected as one)",
            "XFAIL*WrongGemmDeclared*gemm*known divergence of wronggemmdeclared: gemm reads its "
            "operands as TF32 (https://example.org/issues/7); excused up to modelled by tf32 "
            "operands, NMSE <= 1e-06 (measured 1e-07: 10x the NMSE of a TF32 GEMM)*",
            '*unsupported required backend "nope:cpu"*is its package installed?*',
            "*TestNoBackends sets no backends; set backends = ('name:device',)*",
        ]
    )
