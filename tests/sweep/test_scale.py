"""Large matrices: planning reads the registry once, refuses oversize matrices, shows progress;
a pair whose candidate is its reference is refused; progress without a terminal."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import io
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import write_matrix

from diffcheck.errors import ConfigError
from diffcheck.sweep.matrix import parse_matrix
from diffcheck.sweep.plan import PROGRESS_EVERY, count_checks, plan_matrix
from diffcheck.sweep.progress import SweepProgress
from diffcheck.sweep.summary import SummaryRow


def _matrix(shapes: int, seeds: int, candidate: str = "array_api_strict") -> Any:
    return parse_matrix(
        {
            "schema_version": 1,
            "pairs": [{"candidate": candidate}],
            "defaults": {"seeds": list(range(seeds))},
            "ops": {"gemm": {"shapes": [{"m": m, "n": 3, "k": 5} for m in range(1, shapes + 1)]}},
        }
    )


def test_planning_scans_entry_points_once_not_per_check(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = importlib.metadata.entry_points

    def counting(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr("diffcheck.adapters._registry.entry_points", counting)
    plan = plan_matrix(_matrix(shapes=20, seeds=10))
    assert len(plan.checks) == 200
    assert len(calls) == 1
    # Every seed's check is the first one's with only the seed changed.
    seeds = [c.check.seed for c in plan.checks[:10]]
    assert seeds == list(range(10))
    first = plan.checks[0].check
    for planned in plan.checks[1:10]:
        assert planned.check == dataclasses.replace(first, seed=planned.check.seed)
    assert len({c.id for c in plan.checks}) == 200


def test_an_oversize_matrix_is_refused_before_it_is_expanded() -> None:
    matrix = _matrix(shapes=100, seeds=1001)
    assert count_checks(matrix) == 100_100
    with pytest.raises(ConfigError) as caught:
        plan_matrix(matrix, source="matrix m.toml")
    assert str(caught.value) == (
        "matrix m.toml: the matrix expands to 100100 checks, over the limit of 100000; "
        "pass --max-checks 100100 to run it anyway"
    )
    assert len(plan_matrix(_matrix(shapes=2, seeds=3), max_checks=6).checks) == 6
    with pytest.raises(ConfigError, match="expands to 6 checks, over the limit of 5"):
        plan_matrix(_matrix(shapes=2, seeds=3), max_checks=5)


def test_planning_reports_progress() -> None:
    seen: list[tuple[int, int]] = []
    plan_matrix(
        _matrix(shapes=3, seeds=PROGRESS_EVERY), on_progress=lambda d, t: seen.append((d, t))
    )
    total = 3 * PROGRESS_EVERY
    assert seen == [
        (0, total),
        (PROGRESS_EVERY, total),
        (2 * PROGRESS_EVERY, total),
        (total, total),
    ]


def test_planning_progress_reaches_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from diffcheck.cli import main

    # The second shape repeats the first: planning fails after reporting its progress.
    text = (
        "schema_version = 1\n[[pairs]]\ncandidate = 'array_api_strict'\n"
        "[defaults]\nseeds = [" + ", ".join(map(str, range(PROGRESS_EVERY))) + "]\n"
        "[ops.gemm]\nshapes = [{ m = 1, n = 3, k = 5 }, { m = 1, n = 3, k = 5 }]\n"
    )
    code = main(["sweep", str(write_matrix(tmp_path, text)), "--max-checks", "5"])
    err = capsys.readouterr().err
    assert code == 1
    assert "over the limit of 5" in err
    code = main(["sweep", str(write_matrix(tmp_path, text)), "--out", str(tmp_path / "o")])
    lines = capsys.readouterr().err.splitlines()
    assert code == 1
    assert lines[0] == f"diffcheck sweep: planning 0/{2 * PROGRESS_EVERY} checks"
    assert "repeats check" in lines[-1]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [("numpy", "numpy"), ("numpy", "numpy:cpu"), ("array_api_strict", "array_api_strict")],
)
def test_a_candidate_that_is_its_reference_is_refused_at_plan_time(
    reference: str, candidate: str
) -> None:
    matrix = parse_matrix(
        {
            "schema_version": 1,
            "pairs": [
                {"candidate": "array_api_strict"},
                {"reference": reference, "candidate": candidate},
            ],
            "ops": {"gemm": {"shapes": [{"m": 1, "n": 3, "k": 5}]}},
        }
    )
    with pytest.raises(ConfigError) as caught:
        plan_matrix(matrix, source="matrix m.toml")
    message = str(caught.value)
    assert message.startswith(f'matrix m.toml: pairs[1]: candidate "{candidate}" is the same')
    assert "cannot vouch for itself" in message
    assert "\n" not in message


def _row(candidate: str, status: str = "passed") -> SummaryRow:
    return SummaryRow(
        id=f"x-{candidate}",
        reference="numpy",
        candidate=candidate,
        required=False,
        op="gemm",
        shape="1x3x5",
        params={"m": 1, "n": 3, "k": 5},
        precision="f32",
        seed=42,
        status=status,  # type: ignore[arg-type]
        reason=None if status == "passed" else "why",
        not_independent=None,
        nmse=0.0,
        tolerance=1e-7,
        ratio=0.0,
        segments=[],
        report="x.json",
        elapsed_ms=1.0,
        worker_wall_s=0.1,
        worker="exit 0",
        parent_action=None,
        resumed=False,
        known_divergence=None,
    )


def test_progress_without_a_terminal_prints_bounded_plain_lines() -> None:
    stream = io.StringIO()  # not a terminal
    pairs = {"numpy -> a": 500, "numpy -> b": 500}
    with SweepProgress(1000, stream=stream, pairs=pairs, heartbeat_s=3600) as progress:
        for _ in range(500):
            progress.advance(_row("a"))
        for index in range(500):
            progress.advance(_row("b", "failed" if index == 0 else "passed"))
    lines = stream.getvalue().splitlines()
    # Pair a finished within the first second (no line: too soon); the last check ends it.
    assert lines[-1].startswith("sweep: 1000/1000 checks (999 passed, 1 failed, 0 not_run) after")
    assert lines[-1].endswith("; done")
    assert 1 <= len(lines) <= 3
    assert "\x1b" not in stream.getvalue()


def test_progress_heartbeat_and_quiet() -> None:
    stream = io.StringIO()
    with SweepProgress(2, stream=stream, pairs={"numpy -> a": 2}, heartbeat_s=0.05) as progress:
        import time

        time.sleep(1.5)
        progress.advance(_row("a"))
    assert "sweep: 0/2 checks (0 passed, 0 failed, 0 not_run) after 1 s; still running" in (
        stream.getvalue()
    )
    silent = io.StringIO()
    with SweepProgress(1, enabled=False, stream=silent) as progress:
        progress.advance(_row("a"))
    assert silent.getvalue() == ""
