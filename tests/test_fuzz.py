"""``diffcheck fuzz``: it passes a correct backend, catches and shrinks planted tail bugs,
writes replayable evidence, stops on not_run, and draws the same shapes for the same seed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck import ConfigError
from diffcheck.adapters import Execution, Probe, resolve
from diffcheck.cli import main
from diffcheck.fuzz import FuzzResult, edges, fuzz, fuzzable_ops, space_for
from diffcheck.gpu_plan import GEMM_TILE_M, GEMM_TILE_N, GEMV_ROWS
from diffcheck.ops import HostInputs, Op
from diffcheck.ops.gemm import GemmParams
from diffcheck.precision import PrecisionName
from diffcheck.report.replay import load_report, replay
from fakes import FakeAdapter

CANDIDATE = "array_api_strict"  # a test dependency that passes every op with no adapter code
UNAVAILABLE = "cupy"  # an array-api-compat library, hidden where a test needs it absent
SMALL = 20_000  # elements per example: every test here stays fast


class GemmBug(FakeAdapter):
    """NumPy, except that gemm zeroes the last output column when ``broken(params)``."""

    name = "gemm-bug"

    def __init__(self, broken: Callable[[GemmParams], bool]) -> None:
        super().__init__(contexts=False)
        self.broken = broken

    def execute(
        self,
        op: Op[Any],
        params: Any,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Any = "candidate",
    ) -> Execution:
        run = super().execute(op, params, inputs, precision, role=role)
        if op.name != "gemm" or not self.broken(params):
            return run
        output = run.output.reshape(params.m, params.n).copy()
        output[:, -1] = 0.0  # the tail column is never written
        return Execution(
            output.reshape(-1),
            run.input_storage,
            run.output_storage,
            run.kernel_entrypoint,
            run.execution_path,
        )


def column_tail(p: GemmParams) -> bool:
    return p.n % GEMM_TILE_N != 0


def column_tail_past_one_tile(p: GemmParams) -> bool:
    return p.n > GEMM_TILE_N and p.n % GEMM_TILE_N != 0


def gemv_only(p: GemmParams) -> bool:
    return p.m == 1


def gemv_second_workgroup(p: GemmParams) -> bool:
    return p.m == 1 and p.n > GEMV_ROWS


def minimal_gemm(result: FuzzResult) -> GemmParams:
    """The minimal failing gemm shape of a failed result."""
    assert result.status == "failed", result.summary()
    assert result.check is not None
    assert isinstance(result.check.params, GemmParams)
    return result.check.params


def shapes(result: FuzzResult) -> list[tuple[tuple[tuple[str, Any], ...], int]]:
    return [(tuple(sorted(values.items())), seed) for values, seed in result.history]


# -- a correct backend passes ------------------------------------------------------------


@pytest.mark.parametrize("op", fuzzable_ops())
def test_a_correct_backend_passes_every_op_within_the_budget(op: str) -> None:
    result = fuzz(CANDIDATE, op, examples=6, max_elements=SMALL)
    assert result.status == "passed", result.summary()
    assert 1 <= result.examples <= 6
    assert result.check is None
    assert result.report is None
    space = space_for(op)
    assert all(space.size(values) <= SMALL for values, _ in result.history)
    assert result.summary().startswith(f"fuzz: {result.examples} examples of {op} on {CANDIDATE}")


def test_edges_hold_one_primes_powers_of_two_and_tile_neighbours() -> None:
    values = edges((GEMM_TILE_M,), 200)
    assert values[0] == 1
    assert list(values) == sorted(set(values))
    assert {2, 3, 5, 7, 31, 32, 33, 127, 128, 129} <= set(values)
    assert {GEMM_TILE_M - 1, GEMM_TILE_M + 1, 2 * GEMM_TILE_M + 1, 3 * GEMM_TILE_M - 1} <= set(
        values
    )
    assert max(values) <= 200


# -- planted bugs are caught and shrunk ------------------------------------------------------


def test_a_column_tail_bug_shrinks_to_a_small_n_off_the_tile() -> None:
    result = fuzz(GemmBug(column_tail), "gemm", examples=50, max_elements=SMALL)
    params = minimal_gemm(result)
    assert params.n % GEMM_TILE_N != 0
    assert params.n <= GEMM_TILE_N + 1
    assert result.reason
    assert "NMSE" in result.reason
    assert result.verdict is not None
    assert not result.verdict.passed


def test_a_tail_bug_past_the_first_tile_shrinks_to_one_tile_plus_a_column() -> None:
    result = fuzz(GemmBug(column_tail_past_one_tile), "gemm", examples=100, max_elements=SMALL)
    params = minimal_gemm(result)
    # Not the first example: found by the search, then shrunk to the smallest such shape.
    assert result.examples > 1
    assert result.shrink_runs > 0
    assert GEMM_TILE_N < params.n < 2 * GEMM_TILE_N
    assert params.n % GEMM_TILE_N != 0
    assert (params.m, params.k) == (1, 1)
    assert result.check is not None
    assert result.check.seed == 0
    assert f"minimal failing m=1 n={params.n} k=1 seed=0" in result.summary()


@pytest.mark.parametrize("broken", [gemv_only, gemv_second_workgroup])
def test_a_gemv_only_bug_shrinks_to_one_row(broken: Callable[[GemmParams], bool]) -> None:
    result = fuzz(GemmBug(broken), "gemm", examples=100, max_elements=SMALL)
    params = minimal_gemm(result)
    assert params.m == 1
    assert params.k == 1
    low = GEMV_ROWS if broken is gemv_second_workgroup else 0
    assert low < params.n <= low + 1


# -- evidence: a replayable report, and the CLI ----------------------------------------------


def test_the_minimal_failure_is_written_as_a_new_report_that_replays(tmp_path: Path) -> None:
    result = fuzz(
        GemmBug(column_tail_past_one_tile),
        "gemm",
        examples=100,
        max_elements=SMALL,
        report_dir=tmp_path / "evidence",  # created
    )
    params = minimal_gemm(result)
    assert result.check is not None
    assert result.report is not None
    assert result.report.parent == tmp_path / "evidence"
    assert result.report_status == "failed"
    document = load_report(result.report)
    assert document.completed
    assert document.result is not None
    assert document.result.status == "failed"
    assert document.config.model_dump()["n"] == params.n
    assert document.result.seed == result.check.seed
    assert replay(document).agrees
    # Fuzzing again writes another file; the first one is never overwritten.
    again = fuzz(
        GemmBug(column_tail_past_one_tile),
        "gemm",
        examples=100,
        max_elements=SMALL,
        report_dir=tmp_path / "evidence",
    )
    assert again.report is not None
    assert again.report != result.report
    assert replay(load_report(result.report)).agrees


def test_nothing_is_written_when_every_example_passes(tmp_path: Path) -> None:
    assert fuzz(CANDIDATE, "silu-mul", examples=3, max_elements=SMALL, report_dir=tmp_path).passed
    assert list(tmp_path.iterdir()) == []


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(["fuzz", *args])
    except SystemExit as exit_:  # the option parser exits, as it does from the console script
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_exit_zero_when_every_example_passes(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--require-backend", CANDIDATE, "--op", "gemm", "--examples", "5"]
    code, out, _ = run_cli([*args, "--max-elements", str(SMALL)], capsys)
    assert code == 0
    assert out.startswith(f"fuzz: 5 examples of gemm on {CANDIDATE} passed (largest m=")


def test_cli_exit_one_with_the_minimal_shape_reason_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # f32 accumulation against the reference's f64 cannot meet an absurd tolerance once k > 1.
    args = ["--require-backend", CANDIDATE, "--op", "gemm", "--max-nmse", "1e-300"]
    code, out, err = run_cli(
        [*args, "--max-elements", str(SMALL), "--report-dir", str(tmp_path)], capsys
    )
    assert code == 1
    # stdout says where the minimal shape fails: its worst element by [row, col] in (m, n).
    (where,) = out.splitlines()
    assert re.fullmatch(
        r"where: worst \|diff\| .* at \[0, \d+\] \(flat index \d+\) of output shape \(1, \d+\).*",
        where,
    ), where
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"diffcheck: fuzz: gemm on {CANDIDATE} failed after ")
    assert "minimal failing m=1 n=" in line
    assert "is not below tolerance" in line
    (report,) = tmp_path.iterdir()
    assert line.endswith(f"; report: {report}")
    assert json.loads(report.read_text())["config"]["k"] > 1
    assert main(["replay", str(report)]) == 0


_BACKEND = ["--require-backend", CANDIDATE]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--op", "gemm"], "the following arguments are required: --require-backend"),
        (_BACKEND, "one of the arguments --op --api is required"),
        ([*_BACKEND, "--op", "nope"], 'unsupported operator "nope"'),
        ([*_BACKEND, "--op", "gemm", "--examples", "x"], "--examples: invalid unsigned integer"),
        ([*_BACKEND, "--op", "gemm", "--examples", "0"], "--examples 0, but it must be at least 1"),
        ([*_BACKEND, "--op", "gemm", "--max-elements", "2"], "--max-elements 2, but gemm needs 3"),
        ([*_BACKEND, "--op", "gemm", "--max-nmse", "-1"], "--max-nmse must be finite and strictly"),
        ([*_BACKEND, "--op", "gemm", "--reference", CANDIDATE], "cannot vouch for itself"),
        ([*_BACKEND, "--op", "gemm", "--seed", "-1"], "--seed: invalid unsigned integer"),
        ([*_BACKEND, "--op", "gemm", "--precision", "f8"], "--precision: invalid choice"),
        (["--require-backend", "nope", "--op", "gemm"], 'unsupported required backend "nope"'),
    ],
)
def test_cli_errors_are_one_line_and_exit_one(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli([*args, "--report-dir", str(tmp_path / "r")], capsys)
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert message in err
    assert not (tmp_path / "r").exists()  # rejected before anything ran or was written


def test_invalid_options_are_rejected_before_anything_runs() -> None:
    fake = FakeAdapter()
    with pytest.raises(ConfigError, match="--examples 0"):
        fuzz(fake, "gemm", examples=0)
    with pytest.raises(ConfigError, match='unsupported reference backend "nope"'):
        fuzz(fake, "gemm", reference="nope")
    with pytest.raises(ConfigError, match="deadline_s=0"):
        fuzz(fake, "gemm", deadline_s=0)
    assert fake.executed == 0


# -- not_run stops at once -------------------------------------------------------------------


def test_an_unavailable_backend_stops_the_fuzz_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, UNAVAILABLE, None)  # absent here even where it is installed
    result = fuzz(UNAVAILABLE, "gemm", report_dir=tmp_path)
    assert result.status == "not_run"
    assert result.reason is not None
    assert "cupy" in result.reason
    assert result.examples == 1
    assert result.shrink_runs == 0
    assert result.summary() == (
        f"fuzz: gemm on {UNAVAILABLE} not_run: {result.reason}; report: {result.report}"
    )
    assert result.report is not None
    assert result.report_status == "not_run"
    assert replay(load_report(result.report)).agrees


def test_a_not_run_fake_executes_nothing() -> None:
    fake = FakeAdapter(probe=Probe.unavailable("no device here"))
    result = fuzz(fake, "rms-norm", examples=100)
    assert (result.status, result.reason, fake.executed) == ("not_run", "no device here", 0)


def test_cli_not_run_exits_one_with_the_reason(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, UNAVAILABLE, None)
    code, out, err = run_cli(["--require-backend", UNAVAILABLE, "--op", "silu-mul"], capsys)
    assert code == 1
    assert out == ""
    assert err.startswith(f"diffcheck: fuzz: silu-mul on {UNAVAILABLE} not_run: ")
    assert len(err.strip().splitlines()) == 1


# -- reproducibility ---------------------------------------------------------------------------


_SUBPROCESS = """
import json, sys
from diffcheck.fuzz import fuzz
result = fuzz("array_api_strict", "rms-norm", examples=15, seed=3, max_elements=20000)
print(json.dumps([[sorted(values.items()), seed] for values, seed in result.history]))
"""


def test_the_same_seed_draws_the_same_shapes_in_any_process(tmp_path: Path) -> None:
    first = fuzz(CANDIDATE, "rms-norm", examples=15, seed=3, max_elements=SMALL)
    second = fuzz(CANDIDATE, "rms-norm", examples=15, seed=3, max_elements=SMALL)
    other = fuzz(CANDIDATE, "rms-norm", examples=15, seed=4, max_elements=SMALL)
    assert shapes(first) == shapes(second)
    assert shapes(first) != shapes(other)
    # A fresh process (other modules loaded, another working directory) draws the same, and
    # Hypothesis writes nothing there (no .hypothesis directory).
    completed = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    drawn = [
        (tuple((key, value) for key, value in values), seed)
        for values, seed in json.loads(completed.stdout)
    ]
    assert drawn == shapes(first)
    assert list(tmp_path.iterdir()) == []


def test_a_deadline_stops_drawing_new_examples() -> None:
    result = fuzz(CANDIDATE, "gemm", examples=1000, max_elements=SMALL, deadline_s=1e-9)
    assert result.passed
    assert result.examples == 1


def test_importing_diffcheck_and_its_cli_does_not_import_hypothesis() -> None:
    code = (
        "import sys, diffcheck, diffcheck.cli, diffcheck.cli.commands, diffcheck.fuzz\n"
        "import diffcheck.cli.fuzz_command\n"
        "assert 'hypothesis' not in sys.modules, 'hypothesis was imported'\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr


# -- a real raw-GPU backend --------------------------------------------------------------------


def test_wgpu_gemm_passes_a_few_examples() -> None:
    adapter = resolve("wgpu")
    probe = adapter.probe()
    if not probe.is_available:
        pytest.skip(f"wgpu: {probe.reason}")
    result = fuzz(adapter, "gemm", examples=10, max_elements=SMALL)
    assert result.status == "passed", result.summary()
    assert np.all([space_for("gemm").size(values) <= SMALL for values, _ in result.history])


def test_every_op_is_fuzzable_and_drawn_examples_are_valid() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from diffcheck.ops import OPS

    assert fuzzable_ops() == list(OPS)
    names = ("softmax", "rope", "attention")
    drawn_examples = st.one_of(
        *(space_for(name).strategy(SMALL).map(lambda d, n=name: (n, d)) for name in names)
    )

    @settings(max_examples=60, database=None, deadline=None)
    @given(drawn_examples)
    def valid(example: tuple[str, tuple[dict[str, Any], int]]) -> None:
        name, (values, _) = example
        op = OPS[name]
        assert op.validate(op.params(**values)) >= 1  # causal, GQA and even-width fixes
        assert space_for(name).size(values) <= SMALL

    valid()
    assert space_for("rope").largest({}, "tokens", 10**9) == 4096  # positions stay short
