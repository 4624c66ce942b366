"""``known_failure``: the rule ``replay --allow-known`` accepts a failed report by.

A failed report is a known failure only when its candidate's adapter declares a divergence
for that check (its op, precision and device) that explains the failure by its figures: the
whole output's NMSE within the declared ceiling. Anything else, a
pass included, is not.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from diffcheck.adapters import KnownDivergence, resolve
from diffcheck.adapters.array_api import ArrayApiAdapter
from diffcheck.config import make_check
from diffcheck.runner import run_check
from diffcheck.sweep.known import known_failure
from forgery import as_v3, document

pytestmark = pytest.mark.usefixtures("fake_backends")

GEMM = KnownDivergence(
    ops=("gemm",),
    precisions=("f32",),
    reason="test-only: a tolerance below float32 rounding",
    upstream="https://example.org/issues/1",
    max_nmse=1e-10,
    measured_nmse=1e-11,
    bound_source="test-only: float32 rounding of a 35-term dot product stays far below it",
    twin="float32",
)
SHAPE: dict[str, Any] = {"m": 64, "n": 33, "k": 35, "seed": 7}


def _declare(monkeypatch: pytest.MonkeyPatch, cls: type, *found: KnownDivergence) -> None:
    monkeypatch.setattr(cls, "known_divergences", lambda self: found)


def _report(tmp_path: Path, backend: str, **config: Any) -> dict[str, Any]:
    path = tmp_path / f"{backend.replace(':', '-')}.json"
    run_check(make_check(backend, "gemm", **(SHAPE | config)), path)
    found: dict[str, Any] = json.loads(path.read_text())
    return found


def test_a_declared_failure_within_its_ceiling_is_known_and_a_pass_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _declare(monkeypatch, ArrayApiAdapter, GEMM)
    failed = _report(tmp_path, "array_api_strict", max_nmse=1e-30)
    assert failed["result"]["status"] == "failed"
    assert known_failure(document(failed))
    # A v3 report recorded no floor, so no twin models it: GEMM names its twin, and is not
    # the explanation there.
    assert known_failure(document(as_v3(failed))) is False
    (tmp_path / "p").mkdir()
    passed = _report(tmp_path / "p", "array_api_strict")
    assert passed["result"]["status"] == "passed"
    assert not known_failure(document(passed))


def test_a_failure_beyond_the_ceiling_is_not_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tight = dataclasses.replace(GEMM, max_nmse=1e-20, measured_nmse=1e-21)
    _declare(monkeypatch, ArrayApiAdapter, tight)
    assert not known_failure(document(_report(tmp_path, "array_api_strict", max_nmse=1e-30)))


def test_nothing_declared_or_no_adapter_here_is_no_known_failure(tmp_path: Path) -> None:
    raised = _report(tmp_path, "fakeraise")
    assert raised["result"]["status"] == "failed"
    assert raised["result"]["metrics"] is None
    assert not known_failure(document(raised))
    renamed = _report(tmp_path, "array_api_strict", max_nmse=1e-30)
    renamed["config"]["require_backend"] = renamed["result"]["backend"] = "notinstalled"
    assert not known_failure(document(renamed))


def test_a_divergence_of_one_device_is_known_on_that_device_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not resolve("mlx:cpu").probe().is_available:
        pytest.skip("mlx:cpu is not available here")
    cpu_only = dataclasses.replace(GEMM, devices=("cpu",))
    _declare(monkeypatch, type(resolve("mlx:cpu")), cpu_only)
    failed = _report(tmp_path, "mlx:cpu", max_nmse=1e-30)
    assert failed["result"]["status"] == "failed"
    assert known_failure(document(failed))
    plain = dict(failed)
    plain["config"] = dict(failed["config"], require_backend="mlx")
    plain["result"] = dict(failed["result"], backend="mlx")
    assert not known_failure(document(plain))  # the plain name's device is not known


def _segment(status: str, nmse: float | None, metrics: dict[str, Any]) -> dict[str, Any]:
    figures = None if nmse is None else dict(metrics, nmse=nmse)
    return {"name": "part", "start": 0, "stop": 1, "status": status, "metrics": figures}


@pytest.mark.parametrize(
    ("segment", "known"),
    [
        (("failed", 1e-12), True),  # a failed segment within the ceiling: explained
        (("failed", 1.0), False),  # a failed segment past the ceiling: a sentinel, never known
        (("failed", None), False),  # a failed segment not measured: not an NMSE failure
        (("passed", 1.0), True),  # a passed segment's figure is no failure to explain
    ],
)
def test_a_failed_segment_is_explained_by_its_own_nmse_and_a_passed_one_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, segment: tuple[str, float | None], known: bool
) -> None:
    _declare(monkeypatch, ArrayApiAdapter, GEMM)
    failed = _report(tmp_path, "array_api_strict", max_nmse=1e-30)
    failed["segments"] = [_segment(*segment, failed["result"]["metrics"])]
    assert known_failure(document(failed)) is known


def test_a_report_without_a_result_is_no_known_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _declare(monkeypatch, ArrayApiAdapter, GEMM)
    failed = _report(tmp_path, "array_api_strict", max_nmse=1e-30)
    failed.update(result=None, completed=False, finished_at=None, execution_elapsed_ms=None)
    assert known_failure(document(failed)) is False
