"""A report's precision floor is derived: replay re-measures it and refuses every edit of it,
even one re-stamped so the story is consistent; upgrade measures it for older reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.report import replay
from diffcheck.report.upgrade import upgrade_document
from diffcheck.runner import run_check
from forgery import as_v3, document, restamp

from .downgrades import DowngradedTorch

pytest.importorskip("torch")


def _report(tmp_path: Path, name: str, candidate: Any = None) -> dict[str, Any]:
    path = tmp_path / f"{name}.json"
    check = make_check("torch:cpu", "gemm", m=16, n=8, k=24, seed=3)
    run_check(check, path, candidate=candidate)
    return dict(json.loads(path.read_text()))


@pytest.fixture
def tf32(tmp_path: Path) -> dict[str, Any]:
    data = _report(tmp_path, "tf32", DowngradedTorch("tf32-round"))
    assert data["result"]["status"] == "failed"
    assert replay(document(data)).agrees
    return data


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "passed"),
        ("candidate_nmse", 1e-15),
        ("floor_nmse", 1e-3),
        ("multiple", 1e12),
        ("match", None),
        ("twins", []),
        ("honest_distance", 0.0),
    ],
)
def test_an_edited_floor_field_does_not_replay(
    tf32: dict[str, Any], field: str, value: Any
) -> None:
    tf32["result"]["floor"][field] = value
    problems = replay(document(tf32)).disagreements
    assert any(p.startswith("result.floor") for p in problems), problems


def test_a_removed_floor_does_not_replay(tf32: dict[str, Any]) -> None:
    tf32["result"]["floor"] = None
    assert "result.floor: derivable but not stored" in replay(document(tf32)).disagreements


def test_a_tf32_failure_re_stamped_as_a_pass_does_not_replay(tf32: dict[str, Any]) -> None:
    """The careful forger: status, reason and the whole floor record made to say passed,
    with a floor that would cover the error. Replay measures the floor itself."""
    floor = tf32["result"]["floor"]
    floor.update(status="passed", floor_nmse=floor["candidate_nmse"], twins=[], match=None)
    floor["derived_tolerance"] = floor["multiple"] * floor["floor_nmse"]
    tf32["result"].update(status="passed", reason=None)
    problems = replay(document(tf32)).disagreements
    assert problems
    assert any("status: stored passed, derived failed" in p for p in problems), problems


def test_re_stamping_from_the_bits_gives_back_the_failure(tf32: dict[str, Any]) -> None:
    tf32["result"].update(status="passed", reason=None)
    restamp(tf32)  # what the stored bits give: the floor fails them again
    assert tf32["result"]["status"] == "failed"
    assert replay(document(tf32)).agrees


def test_upgrading_a_v3_tf32_pass_measures_the_floor_and_fails_it(tf32: dict[str, Any]) -> None:
    old = as_v3(tf32)  # v3 judged by the tolerance alone: TF32 passed the f32 bucket
    assert old["result"]["status"] == "passed"
    outcome = replay(document(old))
    assert outcome.agrees
    assert any(n.startswith("no precision floor: schema v3") for n in outcome.notes)
    upgraded = upgrade_document(document(old))
    assert upgraded.schema_version == 4
    assert upgraded.result is not None
    assert upgraded.result.status == "failed"
    assert upgraded.result.floor is not None
    assert upgraded.result.floor.match == "tf32 operands"
    assert replay(upgraded).agrees


def test_an_honest_report_replays_with_its_floor(tmp_path: Path) -> None:
    data = _report(tmp_path, "honest")
    assert data["result"]["status"] == "passed"
    assert data["result"]["floor"]["status"] == "passed"
    assert replay(document(data)).agrees


@pytest.fixture
def partial_tf32(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "attention.json"
    check = make_check(
        "torch:cpu", "attention", tokens=4, kv_len=8, heads=4, kv_heads=2, head_dim=16, seed=3
    )
    run_check(check, path, candidate=DowngradedTorch("tf32-call-2"))
    data = dict(json.loads(path.read_text()))
    assert "at matmul 2 of 2 only" in data["result"]["reason"]
    assert replay(document(data)).agrees
    return data


@pytest.mark.parametrize(("matmul", "matmuls"), [(1, 2), (2, 3), (None, None), (3, 3)])
def test_a_twin_moved_to_another_matmul_call_does_not_replay(
    partial_tf32: dict[str, Any], matmul: int | None, matmuls: int | None
) -> None:
    twins = partial_tf32["result"]["floor"]["twins"]
    single = next(i for i, t in enumerate(twins) if t["matmul"] == 2)
    twins[single].update(matmul=matmul, matmuls=matmuls)
    problems = replay(document(partial_tf32)).disagreements
    assert any(p.startswith("result.floor.twins") for p in problems), problems
