"""Known divergences in a sweep: classification of rows, the verdict, and the three views.

The classification is tested on summary rows with the divergences injected; the end-to-end
tests at the bottom run ``diffcheck sweep`` with real workers, after patching what the
array_api_strict adapter declares in this (the parent) process only. No adapter's code
declares a fake divergence.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.adapters import KnownDivergence
from diffcheck.adapters.array_api import ArrayApiAdapter
from diffcheck.sweep.audit import audit_sweep
from diffcheck.sweep.console import print_summary
from diffcheck.sweep.html import render_html
from diffcheck.sweep.junit import junit_xml
from diffcheck.sweep.known import classify
from diffcheck.sweep.summary import (
    FloorNote,
    SegmentNmse,
    SummaryRow,
    SweepSummary,
    counts,
    group_rows,
    judge,
)
from diffcheck.sweep.worker import FAULT_ENV

TF32 = KnownDivergence(
    ops=("gemm",),
    precisions=("f32",),
    devices=("gpu",),
    reason="float32 matmuls run as TF32 on this GPU",
    upstream="https://example.org/docs#tf32",
    max_nmse=1.4e-6,
    measured_nmse=1.4e-07,
    bound_source="10x the worst NMSE observed upstream",
    twin="tf32 operands",
)
MEASURED = "NMSE 1.4e-07 is not below tolerance 1e-07"


def row(
    check_id: str,
    status: str = "failed",
    *,
    nmse: float | None = 1.4e-7,
    candidate: str = "fake:gpu",
    op: str = "gemm",
    precision: str = "f32",
    models: tuple[str, ...] = ("tf32 operands",),
) -> SummaryRow:
    reason = {"passed": None, "not_run": "fake:gpu is unavailable"}.get(status, MEASURED)
    floor = None
    if status == "failed" and nmse is not None:
        # What the report's precision floor found: the candidate is within the floor of
        # these twins' outputs (a TF32 GEMM by default).
        floor = FloorNote(
            floor_nmse=1e-14,
            derived_tolerance=1e-11,
            candidate_nmse=nmse,
            ratio=nmse / 1e-14,
            status="failed",
            match=models[0] if models else None,
            models=list(models),
        )
    values: dict[str, Any] = {
        "id": check_id,
        "reference": "numpy",
        "candidate": candidate,
        "required": True,
        "op": op,
        "shape": "64x32x32",
        "params": {"m": 64, "n": 32, "k": 32},
        "precision": precision,
        "seed": 42,
        "status": status,
        "reason": reason,
        "not_independent": None,
        "nmse": nmse,
        "tolerance": 1e-7,
        "ratio": None if nmse is None else nmse / 1e-7,
        "segments": [],
        "report": f"{check_id}.json",
        "elapsed_ms": 1.0,
        "worker_wall_s": 0.5,
        "worker": "exit 0",
        "parent_action": None,
        "resumed": False,
        "floor": floor,
        "known_divergence": None,
    }
    return SummaryRow(**values)


def test_a_measured_failure_that_matches_is_known() -> None:
    known = classify(row("a"), [TF32])
    assert known.outcome == "known"
    assert known.status == "failed"  # the report's verdict is kept as it is
    assert known.reason == MEASURED
    assert known.known_divergence is not None
    assert known.known_divergence.reason == TF32.reason
    assert known.known_divergence.upstream == TF32.upstream
    assert known.known_divergence.bound == (
        "modelled by tf32 operands, NMSE <= 1.4e-06 (measured 1.4e-07: 10x the worst NMSE "
        "observed upstream)"
    )


SENTINEL = (
    "NMSE 700.2 is not below tolerance 0.0000001; max_abs=12.9; DropFlush: NMSE 2800.5 is "
    "not below tolerance 0.0000001; max_abs=12.9"
)


def lifecycle_row(check_id: str, reason: str, nmse: float, drop_flush: float) -> SummaryRow:
    phases = [
        SegmentNmse(name=name, status="passed", nmse=1e-8)
        for name in ("initial", "reused_context", "independent_context")
    ]
    phases.append(
        SegmentNmse(
            name="drop_flush", status="failed" if drop_flush >= 1e-7 else "passed", nmse=drop_flush
        )
    )
    return row(check_id, nmse=nmse, candidate="mlx:gpu", op="context-lifecycle").model_copy(
        update={"reason": reason, "segments": phases}
    )


def test_the_issues_sentinel_in_drop_flush_is_not_known_and_fails_the_sweep() -> None:
    declared = KnownDivergence(
        ops=("context-lifecycle",),
        precisions=("f32",),
        devices=("gpu",),
        reason="TF32",
        upstream="https://example.org/tf32",
        max_nmse=1.4e-6,
        measured_nmse=1.4e-07,
        bound_source="10x the worst lifecycle NMSE measured with TF32",
        twin="tf32 operands",
    )
    sentinel = classify(lifecycle_row("sentinel", SENTINEL, 700.2, 2800.5), [declared])
    assert sentinel.outcome == "failed"
    assert sentinel.known_divergence is None
    assert judge([sentinel]) == (1, ["1 check failed"])
    # The same declaration still excuses what it explains: TF32's 1.4e-7 in one phase.
    tf32 = "DropFlush: NMSE 0.00000014 is not below tolerance 0.0000001; max_abs=0.0004"
    explained = classify(lifecycle_row("tf32", tf32, 6e-8, 1.4e-7), [declared])
    assert explained.outcome == "known"
    assert judge([explained]) == (0, [])


@pytest.mark.parametrize(
    "reason",
    [
        MEASURED + "; reference output has 7 elements; configured shape requires 8",
        MEASURED + "; executed precision differs from the configured f16: the candidate stored "
        "inputs as f32 and its output as f32",
        "required backend contains a non-finite value at 3",
    ],
)
def test_a_measured_nmse_with_another_failure_is_never_known(reason: str) -> None:
    failed = row("a").model_copy(update={"reason": reason})
    assert classify(failed, [TF32]).outcome == "failed"


def test_a_crash_or_timeout_is_never_excused() -> None:
    crashed = row("a", nmse=None).model_copy(update={"reason": "worker killed by SIGKILL (9)"})
    assert classify(crashed, [TF32]).outcome == "failed"
    assert classify(crashed, [TF32]).known_divergence is None


@pytest.mark.parametrize(
    "other",
    [
        {"op": "rms-norm"},
        {"precision": "f16"},
        {"candidate": "fake:cpu"},
        {"candidate": "fake"},  # the plain name: its device is not known to be the gpu
    ],
)
def test_a_failure_the_list_does_not_name_stays_failed(other: dict[str, Any]) -> None:
    assert classify(row("a", **other), [TF32]).outcome == "failed"


def test_an_inactive_divergence_excuses_nothing() -> None:
    off = KnownDivergence(
        ops=TF32.ops,
        precisions=TF32.precisions,
        reason="x",
        upstream="y",
        max_nmse=1.0,
        measured_nmse=0.1,
        bound_source="z",
        active=lambda: False,
        twin="tf32 operands",
    )
    assert classify(row("a"), [off]).outcome == "failed"
    assert not classify(row("b", "passed"), [off]).divergence_not_seen


def test_a_matching_pass_is_a_divergence_not_seen_and_not_run_is_unaffected() -> None:
    passed = classify(row("a", "passed", nmse=7e-8), [TF32])
    assert passed.outcome == "passed"
    assert passed.divergence_not_seen
    not_run = classify(row("b", "not_run", nmse=None), [TF32])
    assert not_run.outcome == "not_run"
    assert not_run.known_divergence is None


def rows() -> list[SummaryRow]:
    return [
        classify(row("known"), [TF32]),
        classify(row("unseen", "passed", nmse=7e-8), [TF32]),
        classify(row("plain-pass", "passed", nmse=1e-14, op="rms-norm"), [TF32]),
    ]


def test_known_failures_count_apart_and_do_not_fail_the_sweep() -> None:
    ordered = rows()
    assert counts(ordered).model_dump() == {
        "total": 3,
        "passed": 2,
        "failed": 0,
        "known": 1,
        "not_run": 0,
    }
    gemm = next(g for g in group_rows(ordered) if g.op == "gemm")
    assert (gemm.passed, gemm.failed, gemm.known, gemm.not_run) == (1, 0, 1, 0)
    assert judge(ordered) == (0, [])
    assert judge(ordered, strict_known=True) == (
        1,
        ["1 check failed with a known divergence (--strict-known)"],
    )


def test_an_unlisted_failure_still_fails_the_sweep() -> None:
    ordered = [*rows(), classify(row("wrong", op="rms-norm"), [TF32])]
    assert counts(ordered).failed == 1
    assert judge(ordered) == (1, ["1 check failed"])


def summary(*, strict_known: bool = False, checks: list[SummaryRow] | None = None) -> SweepSummary:
    ordered = rows() if checks is None else checks
    status, reasons = judge(ordered, strict_known=strict_known)
    return SweepSummary(
        matrix="m.toml",
        matrix_sha256="0" * 64,
        description="known divergences",
        diffcheck_version="0",
        executor="local, 1 jobs",
        timeout_s=60.0,
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        elapsed_s=1.0,
        counts=counts(ordered),
        exit_status=status,
        exit_reasons=reasons,
        strict_known=strict_known,
        unexpected_passes=[r.id for r in ordered if r.divergence_not_seen],
        left_out=[],
        groups=group_rows(ordered),
        checks=ordered,
    )


def cases(data: bytes) -> dict[str, ET.Element]:
    return {c.get("name") or "": c for c in ET.fromstring(data).iter("testcase")}


def test_junit_writes_a_known_failure_as_a_skip_with_the_reports_reason() -> None:
    data = junit_xml(summary())
    root = ET.fromstring(data)
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "0", "1")
    skipped = cases(data)["known"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == f"known divergence: {TF32.reason} ({TF32.upstream})"
    assert skipped.get("type") == "known_divergence"
    assert (skipped.text or "").startswith(MEASURED)
    out = cases(data)["unseen"].find("system-out")
    assert out is not None
    assert "known divergence: float32 matmuls run as TF32" in (out.text or "")
    assert "not seen, the check passed" in (out.text or "")


def test_junit_under_strict_known_writes_a_failure() -> None:
    data = junit_xml(summary(strict_known=True))
    assert (ET.fromstring(data).get("failures"), ET.fromstring(data).get("skipped")) == ("1", "0")
    failure = cases(data)["known"].find("failure")
    assert failure is not None
    assert failure.get("message") == MEASURED
    assert "(--strict-known)" in (failure.text or "")


def test_the_page_badges_known_failures_and_links_upstream() -> None:
    page = render_html(summary())
    assert "<tr class='check status-known' data-status='known' id='known'>" in page
    assert '<span class="badge known">known</span>' in page
    assert f"<strong>known divergence:</strong> {TF32.reason}" in page
    assert f"<a href='{TF32.upstream}' rel='noreferrer'>" in page
    assert "Known divergences not seen (these checks passed)" in page
    assert "<a href='#unseen'>unseen</a>" in page
    assert "Sweep passed" in page


def test_the_console_shows_the_known_column_and_lines() -> None:
    stream = io.StringIO()
    print_summary(summary(), [], stream=stream)
    text = stream.getvalue()
    header = next(line for line in text.splitlines() if "not_run" in line and "pair" in line)
    assert "known" in header
    assert f"known known: {MEASURED}" in text
    assert "known divergence not seen in unseen: passed, nmse 7e-08 (tolerance 1e-07)" in text
    assert f"known divergence of fake:gpu: {TF32.reason} (upstream: {TF32.upstream})" in text
    assert (
        "3 checks: 2 passed, 0 failed, 1 known, 0 not_run, 1 known divergence(s) not seen" in text
    )
    assert "Sweep passed: all 3 checks ran" in text


# -- end to end: diffcheck sweep, real workers ---------------------------------------------

GEMM = KnownDivergence(
    ops=("gemm",),
    precisions=("f32",),
    reason="test-only: float32 GEMM differs from a float64-accumulated reference",
    upstream="https://example.org/issues/42",
    max_nmse=1e-10,
    measured_nmse=1e-11,
    bound_source="test-only: float32 rounding of a 35-term dot product stays far below it",
    twin="float32",
)
#: A measured gemm failure (tolerance 1e-30) and a gemm that passes.
MATRIX = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
required = true
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 64, n = 33, k = 35, seeds = [7], max_nmse = 1e-30 }]
"""
PASSES = f"{STRICT}/gemm/gemm-1x3x5-f32-s42"
FAILS = f"{STRICT}/gemm/gemm-64x33x35-f32-s7"
LIFECYCLE = f"{STRICT}/context-lifecycle/context-lifecycle-3x33x35-f32-s42"


@pytest.fixture
def declares_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    """array_api_strict declares GEMM, in the sweep parent only (workers need not know)."""
    monkeypatch.setattr(ArrayApiAdapter, "known_divergences", lambda self: (GEMM,))


@pytest.mark.usefixtures("declares_gemm")
def test_a_sweep_with_a_known_failure_passes_and_reports_it(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun]
) -> None:
    matrix = write_matrix(tmp_path, MATRIX)
    run = sweep_cli(matrix, tmp_path / "out")
    assert run.code == 0, run.out
    summary = run.summary
    assert summary["counts"] == {"total": 2, "passed": 1, "failed": 0, "known": 1, "not_run": 0}
    assert summary["exit_reasons"] == []
    assert summary["unexpected_passes"] == [PASSES]
    known = run.rows()[FAILS]
    assert known["status"] == "failed"
    assert known["known_divergence"] == {
        "reason": GEMM.reason,
        "upstream": GEMM.upstream,
        "bound": GEMM.bound,
    }
    # The report is exactly as honest as without the list: failed, measured, with its reason.
    report = json.loads((run.directory / known["report"]).read_text())
    assert report["result"]["status"] == "failed"
    assert report["result"]["metrics"]["nmse"] == known["nmse"]
    assert report["result"]["reason"] == known["reason"]
    assert f"known {FAILS}: NMSE" in run.out
    assert f"known divergence not seen in {PASSES}: passed" in run.out
    assert f"known divergence of array_api_strict: {GEMM.reason}" in run.out
    assert "Sweep passed: all " in run.out
    skipped = cases((run.directory / "junit.xml").read_bytes())[FAILS].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == f"known divergence: {GEMM.reason} ({GEMM.upstream})"
    page = (run.directory / "index.html").read_text()
    assert "data-status='known'" in page
    assert f"<a href='{GEMM.upstream}' rel='noreferrer'>" in page

    strict = sweep_cli(matrix, tmp_path / "out", "--resume", "--strict-known")
    assert strict.code == 1
    assert strict.summary["strict_known"] is True
    assert strict.summary["exit_reasons"] == [
        "1 check failed with a known divergence (--strict-known)"
    ]
    assert cases((run.directory / "junit.xml").read_bytes())[FAILS].find("failure") is not None
    # Replay re-derives it under the stored --strict-known, the known row and the unseen pass.
    audit = audit_sweep(run.directory)
    assert audit.disagreements == []
    assert audit.derived is not None
    assert audit.derived.checks[1].known_divergence is not None
    path = run.directory / "summary.json"
    path.write_text(json.dumps(strict.summary | {"unexpected_passes": []}))
    assert audit_sweep(run.directory).disagreements == [
        f"summary.json: unexpected_passes: stored [], derived ['{PASSES}']"
    ]


@pytest.mark.usefixtures("declares_gemm")
def test_a_crash_and_an_unlisted_failure_still_fail_the_sweep(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    lifecycle = (
        "[ops.context-lifecycle]\n"
        "shapes = [{ tokens = 3, intermediate = 33, k = 35, max_nmse = 1e-30 }]\n"
    )
    matrix = write_matrix(tmp_path, MATRIX + lifecycle)
    monkeypatch.setenv(FAULT_ENV, f"{FAILS}:kill")
    run = sweep_cli(matrix, tmp_path / "out")
    assert run.code == 1
    rows_by_id = run.rows()
    crashed = rows_by_id[FAILS]
    assert (crashed["status"], crashed["nmse"], crashed["known_divergence"]) == (
        "failed",
        None,
        None,
    )
    assert "SIGKILL" in crashed["reason"]
    assert rows_by_id[LIFECYCLE]["status"] == "failed"  # the list names gemm only
    assert rows_by_id[LIFECYCLE]["known_divergence"] is None
    assert run.summary["counts"]["failed"] == 2
    assert run.summary["counts"]["known"] == 0
    assert run.summary["exit_reasons"] == ["2 checks failed"]
    assert run.summary["unexpected_passes"] == [PASSES]


def test_an_adapter_whose_divergence_list_raises_excuses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tomllib

    from diffcheck.adapters.array_api import ArrayApiAdapter
    from diffcheck.sweep.matrix import parse_matrix
    from diffcheck.sweep.plan import plan_matrix

    def broken(self: object) -> tuple[object, ...]:
        raise RuntimeError("a bug in the list")

    monkeypatch.setattr(ArrayApiAdapter, "known_divergences", broken)
    matrix = parse_matrix(
        tomllib.loads(
            'schema_version = 1\n[[pairs]]\ncandidate = "array_api_strict"\n'
            "[ops.gemm]\nshapes = [{ m = 1, n = 3, k = 5 }]\n"
        )
    )
    (planned,) = plan_matrix(matrix).checks
    assert planned.pair.known_divergences == ()
    assert planned.pair.unresolved is None


TIGHT = KnownDivergence(
    ops=("gemm",),
    precisions=("f32",),
    reason="test-only: declared, with a ceiling below what the check measures",
    upstream="https://example.org/issues/43",
    max_nmse=1e-40,
    measured_nmse=1e-41,
    bound_source="test-only: far below float32 rounding, so nothing measured fits under it",
    twin="float32",
)
ONLY_FAILING = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
required = true
[ops.gemm]
shapes = [{ m = 64, n = 33, k = 35, seeds = [7], max_nmse = 1e-30 }]
"""


def test_a_sweep_of_only_failures_over_the_ceiling_exits_nonzero(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ArrayApiAdapter, "known_divergences", lambda self: (TIGHT,))
    run = sweep_cli(write_matrix(tmp_path, ONLY_FAILING), tmp_path / "out")
    assert run.code == 1
    row = run.rows()[FAILS]
    assert row["status"] == "failed"
    assert row["nmse"] > TIGHT.max_nmse
    assert row["known_divergence"] is None
    assert run.summary["counts"]["known"] == 0
    assert run.summary["exit_reasons"] == ["1 check failed"]


def test_junit_cases_name_their_check_and_the_suites_count_what_each_holds() -> None:
    one_library = row("one-library", "passed", nmse=1e-14, candidate="fastlib").model_copy(
        update={"not_independent": "NOT INDEPENDENT: both sides returned numpy arrays"}
    )
    ordered = [
        *rows(),
        row("absent", "not_run", nmse=None).model_copy(update={"worker_wall_s": None}),
        one_library,
    ]
    data = junit_xml(summary(checks=ordered))
    root = ET.fromstring(data)
    assert [root.get(k) for k in ("tests", "failures", "errors", "skipped")] == ["5", "1", "0", "2"]
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert [suites["numpy -> fake:gpu"].get(k) for k in ("tests", "failures", "skipped")] == [
        "4",
        "0",
        "2",
    ]
    assert [suites["numpy -> fastlib"].get(k) for k in ("tests", "failures", "skipped")] == [
        "1",
        "1",
        "0",
    ]
    found = cases(data)
    assert found["known"].attrib == {
        "classname": "diffcheck.fake:gpu.gemm",
        "name": "known",
        "time": "0.500",
        "file": "known.json",
    }
    assert found["absent"].get("time") == "0.000"  # no worker ran
    skipped = found["absent"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "fake:gpu is unavailable"
    failure = found["one-library"].find("failure")
    assert failure is not None
    assert failure.get("type") == "not_independent"
    assert failure.get("message") == "NOT INDEPENDENT: both sides returned numpy arrays"
    assert (failure.text or "").startswith("status passed, not counted: gemm 64x32x32 f32 seed 42")
    assert counts(ordered).model_dump() == {
        "total": 5,
        "passed": 2,
        "failed": 1,
        "known": 1,
        "not_run": 1,
    }
    assert judge(ordered) == (
        1,
        [
            "1 check passed with both sides from one library (NOT INDEPENDENT: never a pass "
            "for the backend)",
            "required pair numpy -> fake:gpu has 1 not_run check",
        ],
    )


def test_a_groups_worst_check_is_its_largest_ratio_and_not_run_counts_apart() -> None:
    # Row order and a zero NMSE matter: the worst is the largest ratio, whatever comes first.
    ordered = [
        row("exact", "passed", nmse=0.0),
        row("close", "passed", nmse=5e-8),
        row("over", nmse=3e-7),
        row("under", "passed", nmse=2e-8),
        row("absent", "not_run", nmse=None),
        row("known", nmse=1.4e-7),
    ]
    ordered[-1] = classify(ordered[-1], [TF32])
    [gemm] = group_rows(ordered)
    assert gemm.model_dump() == {
        "reference": "numpy",
        "candidate": "fake:gpu",
        "required": True,
        "op": "gemm",
        "passed": 3,
        "failed": 1,
        "known": 1,
        "not_run": 1,
        "worst_nmse": 3e-7,
        "worst_tolerance": 1e-7,
        "worst_ratio": 3e-7 / 1e-7,
        "worst_check": "over",
    }
    [nearly] = group_rows(ordered[:2])  # an exact 0.0 ratio is measured and the smallest
    assert (nearly.worst_check, nearly.worst_ratio) == ("close", 5e-8 / 1e-7)
    [unmeasured] = group_rows([row("absent", "not_run", nmse=None)])
    assert (unmeasured.not_run, unmeasured.worst_check, unmeasured.worst_ratio) == (1, None, None)


def test_a_sweep_where_nothing_ran_fails_and_says_why() -> None:
    absent = [row(f"absent-{i}", "not_run", nmse=None) for i in range(2)]
    assert judge(absent) == (
        1,
        [
            "required pair numpy -> fake:gpu has 2 not_run checks",
            "no check executed (every check is not_run)",
        ],
    )
    optional = [a.model_copy(update={"required": False}) for a in absent]
    assert judge(optional) == (1, ["no check executed (every check is not_run)"])
    assert judge([]) == (1, ["no check to run"])
    assert judge([*optional, row("ran", "passed", nmse=1e-9)]) == (0, [])


def test_junit_without_a_reason_names_the_status_and_a_plain_pass_is_its_detail() -> None:
    failed = row("failed-bare").model_copy(update={"reason": None})
    absent = row("absent-bare", "not_run", nmse=None).model_copy(update={"reason": None})
    plain = row("plain", "passed", nmse=1e-14)
    found = cases(junit_xml(summary(checks=[failed, absent, plain])))
    failure = found["failed-bare"].find("failure")
    skipped = found["absent-bare"].find("skipped")
    out = found["plain"].find("system-out")
    assert failure is not None
    assert skipped is not None
    assert out is not None
    assert (failure.get("message"), skipped.get("message")) == ("failed", "not_run")
    assert out.text == (
        "gemm 64x32x32 f32 seed 42: nmse 1e-14 (tolerance 1e-07); worker exit 0; report plain.json"
    )


def test_junit_suites_carry_their_totals_times_and_start_and_the_file_is_utf8() -> None:
    ordered = [
        *rows(),
        row("absent", "not_run", nmse=None).model_copy(update={"worker_wall_s": None}),
    ]
    data = junit_xml(summary(strict_known=True, checks=ordered))
    assert data.startswith(b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites ")
    root = ET.fromstring(data)
    assert root.get("errors") == "0"
    suites = {s.get("name"): s.attrib for s in root.iter("testsuite")}
    assert suites == {
        "numpy -> fake:gpu": {
            "name": "numpy -> fake:gpu",
            "tests": "4",
            "failures": "1",
            "errors": "0",
            "skipped": "1",
            "time": "1.500",  # three workers of 0.5 s and one that never ran
            "timestamp": "2026-01-01T00:00:00+00:00",
        }
    }


def test_the_device_is_everything_after_the_backends_first_colon() -> None:
    second_card = KnownDivergence(
        ops=("gemm",),
        precisions=("f32",),
        devices=("cuda:1",),
        reason="float32 matmuls run as TF32 on the second card",
        upstream="https://example.org/docs#tf32",
        max_nmse=1.4e-6,
        measured_nmse=1.4e-07,
        bound_source="10x the worst NMSE observed upstream",
        twin="tf32 operands",
    )
    assert classify(row("a", candidate="torch:cuda:1"), [second_card]).outcome == "known"
    assert classify(row("b", candidate="torch:cuda:0"), [second_card]).outcome == "failed"
