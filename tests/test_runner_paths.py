"""Every exit of the runner's pipeline, with its exact status, reason and what it kept.

tests/test_runner.py covers the contract's required.rs cases; these pin the remaining exits
of :func:`diffcheck.runner.execute_check` (backend resolution, the reference's probe and
capabilities, a raising capability query or reference, a non-finite reference), the
reasons' wording (an exception without a message, an adapter's stated refusal), the
probe details each outcome carries into the report, the reference's float64 accumulation,
and the elapsed time a report records on every path.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.adapters import Capabilities, Execution, Probe
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.config import make_check
from diffcheck.differ import diff
from diffcheck.inputs import random_vec
from diffcheck.report import decode_output, replay
from diffcheck.runner import Outcome, bind, execute_check, run_check
from diffcheck.runner import run as runner
from fakes import FakeAdapter

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

GEMM = make_check("array_api_strict", "gemm", m=4, n=6, k=5)


class Reference(NumpyAdapter):
    """The NumPy reference with an overridable probe, capabilities and execution."""

    def __init__(
        self,
        *,
        probe: Probe | None = None,
        capabilities: Capabilities | None = None,
        fail: BaseException | None = None,
        transform: Any = None,
        output_storage: str | None = None,
    ) -> None:
        super().__init__()
        self.probe_override, self.capabilities_override = probe, capabilities
        self.fail, self.transform, self.output_storage = fail, transform, output_storage
        self.roles: list[str] = []

    def _probe(self) -> Probe:
        return self.probe_override or super()._probe()

    def capabilities(self) -> Capabilities:
        return self.capabilities_override or super().capabilities()

    def execute(self, *args: Any, **kwargs: Any) -> Execution:
        self.roles.append(kwargs.get("role", "candidate"))
        if self.fail is not None:
            raise self.fail
        run = super().execute(*args, **kwargs)
        if self.transform is not None:
            run = dataclasses.replace(run, output=self.transform(run.output.copy()))
        if self.output_storage is not None:
            run = dataclasses.replace(run, output_storage=self.output_storage)
        return run


class Candidate(FakeAdapter):
    """The fake candidate with overridable capabilities."""

    def __init__(self, capabilities: Capabilities | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.capabilities_override = capabilities

    def capabilities(self) -> Capabilities:
        if isinstance(self.capabilities_override, BaseException):
            raise self.capabilities_override
        return self.capabilities_override or super().capabilities()


def test_the_names_in_the_check_are_resolved_when_no_adapter_is_given() -> None:
    outcome = execute_check(GEMM)
    assert (outcome.status, outcome.reason) == ("passed", None)
    assert set(outcome.details) == {"candidate", "reference"}
    assert outcome.details["candidate"].startswith("array_api_strict")
    assert outcome.reference_execution is not None
    assert outcome.candidate_execution is not None


def test_a_registry_that_raises_is_a_failed_outcome_with_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(name: str) -> Any:
        raise RuntimeError("entry point table is corrupt")

    monkeypatch.setattr(runner, "resolve", broken)
    outcome = execute_check(GEMM)
    assert (outcome.status, outcome.reason) == (
        "failed",
        "backend resolution failed: RuntimeError: entry point table is corrupt",
    )


def test_a_zero_tolerance_fails_before_anything_runs() -> None:
    candidate = FakeAdapter()
    outcome = execute_check(GEMM, tolerance=0.0, candidate=candidate)
    assert (outcome.status, outcome.reason) == (
        "failed",
        "tolerance must be finite and strictly positive",
    )
    assert candidate.executed == 0


def test_an_error_without_a_message_is_named_by_its_type() -> None:
    outcome = execute_check(GEMM, reference=Reference(fail=RuntimeError()), candidate=FakeAdapter())
    assert outcome.reason == "reference execution failed: RuntimeError"


def test_an_unavailable_reference_is_not_run_naming_the_reference_with_both_probes() -> None:
    reference = Reference(probe=Probe.unavailable("no numpy today", detail="numpy 0"))
    candidate = FakeAdapter()
    outcome = execute_check(GEMM, reference=reference, candidate=candidate)
    assert (outcome.status, outcome.reason) == (
        "not_run",
        f"reference backend {reference.spec}: no numpy today",
    )
    assert outcome.details == {"candidate": candidate.probe().detail, "reference": "numpy 0"}
    assert candidate.executed == 0


def test_a_reference_probe_error_is_failed_naming_the_reference_with_its_details() -> None:
    reference = Reference(probe=Probe.error("query crashed", detail="numpy ?"))
    outcome = execute_check(GEMM, reference=reference, candidate=FakeAdapter())
    assert (outcome.status, outcome.reason) == (
        "failed",
        f"reference backend {reference.spec}: backend availability query failed: query crashed",
    )
    assert outcome.details["reference"] == "numpy ?"


def test_an_unavailable_candidate_keeps_its_probe_detail() -> None:
    candidate = FakeAdapter(probe=Probe.unavailable("no device", detail="driver 1.2"))
    outcome = execute_check(GEMM, candidate=candidate)
    assert outcome.details == {"candidate": "driver 1.2"}


def test_a_refused_precision_quotes_the_adapters_reason() -> None:
    capabilities = Capabilities(precisions=("f32",), refusals={"f16": "no shader-f16 feature"})
    check = make_check("array_api_strict", "gemm", precision="f16")
    outcome = execute_check(check, candidate=Candidate(capabilities))
    assert (outcome.status, outcome.reason) == (
        "not_run",
        "candidate backend fake does not execute precision f16 (it executes: f32): "
        "no shader-f16 feature",
    )
    assert set(outcome.details) == {"candidate", "reference"}


def test_an_op_the_candidate_does_not_implement_is_not_run_with_its_reason() -> None:
    capabilities = Capabilities(
        ops=frozenset({"gemm"}), refusals={"rms-norm": "no reduction kernel yet"}
    )
    check = make_check("array_api_strict", "rms-norm")
    outcome = execute_check(check, candidate=Candidate(capabilities))
    assert (outcome.status, outcome.reason) == (
        "not_run",
        "candidate backend fake does not implement op rms-norm: no reduction kernel yet",
    )
    without_reason = execute_check(check, candidate=Candidate(Capabilities(ops=frozenset())))
    assert without_reason.reason == "candidate backend fake does not implement op rms-norm"


def test_backends_that_list_their_ops_run_a_listed_one() -> None:
    listed = Capabilities(ops=frozenset({"gemm"}))
    outcome = execute_check(
        GEMM, reference=Reference(capabilities=listed), candidate=Candidate(listed)
    )
    assert (outcome.status, outcome.reason) == ("passed", None)


def test_a_reference_without_f32_is_not_run_naming_the_reference() -> None:
    reference = Reference(capabilities=Capabilities(precisions=("f16",)))
    outcome = execute_check(GEMM, reference=reference, candidate=FakeAdapter())
    assert (outcome.status, outcome.reason) == (
        "not_run",
        f"reference backend {reference.spec} does not execute precision f32 (it executes: f16)",
    )


def test_a_capability_query_that_raises_is_failed_with_the_error_and_details() -> None:
    candidate = Candidate(OSError("sysfs unreadable"))  # type: ignore[arg-type]
    outcome = execute_check(GEMM, candidate=candidate)
    assert (outcome.status, outcome.reason) == (
        "failed",
        "capability query failed: OSError: sysfs unreadable",
    )
    assert set(outcome.details) == {"candidate", "reference"}


def test_a_reference_that_raises_is_failed_with_the_error_and_details() -> None:
    outcome = execute_check(
        GEMM, reference=Reference(fail=ValueError("bad layout")), candidate=FakeAdapter()
    )
    assert (outcome.status, outcome.reason) == (
        "failed",
        "reference execution failed: ValueError: bad layout",
    )
    assert set(outcome.details) == {"candidate", "reference"}


def test_preparing_inputs_that_raises_keeps_the_probe_details(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object) -> object:
        raise MemoryError("no room")

    monkeypatch.setattr(type(GEMM.op), "inputs", refuse)
    outcome = execute_check(GEMM, candidate=FakeAdapter())
    assert (outcome.status, outcome.reason) == (
        "failed",
        "preparing inputs failed: MemoryError: no room",
    )
    assert set(outcome.details) == {"candidate", "reference"}


def test_a_non_finite_reference_is_failed_and_the_candidate_never_runs() -> None:
    def poison(values: Any) -> Any:
        values[3] = np.inf
        return values

    candidate = FakeAdapter()
    outcome = execute_check(GEMM, reference=Reference(transform=poison), candidate=candidate)
    assert (outcome.status, outcome.reason) == (
        "failed",
        "reference contains a non-finite value at 3",
    )
    assert candidate.executed == 0


def test_the_reference_runs_as_the_reference_and_accumulates_in_float64(tmp_path: Path) -> None:
    reference = Reference()
    check = make_check("array_api_strict", "gemm", m=8, n=8, k=256)
    document = run_check(check, tmp_path / "r.json", reference=reference)
    assert reference.roles == ["reference"]
    assert document.result is not None
    assert document.result.reference is not None
    stored = decode_output(document.result.reference, "reference")
    a = random_vec(8 * 256, -1.0, 1.0, 42).astype(np.float64).reshape(8, 256)
    b = random_vec(8 * 256, -1.0, 1.0, 43).astype(np.float64).reshape(8, 256)
    # Bit for bit the float64 product rounded once (float32 accumulation differs in most).
    assert np.array_equal(stored, (a @ b.T).astype(np.float32).reshape(-1))


def test_the_report_records_the_references_own_output_storage() -> None:
    document = run_check(GEMM, reference=Reference(output_storage="f64"))
    assert document.executed_precision is not None
    assert document.executed_precision.reference_storage == "f64"


def test_a_wrong_precision_and_a_wrong_value_are_both_in_the_reason() -> None:
    class StoresF32AndIsOff(FakeAdapter):
        def storage_dtype(self, xp: Any, precision: Any) -> Any:
            return xp.float32

        def execute(self, *args: Any, **kwargs: Any) -> Execution:
            run = super().execute(*args, **kwargs)
            return dataclasses.replace(run, output=run.output * np.float32(1.5))

    check = make_check("array_api_strict", "gemm", m=4, n=6, k=5, precision="f16")
    outcome = execute_check(check, candidate=StoresF32AndIsOff())
    assert outcome.reason is not None
    numeric, _, precision = outcome.reason.rpartition("; ")
    assert numeric.startswith("NMSE ")
    assert precision == (
        "executed precision differs from the configured f16: the candidate stored inputs as "
        "f32 and its output as f32"
    )
    assert outcome.verdict is not None
    assert outcome.verdict.tolerance == check.max_nmse
    assert outcome.verdict.segments == ()


def test_segment_ulps_count_in_the_checks_precision(tmp_path: Path) -> None:
    # An f16 attention: each head's max_ulp counts float16 ulps, not float32 ones.
    check = make_check("fake", "attention", precision="f16")
    document = run_check(check, tmp_path / "r.json", candidate=FakeAdapter())
    assert document.result is not None
    assert document.result.status == "passed", document.result.reason
    assert document.segments
    assert document.result.reference is not None
    assert document.result.actual is not None
    reference = decode_output(document.result.reference, "reference")
    actual = decode_output(document.result.actual, "actual")
    for record in document.segments:
        pair = reference[record.start : record.stop], actual[record.start : record.stop]
        in_f16 = diff(*pair, max_nmse=1.0, ulp_dtype="f16").metrics
        in_f32 = diff(*pair, max_nmse=1.0, ulp_dtype="f32").metrics
        assert record.metrics is not None
        assert in_f16 is not None
        assert in_f32 is not None
        assert record.metrics.max_ulp == in_f16.max_ulp < in_f32.max_ulp
    assert replay(document).agrees


def test_a_shape_failure_before_the_comparison_keeps_the_earlier_reason() -> None:
    short = np.zeros(GEMM.expected_elements - 1, np.float32)
    outcome = Outcome("failed", "required backend execution failed: RuntimeError", reference=short)
    verdict = bind(outcome, GEMM)
    expected = (
        "required backend execution failed: RuntimeError; "
        f"reference output has {short.size} elements; configured shape requires "
        f"{GEMM.expected_elements}"
    )
    assert (outcome.status, outcome.reason) == ("failed", expected)
    assert verdict is not None
    assert (verdict.status, verdict.reason, verdict.tolerance) == ("failed", expected, 1e-7)


def test_an_outcome_that_never_compared_binds_to_no_verdict() -> None:
    outcome = Outcome("not_run", "no device")
    assert bind(outcome, GEMM) is None
    assert (outcome.status, outcome.reason, outcome.verdict) == ("not_run", "no device", None)


def test_the_report_records_the_time_the_check_took(tmp_path: Path) -> None:
    document = run_check(
        GEMM, tmp_path / "r.json", candidate=FakeAdapter(on_execute=lambda: time.sleep(0.05))
    )
    assert document.execution_elapsed_ms is not None
    assert 50.0 <= document.execution_elapsed_ms < 60_000.0


def test_a_check_that_breaks_after_the_report_exists_records_its_time_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        time.sleep(0.05)
        raise KeyError("label")

    monkeypatch.setattr(runner, "_final_document", broken)
    document = run_check(GEMM, tmp_path / "r.json")
    assert document.execution_elapsed_ms is not None
    assert 50.0 <= document.execution_elapsed_ms < 60_000.0


def test_an_outcome_that_failed_before_its_verdict_stays_failed_when_its_segments_agree() -> None:
    # Both outputs exist (something after the outputs failed), every segment agrees: the
    # segments are recorded, and the check is still failed, with its reason.
    check = make_check("array_api_strict", "attention")
    same = np.ones(check.expected_elements, np.float32)
    outcome = Outcome("failed", "comparison raised: RuntimeError", reference=same, actual=same)
    verdict = bind(outcome, check)
    assert verdict is not None
    assert verdict.segments
    assert (verdict.status, verdict.reason) == ("failed", "comparison raised: RuntimeError")
    assert (outcome.status, outcome.reason) == ("failed", "comparison raised: RuntimeError")
