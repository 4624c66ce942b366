"""The pipeline's statuses (the reference tool's required.rs) and the fault-injecting adapter."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from diffcheck.adapters import Probe
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report.models import MetricsRecord
from diffcheck.report.replay import load_report, replay
from diffcheck.runner import execute_check, run_check
from fakes import FakeAdapter, fake_name

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")


def test_unavailable_backend_runs_neither_reference_nor_candidate() -> None:
    calls: list[str] = []

    class CountingReference(NumpyAdapter):
        def execute(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def, override]
            calls.append("reference")
            return super().execute(*args, **kwargs)  # type: ignore[arg-type]

    candidate = FakeAdapter(probe=Probe.unavailable("no fake device is available"))
    outcome = execute_check(
        make_check("array_api_strict", "gemm"), reference=CountingReference(), candidate=candidate
    )
    assert outcome.status == "not_run"
    assert outcome.reason == "no fake device is available"
    assert outcome.reference is None
    assert outcome.actual is None
    assert calls == []
    assert candidate.executed == 0


def test_probe_error_is_failed_not_skipped() -> None:
    outcome = execute_check(
        make_check("fake", "gemm"),
        candidate=FakeAdapter(probe=Probe.error("driver query crashed")),
    )
    assert outcome.status == "failed"
    assert outcome.reason == "backend availability query failed: driver query crashed"


def test_a_raising_probe_never_escapes() -> None:
    class Exploding(FakeAdapter):
        def _probe(self) -> Probe:
            raise OSError("libcuda.so: cannot open shared object file")

    probe = Exploding().probe()
    assert probe.status == "error"
    assert "libcuda.so" in (probe.reason or "")


def test_candidate_exception_is_failed_with_the_message_and_reference_kept() -> None:
    outcome = execute_check(make_check("fakeraise", "gemm"), candidate=FakeAdapter("raise"))
    assert outcome.status == "failed"
    assert (
        outcome.reason
        == "required backend execution failed: RuntimeError: device lost during dispatch"
    )
    assert outcome.reference is not None
    assert outcome.actual is None


def test_nan_tolerance_fails_before_the_probe() -> None:
    candidate = FakeAdapter()
    outcome = execute_check(
        make_check("array_api_strict", "gemm"), tolerance=math.nan, candidate=candidate
    )
    assert outcome.status == "failed"
    assert outcome.reason == "tolerance must be finite and strictly positive"
    assert candidate.executed == 0


def test_empty_reference_prevents_candidate_dispatch() -> None:
    class EmptyReference(NumpyAdapter):
        def execute(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def, override]
            run = super().execute(*args, **kwargs)  # type: ignore[arg-type]
            return type(run)(run.output[:0], "f32", "f32", "x", "y")

    candidate = FakeAdapter()
    outcome = execute_check(
        make_check("array_api_strict", "gemm"), reference=EmptyReference(), candidate=candidate
    )
    assert (outcome.status, outcome.reason) == ("failed", "reference output is empty")
    assert candidate.executed == 0


def test_unsupported_precision_is_not_run_with_the_reason() -> None:
    outcome = execute_check(make_check("fake", "gemm", precision="bf16"), candidate=FakeAdapter())
    assert outcome.status == "not_run"
    assert (
        outcome.reason
        == "candidate backend fake does not execute precision bf16 (it executes: f32, f16)"
    )


@pytest.mark.parametrize(
    ("fault", "op", "reason_part"),
    [
        ("scale_segment", "context-lifecycle", "DropFlush: NMSE"),
        ("nan", "gemm", "required backend contains a non-finite value at 1024"),
        ("truncate", "silu-mul", "output length mismatch: reference=1024 actual=1023"),
        ("empty", "rms-norm", "required backend output is empty"),
        ("raise", "rms-norm", "device lost during dispatch"),
        ("skip_copy", "context-lifecycle", "Initial: NMSE"),
        ("reuse_output", "context-lifecycle", "ReusedContext: NMSE"),
        ("no_wait", "context-lifecycle", "Initial: NMSE"),
    ],
)
def test_every_fault_is_caught_with_the_right_status_and_reason(
    tmp_path: Path, fault: str, op: str, reason_part: str
) -> None:
    report = tmp_path / "r.json"
    document = run_check(make_check(fake_name(fault), op), report, candidate=FakeAdapter(fault))
    assert document.result is not None
    assert document.result.status == "failed"
    assert reason_part in (document.result.reason or "")
    assert "submission_metrics" not in json.loads(report.read_text())
    assert replay(document).agrees


def test_scaled_last_quarter_of_a_plain_op_is_caught_by_the_aggregate() -> None:
    outcome = execute_check(
        make_check("fakescalesegment", "gemm"), candidate=FakeAdapter("scale_segment")
    )
    assert outcome.status == "failed"
    assert (outcome.reason or "").startswith("NMSE")


def test_the_fault_free_fake_passes_through_the_lifecycle_program(tmp_path: Path) -> None:
    document = run_check(
        make_check("fake", "context-lifecycle"),
        tmp_path / "r.json",
        candidate=FakeAdapter(),
    )
    assert document.result is not None
    assert document.result.status == "passed", document.result
    assert document.submission_metrics is not None
    assert len(document.submission_metrics) == 4
    assert document.segments is not None
    assert [s.status for s in document.segments] == ["passed"] * 4


def test_truncated_pair_that_compares_equal_still_fails_shape_binding(tmp_path: Path) -> None:
    class TruncatingReference(NumpyAdapter):
        def execute(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def, override]
            run = super().execute(*args, **kwargs)  # type: ignore[arg-type]
            return type(run)(run.output[:-1], "f32", "f32", "x", "y")

    document = run_check(
        make_check("faketruncate", "gemm"),
        reference=TruncatingReference(),
        candidate=FakeAdapter("truncate"),
    )
    assert document.result is not None
    assert document.result.status == "failed"
    assert "configured shape requires 2048" in (document.result.reason or "")


@pytest.mark.parametrize(
    ("fault", "op"),
    [
        ("none", "gemm"),
        ("scale_segment", "gemm"),
        ("scale_segment", "context-lifecycle"),
        ("nan", "silu-mul"),
        ("truncate", "rms-norm"),
        ("skip_copy", "context-lifecycle"),
    ],
)
def test_live_and_replayed_verdicts_agree(
    fault: str, op: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The written file is what is replayed: read back by load_report and by the CLI.
    path = tmp_path / "r.json"
    live = run_check(make_check(fake_name(fault), op), path, candidate=FakeAdapter(fault))
    assert live.result is not None
    stored = load_report(path)
    assert stored == live
    replayed = replay(stored)
    assert replayed.agrees, replayed.disagreements
    assert replayed.verdict is not None
    assert replayed.verdict.status == live.result.status
    assert replayed.verdict.reason == live.result.reason
    assert MetricsRecord.of(replayed.verdict.metrics) == live.result.metrics
    judged = [(s.segment.name, s.status) for s in replayed.verdict.segments]
    assert judged == [(s.name, s.status) for s in live.segments or ()]
    # The fake computes with NumPy, the reference's own library: its report records numpy
    # on both sides (a lifecycle through its command device returns host values only), and
    # such a pass is, like a self-test, never a pass for the backend.
    one_library = live.one_library
    assert one_library == (op != "context-lifecycle")
    passes = fault == "none" and not one_library
    assert main(["replay", "--require-pass", str(path)]) == (0 if passes else 1)
    lines = capsys.readouterr().out.splitlines()
    marker = (
        " (NOT INDEPENDENT: one library on both sides, not a pass for the backend)"
        if one_library and live.result.status == "passed"
        else ""
    )
    assert lines[0] == f"{path}: agrees: {live.result.status}{marker}"
    assert f"{path}: checked: reference recomputed from config: bit-exact" in lines
