"""The candidate's side of a report is evidence only where replay can bind it (issue 33).

Each test is one path by which a forged or mislabelled report, or a weak rule, let a
candidate pass: ``--rerun`` that printed "stored bits do not reproduce" and exited 0, a
re-run that could not run vouching for nothing, ``--require-pass`` meaning one thing for a
report and another for a sweep directory.
"""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.adapters import _registry
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import replay
from diffcheck.runner import run_check
from forgery import document, output, restamp, set_output

SMALL = {"m": 4, "n": 8, "k": 5}


def _report(tmp_path: Path, name: str, backend: str, op: str = "gemm", **params: Any) -> Path:
    path = tmp_path / f"{name}.json"
    run_check(make_check(backend, op, **(params or SMALL)), path)
    return path


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def jitterlib(monkeypatch: pytest.MonkeyPatch) -> str:
    """``jitterlib`` installed as a backend (tests/fakes.py), declared non-deterministic."""
    registered = _registry.adapter_entry_points()
    entry = EntryPoint("jitterlib", "fakes:JitterLib", _registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        _registry, "adapter_entry_points", lambda: registered | {"jitterlib": entry}
    )
    return "jitterlib"


# -- --rerun decides ------------------------------------------------------------------------


def test_rerun_bits_that_do_not_reproduce_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A forger re-stamps a passing report with other candidate bits (still a pass by their
    # own figures); --rerun printed "stored bits do not reproduce" and exited 0.
    path = _report(tmp_path, "strict", "array_api_strict")
    assert main(["replay", "--rerun", str(path)]) == 0
    data = json.loads(path.read_text())
    actual = output(data, "actual")
    set_output(data, "actual", actual * np.float32(1 + 2e-5))
    restamp(data)
    assert data["result"]["status"] == "passed"
    assert main(["replay", str(_write(path, data))]) == 0  # without --rerun: testimony
    capsys.readouterr()
    assert main(["replay", "--rerun", str(path)]) == 1
    err = capsys.readouterr().err
    assert "DISAGREES: re-run: stored bits do not reproduce (" in err
    assert "declares its output deterministic" in err


def test_rerun_of_a_candidate_that_cannot_run_here_does_not_confirm_it(tmp_path: Path) -> None:
    # A genuine pass relabelled as a backend absent here: "candidate not re-run: not_run"
    # was printed beside "agrees: passed".
    path = _report(tmp_path, "relabelled", "array_api_strict")
    data = json.loads(path.read_text())
    data["config"]["require_backend"] = data["result"]["backend"] = "metal"
    outcome = replay(document(data), rerun=True)
    assert outcome.checked[-1].startswith("candidate not re-run to an output: not_run")
    assert any(
        p.startswith("re-run: the candidate metal did not run") for p in outcome.disagreements
    )


def test_a_declared_non_deterministic_candidate_is_held_to_its_verdict(
    jitterlib: str, tmp_path: Path
) -> None:
    path = _report(tmp_path, "jitter", jitterlib)
    data = json.loads(path.read_text())
    assert data["result"]["status"] == "passed"
    # Other bits on every run: declared, so the verdict (passed) is what must reproduce.
    honest = replay(document(data), rerun=True)
    assert "stored bits do not reproduce" in honest.checked[-1]
    assert "declared non-deterministic" in honest.checked[-1]
    assert not [p for p in honest.disagreements if p.startswith("re-run")]
    # Its stored verdict forged into a failure (bits doubled, figures re-stamped): the
    # re-run's verdict is passed, which disagrees.
    set_output(data, "actual", output(data, "actual") * 2)
    restamp(data)
    forged = replay(document(data), rerun=True)
    assert "re-run: stored failed, the candidate now passed" in forged.disagreements
