"""Replay trusts nothing a report says: every forged metric, flag or reason is a disagreement.

A report is written by a real check whose candidate is slightly off (so every metric is
non-trivial: NMSE, max |diff|, its index and the ULP distance are all non-zero), then one
field of the file is forged. ``load_report`` + ``replay`` and ``diffcheck replay`` must each
disagree with the forged file, and agree with the untouched one. Counts and flags must match
exactly; floats within 8 float64 epsilons relative (the contract's rule; summed figures
within the bound of another summation order, at most 2.9e-11 relative), so a float metric
off by 1e-9 relative is a forgery and one off by a couple of float64 ulps is not.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck._numbers import f64_bits
from diffcheck.adapters import resolve
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.differ._measure import BLOCK
from diffcheck.report import load_report, replay
from diffcheck.report.figures import compare_metrics, sum_allowance
from diffcheck.report.models import MetricsRecord
from diffcheck.report.world import Recomputed, recompute_reference
from diffcheck.runner import run_check
from diffcheck.testing import WrappedAdapter

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

Forgery = Callable[[dict[str, Any]], None]


def _slightly_off(values: Any, precision: Any) -> Any:
    # Off by up to about 2e-7 relative (a few ULP), unevenly, so the worst element is one
    # index and the check still passes, its precision floor included (NMSE ~1e-14).
    ramp = np.linspace(0.0, 2e-7, values.size, dtype=np.float64)
    return (values.astype(np.float64) * (1.0 + ramp)).astype(np.float32)


def _write(tmp_path: Path, op: str, **params: int) -> dict[str, Any]:
    report = tmp_path / f"{op}.json"
    candidate = WrappedAdapter(resolve("array_api_strict"), transform=_slightly_off)
    run_check(make_check("array_api_strict", op, **params), report, candidate=candidate)
    data: dict[str, Any] = json.loads(report.read_text())
    assert data["result"]["status"] == "passed", data["result"]["reason"]
    return data


@pytest.fixture(scope="module")
def gemm_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = _write(tmp_path_factory.mktemp("gemm"), "gemm", m=4, n=6, k=5)
    metrics = data["result"]["metrics"]
    # Every metric is non-trivial, so a forgery of any of them is a change.
    assert metrics["nmse"] > 0
    assert metrics["max_abs"] > 0
    assert metrics["max_ulp"] > 0
    assert metrics["max_abs_index"] > 0
    assert metrics["uses_absolute_mse"] is False
    return data


@pytest.fixture(scope="module")
def lifecycle_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from fakes import FakeAdapter

    report = tmp_path_factory.mktemp("lifecycle") / "r.json"
    run_check(
        make_check("fake", "context-lifecycle", tokens=2, intermediate=3, k=4),
        report,
        candidate=FakeAdapter(),
    )
    data: dict[str, Any] = json.loads(report.read_text())
    assert data["result"]["status"] == "passed"
    assert len(data["submission_metrics"]) == 4
    return data


def _replayed(data: dict[str, Any], path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The disagreements of ``replay`` on ``data`` written at ``path``, checked by the CLI too."""
    path.write_text(json.dumps(data))
    disagreements = replay(load_report(path)).disagreements
    code = main(["replay", str(path)])
    captured = capsys.readouterr()
    if disagreements:
        assert code == 1
        assert "agrees" not in captured.out
        assert str(path) in captured.err
    else:
        assert code == 0
        first, *notes = captured.out.splitlines()
        outcome = replay(load_report(path))
        marker = " (SELF-TEST: not a pass for the backend)" if outcome.self_test else ""
        assert first == f"{path}: agrees: {outcome.status}{marker}"
        kinds = ("note: ", "checked: ", "claimed, not verified: ")
        assert all(line.startswith(tuple(f"{path}: {k}" for k in kinds)) for line in notes)
        assert f"{path}: checked: reference recomputed from config: bit-exact" in notes
    return disagreements


def _scaled(factor: float) -> Callable[[Any], Any]:
    return lambda value: value * factor


def _set(*keys: str | int, to: Callable[[Any], Any]) -> Forgery:
    def forge(data: dict[str, Any]) -> None:
        node: Any = data
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = to(node[keys[-1]])

    return forge


METRIC_FORGERIES: dict[str, Forgery] = {
    "max_ulp": _set("result", "metrics", "max_ulp", to=lambda v: v + 1),
    "max_ulp_zeroed": _set("result", "metrics", "max_ulp", to=lambda v: 0),
    "max_abs_index": _set("result", "metrics", "max_abs_index", to=lambda v: v - 1),
    "uses_absolute_mse": _set("result", "metrics", "uses_absolute_mse", to=lambda v: not v),
    "element_count": _set("result", "metrics", "element_count", to=lambda v: v + 1),
    "nmse": _set("result", "metrics", "nmse", to=_scaled(1 + 1e-9)),
    "max_abs": _set("result", "metrics", "max_abs", to=_scaled(1 - 1e-9)),
    "reference_mse": _set("result", "metrics", "reference_mse", to=_scaled(1 + 1e-9)),
}


def test_the_untouched_report_agrees(
    gemm_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _replayed(gemm_report, tmp_path / "r.json", capsys) == []


@pytest.mark.parametrize("field", list(METRIC_FORGERIES))
def test_a_forged_aggregate_metric_makes_replay_disagree(
    field: str,
    gemm_report: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = json.loads(json.dumps(gemm_report))
    METRIC_FORGERIES[field](data)
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    name = field.removesuffix("_zeroed")
    assert any(f"metrics.{name}" in line for line in disagreements), disagreements


@pytest.mark.parametrize("field", ["max_ulp", "max_abs_index", "uses_absolute_mse", "nmse"])
def test_a_forged_phase_metric_makes_replay_disagree(
    field: str,
    lifecycle_report: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = json.loads(json.dumps(lifecycle_report))
    forge = {
        "max_ulp": lambda v: v + 1,
        "max_abs_index": lambda v: v + 1,
        "uses_absolute_mse": lambda v: not v,
        "nmse": lambda v: v * (1 + 1e-9) + 1e-300,  # + tiny: the fault-free phase NMSE is 0
    }[field]
    _set("submission_metrics", 1, field, to=forge)(data)
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any(f"submission_metrics[1].{field}" in line for line in disagreements), disagreements


def test_a_passed_result_that_carries_a_reason_makes_replay_disagree(
    gemm_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(json.dumps(gemm_report))
    data["result"]["reason"] = "looked fine to me"
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any("reason" in line for line in disagreements), disagreements


def test_a_float_metric_a_few_float64_ulps_off_still_agrees(
    gemm_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The contract's rule is 8 float64 epsilons relative, not bit equality: a reader that
    # prints and parses a float in another way is not a forger.
    data = json.loads(json.dumps(gemm_report))
    metrics = data["result"]["metrics"]
    for name in ("nmse", "max_abs", "reference_mse"):
        metrics[name] = math.nextafter(math.nextafter(metrics[name], math.inf), math.inf)
    assert _replayed(data, tmp_path / "near.json", capsys) == []


def _without_outputs(*sides: str) -> Forgery:
    def forge(data: dict[str, Any]) -> None:
        for side in sides:
            data["result"][side] = None

    return forge


def _nan_tolerance(data: dict[str, Any]) -> None:
    data["result"]["tolerance"] = None
    data["result"]["tolerance_f64_bits"] = 0x7FF8000000000000


RECORD_FORGERIES: dict[str, Forgery] = {
    "passed without its actual output": _without_outputs("actual"),
    "passed without its reference output": _without_outputs("reference"),
    "passed without either output": _without_outputs("reference", "actual", "metrics"),
    "passed without its metrics": _set("result", "metrics", to=lambda v: None),
    "passed with a NaN tolerance": _nan_tolerance,
    "failed without a reason": lambda data: data["result"].update(status="failed", reason=None),
    "incomplete but carrying a result": lambda data: data.update(completed=False),
}


@pytest.mark.parametrize("forgery", list(RECORD_FORGERIES))
def test_a_forged_record_makes_replay_disagree(
    forgery: str,
    gemm_report: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = json.loads(json.dumps(gemm_report))
    RECORD_FORGERIES[forgery](data)
    assert _replayed(data, tmp_path / "forged.json", capsys)


@pytest.mark.parametrize("side", ["reference", "actual"])
def test_a_passed_lifecycle_without_one_output_makes_replay_disagree(
    side: str,
    lifecycle_report: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A segmented op: the per-phase judging must not run on a missing output either.
    data = json.loads(json.dumps(lifecycle_report))
    data["result"][side] = None
    assert _replayed(data, tmp_path / "forged.json", capsys)


def test_metrics_stored_where_none_can_be_derived_make_replay_disagree(
    gemm_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A failed check whose candidate produced nothing, with metrics forged in.
    data = json.loads(json.dumps(gemm_report))
    data["result"].update(status="failed", reason="required backend execution failed: X")
    data["result"]["actual"] = None
    data["executed_precision"] = None
    data["computed_by"] = None
    data["result"]["metrics"] = None
    assert _replayed(data, tmp_path / "honest.json", capsys) == []
    data["result"]["metrics"] = gemm_report["result"]["metrics"]
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any("metrics" in line for line in disagreements), disagreements


def test_phase_metrics_removed_from_a_passed_lifecycle_make_replay_disagree(
    lifecycle_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(json.dumps(lifecycle_report))
    del data["submission_metrics"]
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any("submission_metrics" in line for line in disagreements), disagreements


def test_a_report_that_cannot_be_read_is_one_line_naming_the_file_and_why(
    gemm_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.json"
    not_json = tmp_path / "not.json"
    not_json.write_text("{")
    bad_status = tmp_path / "bad.json"
    data = json.loads(json.dumps(gemm_report))
    data["result"]["status"] = "probably fine"
    bad_status.write_text(json.dumps(data))
    for path, why in (
        (missing, "No such file or directory"),
        (not_json, "not JSON"),
        (bad_status, "result.status"),
    ):
        assert main(["replay", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert str(path) in err
        assert why in err


@pytest.mark.parametrize("field", ["nmse", "max_abs", "reference_mse"])
def test_a_nan_stored_metric_never_matches_a_finite_one(
    field: str, gemm_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(json.dumps(gemm_report))
    data["result"]["metrics"][field] = "NaN"
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any(f"metrics.{field}" in line for line in disagreements), disagreements


def test_phase_metrics_added_to_a_failed_lifecycle_make_replay_disagree(
    lifecycle_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fakes import FakeAdapter

    path = tmp_path / "failed.json"
    check = make_check("fakereuseoutput", "context-lifecycle", tokens=2, intermediate=3, k=4)
    run_check(check, path, candidate=FakeAdapter("reuse_output"))
    data = json.loads(path.read_text())
    assert data["result"]["status"] == "failed"
    assert "submission_metrics" not in data
    data["submission_metrics"] = lifecycle_report["submission_metrics"]
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any("submission_metrics" in line for line in disagreements), disagreements


def test_the_index_of_a_non_finite_reference_is_re_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def poison(values: Any, precision: Any) -> Any:
        values = values.copy()
        values[3] = np.nan
        return values

    path = tmp_path / "honest.json"
    reference = WrappedAdapter(resolve("numpy"), transform=poison)
    check = make_check("array_api_strict", "gemm", m=4, n=6, k=5)
    run_check(check, path, reference=reference)
    data = json.loads(path.read_text())
    assert data["result"]["reason"] == "reference contains a non-finite value at 3"
    assert data["result"]["actual"] is None
    # The real NumPy does not give that NaN: replay recomputes the reference and says so.
    disagreements = _replayed(data, tmp_path / "against-numpy.json", capsys)
    assert len(disagreements) == 1, disagreements
    assert disagreements[0].startswith("result.reference is not the reference recomputed")
    # In a world whose reference does give it, the reason is re-derived from the stored bits.
    poisoned = poison(recompute_reference(check).output, "f32")
    monkeypatch.setattr(
        sys.modules["diffcheck.report.replay"],
        "recompute_reference",
        lambda _: Recomputed(poisoned, "f32"),
    )
    assert _replayed(data, path, capsys) == []
    data["result"]["reason"] = "reference contains a non-finite value at 4"
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any("value at 3" in line for line in disagreements), disagreements


@pytest.mark.parametrize(
    "options",
    [{"reference": "torch"}, {"seed": 7}],
    ids=["another-reference", "another-seed"],
)
def test_a_check_away_from_the_defaults_replays_as_agreeing(
    options: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Replay re-derives the check from config: the reference and seed it records, not defaults.
    if "reference" in options:
        pytest.importorskip(options["reference"])  # `nox -s mutants` installs no torch
    path = tmp_path / "r.json"
    run_check(make_check("array_api_strict", "gemm", m=2, n=3, k=4, **options), path)
    assert _replayed(json.loads(path.read_text()), path, capsys) == []


def test_a_declared_self_test_replays_as_agreeing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    run_check(make_check("numpy", "gemm", m=2, n=3, k=4, allow_self_test=True), path)
    data = json.loads(path.read_text())
    assert "SELF-TEST:" in data["coverage"]
    assert _replayed(data, path, capsys) == []


def test_a_lifecycle_config_over_its_f32_ceiling_makes_replay_disagree(
    lifecycle_report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(json.dumps(lifecycle_report))
    data["config"]["max_nmse"] = data["result"]["tolerance"] = 1e-6
    data["result"]["tolerance_f64_bits"] = f64_bits(1e-6)
    disagreements = _replayed(data, tmp_path / "forged.json", capsys)
    assert any("config does not describe a valid check" in line for line in disagreements)


def test_the_allowance_of_a_stored_sum_is_4m_plus_8_epsilons() -> None:
    """m = min(count, BLOCK) terms per block (report/figures.py's bound), never below one."""
    eps = sys.float_info.epsilon
    assert sum_allowance(0) == sum_allowance(1) == 12 * eps
    assert sum_allowance(2) == 16 * eps
    assert sum_allowance(512) == (4 * 512 + 8) * eps
    assert sum_allowance(BLOCK) == sum_allowance(10**9) == (4 * BLOCK + 8) * eps


def test_summed_figures_get_the_summing_allowance_and_max_abs_does_not() -> None:
    # nmse and reference_mse sum element_count terms: a stored figure within that rounding
    # allowance agrees; max_abs sums nothing and keeps the 8-epsilon contract.
    eps = sys.float_info.epsilon
    base = MetricsRecord(
        element_count=512,
        nmse=1e-9,
        max_abs=1.0,
        reference_mse=1.0,
        uses_absolute_mse=False,
        max_abs_index=0,
        max_ulp=3,
    )
    for name in ("nmse", "reference_mse"):
        near = base.model_copy(update={name: getattr(base, name) * (1 + 1000 * eps)})
        assert compare_metrics("result.metrics", base, near) == []
    within = base.model_copy(update={"max_abs": 1.0 + 8 * eps})
    assert compare_metrics("result.metrics", base, within) == []
    far = base.model_copy(update={"max_abs": 1.0 + 1000 * eps})
    assert compare_metrics("result.metrics", base, far) == [
        f"result.metrics.max_abs: stored 1.0, derived {far.max_abs!r}"
    ]


@pytest.mark.parametrize(
    ("forge", "disagreement"),
    [
        (
            _set("executed_precision", "reference_storage", to=lambda _: "f16"),
            "executed_precision.reference_storage: stored 'f16', recomputed 'f32'",
        ),
        (
            _set("computed_by", "reference", "module", to=lambda _: "otherlib"),
            "computed_by.reference: stored otherlib (numpy.ndarray via array_api_compat.numpy), "
            "the reference recomputed from config returned numpy arrays (numpy.ndarray via "
            "array_api_compat.numpy)",
        ),
        (
            _set("executed_precision", "backend_output_storage", to=lambda _: "f16"),
            "result.actual: 24 of 24 values are not representable in f16, the executed output "
            "storage (first at flat index 0: ",
        ),
    ],
)
def test_each_check_against_the_recomputed_world_says_what_differs(
    gemm_report: dict[str, Any], tmp_path: Path, forge: Forgery, disagreement: str
) -> None:
    data = json.loads(json.dumps(gemm_report))
    forge(data)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    outcome = replay(load_report(path))
    assert any(d.startswith(disagreement) for d in outcome.disagreements), outcome.disagreements
    assert outcome.checked == ["reference recomputed from config: bit-exact"]


@pytest.mark.parametrize("self_test", [False, True])
def test_a_backend_unknown_here_takes_the_self_test_from_the_stored_coverage(
    gemm_report: dict[str, Any], tmp_path: Path, self_test: bool
) -> None:
    data = json.loads(json.dumps(gemm_report))
    data["config"]["require_backend"] = data["result"]["backend"] = "notinstalled"
    if self_test:
        data["coverage"] += (
            " SELF-TEST: the candidate notinstalled is the reference numpy's own backend "
            "(allowed explicitly); a pass is evidence about the machinery, never about the "
            "backend."
        )
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    outcome = replay(load_report(path))
    assert outcome.disagreements == []
    assert outcome.self_test is self_test
    assert outcome.notes[0] == (
        "the backend pair cannot be checked for a self-test here (the report's coverage is "
        'taken as written): unsupported required backend "notinstalled"; '
        "'diffcheck backends' lists every backend"
    )
    said = (
        "SELF-TEST: the candidate notinstalled is the reference numpy's own backend; it is "
        "never a pass for the backend"
    )
    assert (said in outcome.notes) is self_test


def test_a_config_that_describes_no_check_keeps_its_notes_and_claims(
    gemm_report: dict[str, Any], tmp_path: Path
) -> None:
    from diffcheck.report.bounds import claimed_fields

    data = json.loads(json.dumps(gemm_report))
    data["config"]["require_backend"] = data["result"]["backend"] = "notinstalled"
    data["config"]["m"] = 0
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    document = load_report(path)
    outcome = replay(document)
    assert outcome.verdict is None
    assert outcome.disagreements[-1].startswith("config does not describe a valid check: ")
    assert outcome.notes[0].startswith("the backend pair cannot be checked for a self-test")
    assert outcome.claims == claimed_fields(document)
    assert outcome.claims


def test_only_a_pass_under_a_looser_tolerance_than_the_default_gets_the_note(
    gemm_report: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(gemm_report))
    at_default = replay(load_report(path))
    assert gemm_report["config"]["max_nmse"] == 1e-7  # gemm's default at f32
    assert not [n for n in at_default.notes if "is looser than" in n]
    data = json.loads(json.dumps(gemm_report))
    data["config"]["max_nmse"] = 1e-5
    data["result"] |= {"status": "failed", "reason": "forged"}
    path.write_text(json.dumps(data))
    failed = replay(load_report(path))
    assert not [n for n in failed.notes if "is looser than" in n]
    data["result"] |= {"status": "passed", "reason": None}
    path.write_text(json.dumps(data))
    assert "the tolerance 1e-05 is looser than gemm's default 1e-07 at f32" in (
        replay(load_report(path)).notes
    )


def test_a_rerun_says_whether_the_stored_bits_status_and_library_hold(
    gemm_report: dict[str, Any], tmp_path: Path
) -> None:
    # The stored candidate was nudged by 1e-6 relative: array_api_strict re-run by name
    # passes with other bits, and its adapter declares its output deterministic, so the
    # stored bits are not its output: --rerun decides, a disagreement.
    path = tmp_path / "r.json"
    path.write_text(json.dumps(gemm_report))
    found = "20 of 24 elements differ, NMSE between stored and re-run 1.434e-14"
    rerun_line = f"candidate re-run: passed; stored bits do not reproduce: {found}"
    bits = (
        f"re-run: stored bits do not reproduce ({found}), and array_api_strict declares its "
        "output deterministic"
    )
    nudged = replay(load_report(path), rerun=True)
    assert (nudged.disagreements, nudged.checked[-1]) == ([bits], rerun_line)
    data = json.loads(json.dumps(gemm_report))
    data["computed_by"]["candidate"]["module"] = "otherlib"
    data["executed_precision"]["reference_storage"] = "f16"
    path.write_text(json.dumps(data))
    assert replay(load_report(path), rerun=True).disagreements == [
        "executed_precision.reference_storage: stored 'f16', recomputed 'f32'",
        bits,
        "computed_by.candidate: stored otherlib (array_api_strict._array_object.Array via "
        "array_api_strict), the re-run returned array_api_strict arrays "
        "(array_api_strict._array_object.Array via array_api_strict)",
    ]
    data = json.loads(json.dumps(gemm_report))
    data["result"] |= {"status": "failed", "reason": "forged"}
    path.write_text(json.dumps(data))
    forged = replay(load_report(path), rerun=True)
    assert forged.disagreements[:2] == [bits, "re-run: stored failed, the candidate now passed"]


def test_an_output_without_its_executed_precision_is_one_disagreement(
    gemm_report: dict[str, Any], tmp_path: Path
) -> None:
    data = json.loads(json.dumps(gemm_report))
    data["executed_precision"] = None
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    outcome = replay(load_report(path))
    assert "executed_precision is set exactly when the candidate returned output" in (
        outcome.disagreements
    )


def test_a_forged_reference_is_a_disagreement_and_no_checked_line(
    gemm_report: dict[str, Any], tmp_path: Path
) -> None:
    from forgery import output, set_output

    data = json.loads(json.dumps(gemm_report))
    set_output(data, "reference", output(data, "reference") * np.float32(2))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    outcome = replay(load_report(path))
    assert any(d.startswith("result.reference") for d in outcome.disagreements), (
        outcome.disagreements
    )
    assert outcome.checked == []


def test_a_reference_that_cannot_be_recomputed_or_is_one_ulp_off_in_a_wide_sum(
    gemm_report: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forgery import output

    path = tmp_path / "r.json"
    path.write_text(json.dumps(gemm_report))
    module = sys.modules["diffcheck.report.replay"]
    monkeypatch.setattr(
        module, "recompute_reference", lambda _: Recomputed(None, problem="numpy is missing")
    )
    assert replay(load_report(path)).disagreements == [
        "result.reference could not be recomputed: numpy is missing"
    ]
    # GEMM sums in float64 and rounds once: another BLAS may land one float32 ULP away.
    stored = output(gemm_report, "reference")
    nudged = stored.copy()
    nudged[0] = np.nextafter(stored[0], np.float32(np.inf))
    monkeypatch.setattr(module, "recompute_reference", lambda _: Recomputed(nudged, "f32"))
    outcome = replay(load_report(path))
    assert outcome.disagreements == []
    assert outcome.checked[0].startswith("reference recomputed from config: within ")
