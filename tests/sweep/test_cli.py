"""``diffcheck sweep``: exit status rules, one-line errors, --resume and --only-available."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.config import Check
from diffcheck.report.replay import load_report
from diffcheck.report.writer import ReportWriter
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.records import new_document

TWO = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 64, n = 33, k = 35, seeds = [7] }]
"""
FIRST, SECOND = (
    f"{STRICT}/gemm/gemm-1x3x5-f32-s42",
    f"{STRICT}/gemm/gemm-64x33x35-f32-s7",
)

Sweep = Callable[..., SweepRun]


def planned_check(matrix: Path, check_id: str) -> Check:
    return next(c.check for c in plan_matrix(load_matrix(matrix)).checks if c.id == check_id)


def test_resume_skips_complete_reports_and_reruns_incomplete_ones(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    first = sweep_cli(matrix, out)
    assert first.code == 0, first.err
    kept = (out / f"{FIRST}.json").read_bytes()
    # Leave the second check as a crashed worker would: replaced by an incomplete record.
    second = out / f"{SECOND}.json"
    second.unlink()
    ReportWriter(second).write(new_document(planned_check(matrix, SECOND)))
    resumed = sweep_cli(matrix, out, "--resume")
    assert resumed.code == 0, resumed.err
    rows = resumed.rows()
    assert rows[FIRST]["resumed"] is True
    assert rows[FIRST]["worker"] == "not run: resumed"
    assert rows[SECOND]["resumed"] is False
    assert rows[SECOND]["worker"] == "exit 0"
    assert (out / f"{FIRST}.json").read_bytes() == kept
    assert load_report(second).completed
    aside = out / f"{SECOND}.incomplete.json"
    assert not load_report(aside).completed  # the old evidence is kept, not deleted


def test_existing_reports_without_resume_are_an_error(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    before = (out / f"{FIRST}.json").read_bytes()
    again = sweep_cli(matrix, out)
    assert again.code == 1
    assert again.err.count("\n") == 1
    assert "already exists; pass --resume" in again.err
    assert (out / f"{FIRST}.json").read_bytes() == before


def test_a_failed_check_fails_the_sweep(tmp_path: Path, sweep_cli: Sweep) -> None:
    # A real divergence, not a fake: float32 GEMM error is far above a 1e-30 tolerance.
    matrix = write_matrix(tmp_path, TWO.replace("seeds = [7] }", "seeds = [7], max_nmse = 1e-30 }"))
    run = sweep_cli(matrix, tmp_path / "out")
    assert run.code == 1
    row = run.rows()[SECOND]
    assert row["status"] == "failed"
    assert row["ratio"] > 1
    # The exact float32 rounding error depends on the BLAS kernel the machine picks, so the
    # figures are checked by magnitude and form, not digit for digit.
    match = re.fullmatch(
        r"NMSE (\S+) is not below tolerance 0\.0{29}1; max_abs=(\S+)", row["reason"]
    )
    assert match is not None, row["reason"]
    assert 1e-30 < float(match[1]) < 1e-9
    assert 0.0 < float(match[2]) < 1e-4
    assert run.summary["exit_reasons"] == ["1 check failed"]


def test_all_not_run_fails_and_required_not_run_fails(tmp_path: Path, sweep_cli: Sweep) -> None:
    nothing = write_matrix(tmp_path, TWO.replace("array_api_strict", "no_such_backend"), "n.toml")
    run = sweep_cli(nothing, tmp_path / "a")
    assert run.code == 1
    assert run.summary["exit_reasons"] == ["no check executed (every check is not_run)"]

    # array_api_strict executes f32 only: its f16 checks are not_run with the capability reason.
    required = TWO + "[defaults]\nprecisions = ['f32', 'f16']\n"
    optional = write_matrix(tmp_path, required, "o.toml")
    run = sweep_cli(optional, tmp_path / "b")
    assert run.code == 0, run.summary["exit_reasons"]
    f16 = [r for r in run.summary["checks"] if r["precision"] == "f16"]
    assert {r["status"] for r in f16} == {"not_run"}
    assert "does not execute precision f16" in f16[0]["reason"]
    strict = write_matrix(
        tmp_path,
        required.replace(
            'candidate = "array_api_strict"', 'candidate = "array_api_strict"\nrequired = true'
        ),
        "r.toml",
    )
    run = sweep_cli(strict, tmp_path / "c")
    assert run.code == 1
    assert run.summary["exit_reasons"] == [
        "required pair numpy -> array_api_strict has 2 not_run checks"
    ]


def test_only_available_leaves_out_optional_pairs_that_cannot_run(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    text = TWO + '[[pairs]]\ncandidate = "no_such_backend"\n'
    run = sweep_cli(write_matrix(tmp_path, text), tmp_path / "out", "--only-available")
    assert run.code == 0
    assert run.summary["counts"]["total"] == 2
    (left,) = run.summary["left_out"]
    assert left["candidate"] == "no_such_backend"
    assert "left out numpy -> no_such_backend" in run.out
    assert not (tmp_path / "out" / "numpy-vs-no_such_backend").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "0"], "diffcheck: --jobs 0, but it must be at least 1"),
        (
            ["--timeout", "-1"],
            "diffcheck: --timeout -1, but it must be a positive number of seconds",
        ),
        (["--executor", "dask"], "diffcheck: --executor dask needs --scheduler ADDRESS"),
        (["--scheduler", "tcp://x:1"], "diffcheck: --scheduler applies only to --executor dask"),
        (["--executor", "ray"], "diffcheck sweep: argument --executor: invalid choice: 'ray'"),
        (["--bogus"], "diffcheck sweep: unrecognized arguments: --bogus"),
    ],
)
def test_option_errors_are_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    try:
        code = main(["sweep", str(matrix), "--out", str(tmp_path / "out"), *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(message), err
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_bad_matrix_is_one_line_and_nothing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = write_matrix(tmp_path, TWO.replace("m = 1,", "m = 0,"))
    code = main(["sweep", str(matrix), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        f"diffcheck: matrix {matrix}: ops.gemm.shapes[0] (numpy -> array_api_strict, f32, "
        "seed 42): GEMM m, n and k must be nonzero\n"
    )
    assert not (tmp_path / "out").exists()


def test_reasons_print_literally_even_with_brackets(tmp_path: Path, sweep_cli: Sweep) -> None:
    import io

    from diffcheck.sweep.console import print_summary
    from diffcheck.sweep.summary import SweepSummary

    run = sweep_cli(
        write_matrix(tmp_path, TWO.replace("array_api_strict", "cupy"), "m.toml"), tmp_path / "o"
    )
    data = run.summary
    for row in data["checks"]:
        row["reason"] = "install pip install 'diffcheck-mlx[cuda]' [bold]here[/bold]"
    stream = io.StringIO()
    print_summary(SweepSummary.model_validate(data), [], stream=stream)
    assert "'diffcheck-mlx[cuda]' [bold]here[/bold]" in stream.getvalue()


def test_the_summary_table_prints_no_raw_control_character(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    # Issue 34 S2's class: rich passes ESC, OSC and NUL through; a reason (a backend's own
    # error text) or a matrix path must reach the terminal spelled, on one line.
    import io

    from diffcheck.sweep.console import print_summary
    from diffcheck.sweep.summary import SweepSummary

    run = sweep_cli(
        write_matrix(tmp_path, TWO.replace("array_api_strict", "cupy"), "m.toml"), tmp_path / "o"
    )
    data = run.summary
    data["matrix"] = "m\x1b]0;owned\x07.toml"
    for row in data["checks"]:
        row["reason"] = "clear\x1b[2J nul\x00 line\nbreak"
    stream = io.StringIO()
    print_summary(
        SweepSummary.model_validate(data), [("reports", tmp_path / "o\x1b[31m")], stream=stream
    )
    text = stream.getvalue()
    assert not [c for c in text if ord(c) < 0x20 and c != "\n"], text
    assert "clear\\x1b[2J nul\\x00 line\\x0abreak" in text, text
