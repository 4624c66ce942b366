"""``sweep --resume`` reuses a stored report only when it is the planned check and replays.

Each way a report can stand in for a check it is not (a self-test, another reference, a
not_run, a forged not_run over a failure) is tried end to end, and the rule itself is tried
with generated pairs of checks that differ in one planned field.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.config import Check, make_check
from diffcheck.report.read import report_from
from diffcheck.report.replay import load_report, replay
from diffcheck.runner import completed_document, result_record, run_check
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.records import new_document, write_new_final
from diffcheck.sweep.reuse import plan_mismatch, replay_problem, reuse_problem
from diffcheck.sweep.worker import FAULT_ENV

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 4, n = 3, k = 5, seeds = [7] }]
"""
FIRST, SECOND = f"{STRICT}/gemm/gemm-1x3x5-f32-s42", f"{STRICT}/gemm/gemm-4x3x5-f32-s7"

Sweep = Callable[..., SweepRun]


def _planned(matrix: Path, check_id: str) -> Check:
    return next(c.check for c in plan_matrix(load_matrix(matrix)).checks if c.id == check_id)


def _replace(path: Path, document_bytes: bytes) -> None:
    path.unlink()
    path.write_bytes(document_bytes)


def _made_with(check: Check, tmp_path: Path) -> bytes:
    """A genuine report of ``check``, written elsewhere (its bytes)."""
    path = tmp_path / "elsewhere.json"
    run_check(check, path)
    data = path.read_bytes()
    path.unlink()
    return data


@pytest.mark.parametrize(
    ("reference", "self_test", "expected"),
    [
        (
            "array_api_strict",
            True,
            "reference_backend is 'array_api_strict', the plan's is 'numpy'",
        ),
        ("example", False, "reference_backend is 'example', the plan's is 'numpy'"),
    ],
    ids=["self-test", "another-reference"],
)
def test_a_genuine_report_of_another_check_is_not_reused(
    tmp_path: Path, sweep_cli: Sweep, reference: str, self_test: bool, expected: str
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    planned = _planned(matrix, FIRST)
    # Same config as the plan (candidate, op, params, seed, tolerance): only the reference
    # and the self-test marker differ. Such a report replays on its own.
    other = make_check(
        planned.require_backend,
        "gemm",
        m=1,
        n=3,
        k=5,
        reference=reference,
        allow_self_test=self_test,
    )
    assert other.record() == planned.record()
    copied = _made_with(other, tmp_path)
    assert replay(report_from(json.loads(copied), "copied")).agrees
    report = out / f"{FIRST}.json"
    _replace(report, copied)
    resumed = sweep_cli(matrix, out, "--resume")
    assert resumed.code == 0, resumed.err
    rows = resumed.rows()
    assert rows[FIRST]["resumed"] is False
    assert rows[FIRST]["reference"] == "numpy"
    assert load_report(report).reference_backend == "numpy"  # rerun against the plan's
    assert (out / f"{FIRST}.unverified.json").read_bytes() == copied  # kept aside
    assert rows[SECOND]["resumed"] is True
    assert resumed.err.count("\n") == 1
    assert f"it is not a report of the planned check: {expected}" in resumed.err


def test_a_failure_rewritten_as_not_run_is_rerun(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    monkeypatch.setenv(FAULT_ENV, f"{SECOND}:exit")
    assert sweep_cli(matrix, out).code == 1
    report = out / f"{SECOND}.json"
    data = json.loads(report.read_text())
    assert data["result"]["status"] == "failed"
    # The careful forger: a consistent not_run, nothing compared, nothing to replay against.
    data["result"].update(status="not_run", reason="backend unavailable", metrics=None)
    data["result"].update(reference=None, actual=None)
    data.pop("executed_precision", None)
    data["executed_precision"] = None
    data.pop("segments", None)
    forged = json.dumps(data).encode()
    assert replay(report_from(json.loads(forged), "forged")).agrees  # only the rule stops it
    _replace(report, forged)
    resumed = sweep_cli(matrix, out, "--resume")
    rows = resumed.rows()
    assert rows[SECOND]["resumed"] is False
    assert rows[SECOND]["status"] == "failed"  # rerun: the fault is still there
    assert resumed.code == 1
    assert (out / f"{SECOND}.not_run.json").read_bytes() == forged


def test_a_stale_not_run_is_rerun_once_the_backend_is_here(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    report = out / f"{FIRST}.json"
    report.unlink()
    write_new_final(report, _planned(matrix, FIRST), "not_run", "array_api_strict was missing")
    resumed = sweep_cli(matrix, out, "--resume")
    assert resumed.code == 0, resumed.err
    assert resumed.rows()[FIRST]["resumed"] is False
    assert resumed.rows()[FIRST]["status"] == "passed"
    assert load_report(report).result is not None
    assert resumed.err == ""  # an expected rerun, not a warning


def test_a_not_run_report_is_never_reusable() -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    document = completed_document(
        new_document(check), result_record(check, "not_run", "not here"), None
    )
    assert replay(document).agrees
    assert reuse_problem(check, document) == "a not_run report is never reused (nothing ran)"


# One planned field changed at a time; every one must make the report another check's.
_VARIANTS: dict[str, dict[str, object]] = {
    "reference": {"reference": "example"},
    "self-test": {"reference": "array_api_strict", "allow_self_test": True},
    "seed": {"seed": 43},
    "tolerance": {"max_nmse": 2e-7},
    "params": {"k": 6},
    "candidate": {"require_backend": "numpy", "reference": "array_api_strict"},
}


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    m=st.integers(1, 4),
    n=st.integers(1, 4),
    k=st.integers(1, 4),
    seed=st.integers(0, 2**64 - 2),
    variant=st.sampled_from([None, *_VARIANTS]),
)
def test_reuse_needs_the_planned_check_in_every_field(
    m: int, n: int, k: int, seed: int, variant: str | None
) -> None:
    base: dict[str, object] = {
        "require_backend": "array_api_strict",
        "reference": "numpy",
        "seed": seed,
        "m": m,
        "n": n,
        "k": k,
    }
    planned = make_check(op="gemm", **base)  # type: ignore[arg-type]
    made = make_check(op="gemm", **{**base, **(_VARIANTS[variant] if variant else {})})  # type: ignore[arg-type]
    document = run_check(made, None)
    assert replay(document).agrees  # a genuine report, of whichever check it is
    problem = reuse_problem(planned, document)
    if variant is None:
        assert problem is None
        assert plan_mismatch(planned, document) is None
    else:
        assert problem is not None
        assert problem.startswith("it is not a report of the planned check: ")


def test_a_self_test_marker_or_another_coverage_is_another_check() -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    document = run_check(check, None)
    assert reuse_problem(check, document) is None
    marked = document.model_copy(
        update={"coverage": document.coverage + " SELF-TEST: the candidate is the reference."}
    )
    assert plan_mismatch(check, marked) == "it is a self-test report, the planned check is not"
    other = document.model_copy(update={"coverage": "whole output"})
    assert plan_mismatch(check, other) == "its coverage is not the planned check's"
    for name, value in (
        ("output_shape", (2, 2)),
        ("expected_output_elements", 4),
        ("reference_backend", "numpy:cpu"),
    ):
        changed = document.model_copy(update={name: value})
        problem = plan_mismatch(check, changed)
        assert problem is not None
        assert problem.startswith(f"{name} is ")
    assert document.result is not None
    for name, value in (
        ("op", "GEMM"),
        ("backend", "numpy"),
        ("seed", 7),
        ("tolerance_f64_bits", "0"),
    ):
        result = document.result.model_copy(update={name: value})
        problem = plan_mismatch(check, document.model_copy(update={"result": result}))
        assert problem is not None
        assert problem.startswith(f"result.{name} is ")


def test_not_run_records_do_not_pile_up_across_resumes(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(
        tmp_path,
        TWO.replace('candidate = "array_api_strict"', 'candidate = "cupy:nosuchdevice"'),
    )
    out = tmp_path / "out"
    sweep_cli(matrix, out)
    for _ in range(3):
        sweep_cli(matrix, out, "--resume")
    asides = sorted(p.name for p in out.rglob("*.not_run*.json"))
    stems = {name.split(".not_run")[0] for name in asides}
    assert len(asides) == len(stems) == 2, asides  # one kept aside per check, the latest
    assert not any("not_run-" in name for name in asides)


def test_a_directory_at_the_not_run_name_is_never_replaced(tmp_path: Path) -> None:
    from diffcheck.sweep.records import set_aside_latest

    report = tmp_path / "c.json"
    report.write_text("{}")
    (tmp_path / "c.not_run.json").mkdir()
    aside = set_aside_latest(report, label="not_run")
    assert aside.name == "c.not_run-2.json"
    assert (tmp_path / "c.not_run.json").is_dir()


#: The replay module itself: ``diffcheck.report.replay`` as an attribute is its function.
REPLAY_MODULE = importlib.import_module("diffcheck.report.replay")


class _Replayed:
    """What :func:`replay_problem` reads of a replay: whether it agrees, and where not."""

    def __init__(self, disagreements: list[str]) -> None:
        self.disagreements = disagreements
        self.agrees = not disagreements


@pytest.mark.parametrize(
    ("disagreements", "line"),
    [
        ([], None),
        (
            ["result.status: stored passed, derived failed"],
            "result.status: stored passed, derived failed",
        ),
        (["first", "second", "third"], "first (and 2 more)"),
    ],
)
def test_replay_problem_names_the_first_disagreement_and_counts_the_rest(
    monkeypatch: pytest.MonkeyPatch, disagreements: list[str], line: str | None
) -> None:
    monkeypatch.setattr(REPLAY_MODULE, "replay", lambda _: _Replayed(disagreements))
    assert replay_problem(new_document(make_check("array_api_strict", "gemm"))) == line


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (ValueError("no such op\nwith a second line"), "replay failed: ValueError: no such op"),
        (LookupError(), "replay failed: LookupError: "),
    ],
)
def test_replay_problem_says_in_one_line_when_replay_cannot_interpret_a_field(
    monkeypatch: pytest.MonkeyPatch, error: Exception, line: str
) -> None:
    def fails(_: object) -> None:
        raise error

    monkeypatch.setattr(REPLAY_MODULE, "replay", fails)
    assert replay_problem(new_document(make_check("array_api_strict", "gemm"))) == line


def test_a_lifecycle_report_matches_its_plan_with_the_coverage_of_what_ran(
    tmp_path: Path,
) -> None:
    # array_api_strict has no command contexts: the lifecycle runs as four chains, and its
    # report's coverage says so; either coverage text of a lifecycle plan may match.
    check = make_check("array_api_strict", "context-lifecycle", tokens=3, intermediate=33, k=35)
    path = tmp_path / "lifecycle.json"
    run_check(check, path)
    document = load_report(path)
    assert document.coverage.startswith("Four independent")
    assert plan_mismatch(check, document) is None
    phases = document.model_copy(update={"coverage": check.op.coverage})
    assert plan_mismatch(check, phases) is None  # what a backend with contexts says
    edited = document.model_copy(update={"coverage": document.coverage + " (edited)"})
    assert plan_mismatch(check, edited) == "its coverage is not the planned check's"
    other = make_check("array_api_strict", "context-lifecycle", tokens=3, intermediate=33, k=34)
    assert plan_mismatch(other, document) == "its config is not the planned check's"
    storage = document.configured_precision.model_copy(update={"reference_storage": "f16"})
    assert plan_mismatch(check, document.model_copy(update={"configured_precision": storage})) == (
        "configured_precision is ('f16', 'f32', 'f32'), the plan's is ('f32', 'f32', 'f32')"
    )


def test_a_planned_self_test_needs_a_report_that_says_so(tmp_path: Path) -> None:
    check = make_check("numpy:cpu", "gemm", m=1, n=3, k=5, allow_self_test=True)
    path = tmp_path / "self.json"
    run_check(check, path)
    document = load_report(path)
    assert plan_mismatch(check, document) is None
    quiet = document.coverage.split(" SELF-TEST:")[0]
    assert plan_mismatch(check, document.model_copy(update={"coverage": quiet})) == (
        "the planned check is a self-test, the report does not say so"
    )


def test_a_complete_record_whose_completed_flag_is_false_is_incomplete(tmp_path: Path) -> None:
    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    path = tmp_path / "r.json"
    run_check(check, path)
    document = load_report(path)
    assert reuse_problem(check, document) is None
    assert reuse_problem(check, document.model_copy(update={"completed": False})) == (
        "it is incomplete"
    )
    assert document.result is not None
    forged = document.result.model_copy(update={"status": "failed", "reason": "forged"})
    problem = reuse_problem(check, document.model_copy(update={"result": forged}))
    assert problem is not None
    assert problem.startswith("it does not replay (status: stored failed, derived passed")
