"""Replay's exact words and its edges: every disagreement line and note a reader is shown.

The forgery tests elsewhere show that replay refuses to agree; these pin what it says when
it does (each line names the field and both values), the float tolerance at its boundary,
the outcome object's fields on every early return, and the re-derived verdict of a result
that stops before the candidate ran.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.differ import Verdict
from diffcheck.errors import ReportError
from diffcheck.report import load_report, replay
from diffcheck.report.figures import _close
from diffcheck.report.world import Recomputed
from diffcheck.runner import run_check
from diffcheck.testing import WrappedAdapter
from fakes import FakeAdapter, named_for
from forgery import document

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

GEMM = make_check("array_api_strict", "gemm", m=2, n=3, k=4)
LIFECYCLE = make_check("array_api_strict", "context-lifecycle", tokens=2, intermediate=3, k=4)
EPS = sys.float_info.epsilon
_SERIAL = itertools.count()


def _report(tmp_path: Path, check: Any, **adapters: Any) -> dict[str, Any]:
    path = tmp_path / f"r{next(_SERIAL)}.json"
    run_check(named_for(check, adapters.get("candidate")), path, **adapters)
    return dict(json.loads(path.read_text()))


def _problems(data: dict[str, Any]) -> list[str]:
    return replay(document(data)).disagreements


@pytest.fixture
def gemm(tmp_path: Path) -> dict[str, Any]:
    data = _report(tmp_path, GEMM)
    assert data["result"]["status"] == "passed"
    return data


@pytest.fixture
def lifecycle(tmp_path: Path) -> dict[str, Any]:
    data = _report(tmp_path, LIFECYCLE, candidate=FakeAdapter("scale_segment"))
    assert [s["status"] for s in data["segments"]] == ["passed"] * 3 + ["failed"]
    return data


def test_a_float_exactly_eight_epsilons_relative_away_is_within_tolerance() -> None:
    assert _close(1.0, 1.0 - 8 * EPS)  # |diff| == 8 eps * max: the bound is inclusive
    assert _close(1.0 - 8 * EPS, 1.0)
    assert not _close(1.0, 1.0 - 8.5 * EPS)


def test_equal_non_finite_floats_agree_and_differing_ones_do_not() -> None:
    assert _close(math.inf, math.inf)
    assert _close(-math.inf, -math.inf)
    assert _close(math.nan, math.nan)
    assert not _close(math.inf, -math.inf)
    assert not _close(math.nan, math.inf)
    assert not _close(math.inf, 1.0)


def test_removed_metrics_are_derivable_but_not_stored(gemm: dict[str, Any]) -> None:
    gemm["result"]["metrics"] = None
    assert _problems(gemm) == ["metrics: derivable but not stored"]


def test_metrics_forged_onto_an_unmeasured_failure_are_stored_but_not_derivable(
    tmp_path: Path, gemm: dict[str, Any]
) -> None:
    data = _report(tmp_path, GEMM, candidate=FakeAdapter("truncate"))
    assert data["result"]["metrics"] is None
    assert _problems(data) == []
    data["result"]["metrics"] = gemm["result"]["metrics"]
    assert _problems(data) == ["metrics: stored but not derivable"]


def test_removed_segment_metrics_are_named_by_their_segment(lifecycle: dict[str, Any]) -> None:
    lifecycle["segments"][2]["metrics"] = None
    assert _problems(lifecycle) == ["segments[2].metrics: derivable but not stored"]


def test_segments_forged_onto_an_op_without_any_are_a_disagreement(
    gemm: dict[str, Any], lifecycle: dict[str, Any]
) -> None:
    gemm["segments"] = lifecycle["segments"][:1]
    assert _problems(gemm) == ["segments: stored but the op has none"]


def test_every_moved_segment_boundary_is_reported_with_both_ranges(
    lifecycle: dict[str, Any],
) -> None:
    lifecycle["segments"][0]["stop"] = 5
    lifecycle["segments"][2]["name"] = "drop_flush"
    assert _problems(lifecycle) == [
        "segments[0]: stored initial [0, 5), derived initial [0, 6)",
        "segments[2]: stored drop_flush [12, 18), derived independent_context [12, 18)",
    ]


def test_a_segment_count_that_differs_is_one_line(lifecycle: dict[str, Any]) -> None:
    del lifecycle["segments"][1]
    assert _problems(lifecycle) == ["segments: 3 stored, 4 derived"]


def test_phase_metrics_on_a_failed_lifecycle_are_stored_but_not_derivable(
    tmp_path: Path, lifecycle: dict[str, Any]
) -> None:
    passed = _report(tmp_path, LIFECYCLE, candidate=FakeAdapter())
    lifecycle["submission_metrics"] = passed["submission_metrics"]
    assert _problems(lifecycle) == ["submission_metrics: stored but not derivable"]
    del passed["submission_metrics"][0]
    assert _problems(passed) == [
        "submission_metrics presence does not match the per-phase verdicts"
    ]


def test_a_forged_output_shape_names_both_shapes(gemm: dict[str, Any]) -> None:
    gemm["output_shape"] = [3, 2]
    assert _problems(gemm) == ["output_shape: stored (3, 2), derived from config (2, 3)"]


def test_a_result_of_another_schema_version_than_its_document_disagrees(
    gemm: dict[str, Any],
) -> None:
    # Only a document assembled in Python can hold one: each schema's model pins its own.
    forged = document(gemm).model_copy(update={"schema_version": 1})
    assert replay(forged).disagreements == [
        "result.schema_version: stored 4, derived from config 1"
    ]


def test_a_forged_configured_precision_names_all_three_storages(gemm: dict[str, Any]) -> None:
    gemm["configured_precision"]["backend_input_storage"] = "f16"
    assert _problems(gemm) == [
        "configured_precision: stored ('f32', 'f16', 'f32'), derived from config "
        "('f32', 'f32', 'f32')"
    ]


@pytest.mark.parametrize("side", ["reference", "actual"])
def test_a_digest_mismatch_names_the_output_it_is_in(side: str, gemm: dict[str, Any]) -> None:
    gemm["result"][side]["sha256"] = "0" * 64
    problems = _problems(gemm)
    assert problems == [f"result.{side}: the bytes do not match their SHA-256 digest"]


def test_metrics_forged_onto_a_result_without_the_candidates_output_say_so(
    tmp_path: Path, gemm: dict[str, Any]
) -> None:
    data = _report(tmp_path, GEMM, candidate=FakeAdapter("raise"))
    outcome = replay(document(data))
    assert outcome.disagreements == []
    assert outcome.verdict is None
    assert outcome.notes == [
        f"the candidate left no output; its failure ({data['result']['reason']}) "
        "cannot be re-derived"
    ]
    data["result"]["metrics"] = gemm["result"]["metrics"]
    assert _problems(data) == ["metrics: stored but not derivable (no candidate output)"]


def test_an_empty_reference_output_is_re_derived_with_its_shape_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = WrappedAdapter(resolve("numpy"), transform=lambda values, precision: values[:0])
    data = _report(tmp_path, GEMM, reference=empty)
    reason = (
        "reference output is empty; reference output has 0 elements; configured shape requires 6"
    )
    assert data["result"]["reason"] == reason
    # The real NumPy gives 6 elements: replay recomputes the reference and says so.
    assert _problems(data) == ["result.reference: 0 elements stored, 6 recomputed from config"]
    # In a world whose reference is empty, the stored failure is re-derived from the bits.
    monkeypatch.setattr(
        sys.modules["diffcheck.report.replay"],
        "recompute_reference",
        lambda _: Recomputed(np.zeros(0, np.float32), "f32"),
    )
    outcome = replay(document(data))
    assert outcome.disagreements == []
    assert outcome.notes == []
    assert outcome.verdict == Verdict("failed", reason, None, GEMM.max_nmse)
    data["result"]["reason"] = "reference output is empty"
    assert _problems(data) == [
        f"result: stored failed (reference output is empty), derived failed ({reason})"
    ]


def test_an_incomplete_report_replays_as_incomplete_with_one_line(gemm: dict[str, Any]) -> None:
    gemm["completed"] = False
    forged = document(gemm)
    outcome = replay(forged)
    assert outcome.document is forged
    assert outcome.verdict is None
    assert outcome.status == "passed"
    assert outcome.disagreements == ["report is incomplete (completed: false); it is not evidence"]


def test_a_config_that_describes_no_check_says_why_and_keeps_the_document(
    lifecycle: dict[str, Any],
) -> None:
    lifecycle["config"]["max_nmse"] = 1e-6
    forged = document(lifecycle)
    outcome = replay(forged)
    assert outcome.document is forged
    assert outcome.verdict is None
    assert outcome.notes == []
    assert outcome.disagreements == [
        "config does not describe a valid check: --max-nmse 0.000001 is above the lifecycle's "
        "limit: context-lifecycle at f32 requires 0 < max_nmse <= 0.0000001"
    ]


def test_a_passed_result_with_a_reason_lists_every_disagreement(gemm: dict[str, Any]) -> None:
    gemm["result"]["reason"] = "looked fine to me"
    gemm["output_shape"] = [3, 2]
    assert _problems(gemm) == [
        "a passed result carries a reason",
        "output_shape: stored (3, 2), derived from config (2, 3)",
        "status: stored passed, derived passed (reason: stored 'looked fine to me', derived None)",
    ]


def test_executed_precision_without_the_candidates_output_is_a_disagreement(
    tmp_path: Path, gemm: dict[str, Any]
) -> None:
    data = _report(tmp_path, GEMM, candidate=FakeAdapter("raise"))
    data["executed_precision"] = gemm["executed_precision"]
    assert _problems(data) == [
        "executed_precision is set exactly when the candidate returned output"
    ]


def test_a_self_test_against_another_reference_replays_as_agreeing(tmp_path: Path) -> None:
    check = make_check(
        "array_api_strict",
        "gemm",
        m=2,
        n=3,
        k=4,
        reference="array_api_strict",
        allow_self_test=True,
    )
    data = _report(tmp_path, check)
    assert "reference array_api_strict's own backend" in data["coverage"]
    assert _problems(data) == []


def test_a_digest_mismatch_leaves_no_verdict(gemm: dict[str, Any]) -> None:
    gemm["result"]["actual"]["sha256"] = "0" * 64
    assert replay(document(gemm)).verdict is None


def test_a_status_forged_with_the_reason_kept_names_only_the_status(
    tmp_path: Path,
) -> None:
    data = _report(tmp_path, GEMM, candidate=FakeAdapter("truncate"))
    data["result"]["status"] = "not_run"
    assert _problems(data) == ["status: stored not_run, derived failed"]


def test_the_candidates_output_without_the_references_is_a_disagreement(
    gemm: dict[str, Any],
) -> None:
    gemm["result"]["reference"] = None
    assert _problems(gemm) == ["the candidate's output is stored without the reference's"]


def test_a_result_without_outputs_keeps_the_disagreements_found_before(
    tmp_path: Path,
) -> None:
    data = _report(tmp_path, GEMM, candidate=FakeAdapter("raise"))
    data["result"]["reason"] = None
    data["output_shape"] = [3, 2]
    outcome = replay(document(data))
    assert outcome.disagreements == [
        "a failed result has no reason",
        "output_shape: stored (3, 2), derived from config (2, 3)",
    ]


@pytest.mark.parametrize("key", ["segments", "submission_metrics"])
def test_per_segment_records_on_a_result_that_compared_nothing_are_a_disagreement(
    key: str, tmp_path: Path
) -> None:
    data = _report(tmp_path, LIFECYCLE, candidate=FakeAdapter("raise"))
    passed = _report(tmp_path, LIFECYCLE, candidate=FakeAdapter())
    assert key not in data
    data[key] = passed[key]
    assert _problems(data) == ["per-segment records are stored but nothing was compared"]


def test_load_report_names_the_file_in_a_schema_error(tmp_path: Path) -> None:
    path = tmp_path / "named.json"
    path.write_text('{"schema_version": 2}')
    with pytest.raises(ReportError) as raised:
        load_report(path)
    assert str(raised.value).startswith(f"report {path} does not match schema v2 at config")
