"""`diffcheck run`: the contract's section 8 tests, ported to diffcheck's names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from diffcheck import ConfigError
from diffcheck.cli import main
from diffcheck.cli.run_args import parse_run_args
from diffcheck.inputs import random_vec
from diffcheck.report import OutputArray, decode_output

CANDIDATE = "array_api_strict"  # passes with no adapter code; a test dependency
UNAVAILABLE = "cupy"  # an array-api-compat library, hidden where a test needs it absent


def argv(report: Path, backend: str = CANDIDATE, op: str = "rms-norm") -> list[str]:
    return ["--require-backend", backend, "--op", op, "--report", str(report)]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["run", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explicit_backend_and_operator_select_typed_precision_defaults(tmp_path: Path) -> None:
    for precision, tolerance in (("f32", 1e-7), ("f16", 1e-6), ("bf16", 1e-4)):
        args = parse_run_args([*argv(tmp_path / "r.json"), "--precision", precision])
        assert args is not None
        assert args.check.max_nmse == tolerance
        assert args.check.expected_elements == 512
        assert args.check.precision == precision
    with pytest.raises(ConfigError, match="--require-backend is required"):
        parse_run_args([])
    with pytest.raises(ConfigError, match='unsupported required backend "cpu"'):
        parse_run_args(argv(tmp_path / "r.json", backend="cpu"))
    with pytest.raises(ConfigError, match='unsupported operator "quantized-marlin"'):
        parse_run_args(argv(tmp_path / "r.json", op="quantized-marlin"))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--tokens", "0"], "RMSNorm tokens and dim must be nonzero"),
        (["--dim", "0"], "RMSNorm tokens and dim must be nonzero"),
        (["--eps", "NaN"], "RMSNorm epsilon must be finite and positive"),
        (["--eps", "0"], "RMSNorm epsilon must be finite and positive"),
        (["--max-nmse", "inf"], "--max-nmse must be finite and strictly positive"),
        (["--max-nmse", "-1"], "--max-nmse must be finite and strictly positive"),
        (["--max-nmse", "tiny"], "--max-nmse must be a float"),
        (["--seed", "-1"], "invalid numeric value for --seed"),
        (["--seed", str(2**64)], "invalid numeric value for --seed"),
        (["--bogus", "1"], 'unknown option "--bogus"'),
        (["--max-nmse=1e-7", "1"], 'unknown option "--max-nmse=1e-7"'),
        (["--tokens"], "missing value for --tokens"),
        (["--dim", "--seed"], "missing value for --dim"),
        (["--dim", ""], "missing value for --dim"),
        (["--op", "gemm"], "duplicate option --op"),
        (["--tokens", str(2**64 - 1), "--dim", "2"], "RMSNorm tokens * dim overflows usize"),
        (["--tokens", "1.5"], "invalid numeric value for --tokens"),
        (["--intermediate", "3"], "option --intermediate does not apply to the selected operator"),
        (["--precision", "f64"], "--precision must be one of f32, f16, bf16"),
        (["--reference", CANDIDATE], "a backend cannot vouch for itself"),
        (["--reference", "nonesuch"], 'unsupported reference backend "nonesuch"'),
    ],
)
def test_malformed_arguments_do_not_start_execution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    report = tmp_path / "must-not-exist.json"
    code, _out, err = run_cli([*argv(report), *extra], capsys)
    assert code == 1
    assert err.startswith("diffcheck: ")
    assert message in err
    if "unknown option" not in message:
        assert err.count("\n") == 1, "an error is one line"
    assert not report.exists()
    assert list(tmp_path.iterdir()) == []


def test_missing_op_fails_without_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["--require-backend", CANDIDATE], capsys)
    assert code == 1
    assert "--op is required" in err
    code, _, err = run_cli(["--require-backend", CANDIDATE, "--op", "gemm"], capsys)
    assert code == 1
    assert "--report is required" in err
    assert list(tmp_path.iterdir()) == []


def test_help_exits_zero_and_help_mixed_with_arguments_is_an_unknown_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    assert "usage: diffcheck run" in out
    assert "context-lifecycle" in out
    code, _, err = run_cli([*argv(tmp_path / "r.json"), "--help", "x"], capsys)
    assert code == 1
    assert 'unknown option "--help"' in err


def test_run_help_is_argparse_help_of_exactly_the_options_run_reads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One declaration: the options the contract's reader accepts are the parser's, and the
    # help (argparse's, as for every other command) lists each of them, every op's included.
    import argparse
    import re

    from diffcheck.cli.run_args import ALLOWED
    from diffcheck.cli.run_parser import run_parser, usage
    from diffcheck.ops import OPS

    assert isinstance(run_parser(), argparse.ArgumentParser)
    code, out, _ = run_cli(["-h"], capsys)
    assert code == 0
    assert out.rstrip("\n") == usage() == run_parser().format_help().rstrip("\n")
    for section in (
        "usage: diffcheck run [-h] --require-backend",
        "\nrequired:\n",
        "\noptions:\n",
        "\noperator options:\n",
    ):
        assert section in out
    listed = set(re.findall(r"^  (?:-h, )?(--[a-z_-]+)", out, flags=re.MULTILINE))
    assert listed == ALLOWED | {"--help"}
    every_op_option = {f"--{name}" for op in OPS.values() for name in op.options}
    assert every_op_option <= ALLOWED
    for op in OPS:
        assert f"\n  {op}" in out  # each operator's defaults under the options


def test_explicit_tolerance_and_tail_shape_are_preserved(tmp_path: Path) -> None:
    args = parse_run_args(
        [
            *argv(tmp_path / "r.json"),
            "--tokens",
            "3",
            "--dim",
            "33",
            "--eps",
            "1e-5",
            "--seed",
            "9",
            "--max-nmse",
            "2e-8",
        ]
    )
    assert args is not None
    assert args.check.expected_elements == 99
    assert args.check.seed == 9
    assert args.check.max_nmse == 2e-8
    assert np.float32(args.check.params.eps) == np.float32(1e-5)  # type: ignore[attr-defined]


def test_report_creation_failure_preserves_existing_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "existing.json"
    report.write_text("existing evidence")
    code, _, err = run_cli(argv(report), capsys)
    assert code == 1
    assert "create report" in err
    assert "File exists" in err
    assert report.read_text() == "existing evidence"
    missing = tmp_path / "no-such-dir" / "r.json"
    code, _, err = run_cli(argv(missing), capsys)
    assert code == 1
    assert "create report" in err
    assert not missing.parent.exists()


@pytest.mark.parametrize(
    ("op", "extra", "shape"),
    [
        ("gemm", ["--m", "64", "--n", "33", "--k", "35"], [64, 33]),
        ("gemm", ["--m", "1", "--n", "3", "--k", "5"], [1, 3]),
        ("silu-mul", ["--tokens", "3", "--intermediate", "257"], [3, 257]),
        ("rms-norm", ["--tokens", "3", "--dim", "33", "--eps", "1e-5"], [3, 33]),
        ("context-lifecycle", [], [4, 99]),
        ("metal-context", ["--tokens", "1", "--intermediate", "1", "--k", "1"], [4, 1]),
    ],
)
def test_operations_pass_bind_shape_and_write_a_replayable_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str, extra: list[str], shape: list[int]
) -> None:
    report = tmp_path / "r.json"
    code, out, err = run_cli([*argv(report, op=op), *extra], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Numerical check completed; report: {report}"
    assert lines[1].startswith("status: passed (")
    assert " < tolerance 1e-07" in lines[1]
    document = json.loads(report.read_text())
    assert document["completed"] is True
    assert document["output_shape"] == shape
    assert document["expected_output_elements"] == shape[0] * shape[1]
    assert document["config"]["op"] in {op, "context-lifecycle"}
    assert ("eps" in document["config"]) == (op == "rms-norm")
    assert document["result"]["status"] == "passed"
    assert document["result"]["reason"] is None
    assert document["executed_precision"]["backend_input_storage"] == "f32"
    assert document["result"]["actual"]["element_count"] == shape[0] * shape[1]
    assert main(["replay", str(report), "--require-pass"]) == 0


@pytest.mark.parametrize(
    ("op", "extra"),
    [
        ("gemm", ["--tokens", "4"]),
        ("gemm", ["--eps", "1e-6"]),
        ("silu-mul", ["--dim", "4"]),
        ("silu-mul", ["--m", "4"]),
        ("rms-norm", ["--intermediate", "4"]),
        ("gemm", ["--m", "0"]),
        ("gemm", ["--n", "0"]),
        ("gemm", ["--k", "0"]),
        ("silu-mul", ["--tokens", "0"]),
        ("silu-mul", ["--intermediate", "0"]),
        ("gemm", ["--k", str(2**64 - 1)]),
        ("silu-mul", ["--intermediate", str(2**64 - 1)]),
        ("context-lifecycle", ["--tokens", "0"]),
        ("context-lifecycle", ["--intermediate", "0"]),
        ("context-lifecycle", ["--k", "0"]),
        ("context-lifecycle", ["--dim", "33"]),
        ("context-lifecycle", ["--eps", "1e-6"]),
    ],
)
def test_irrelevant_flags_and_bad_shapes_are_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str, extra: list[str]
) -> None:
    report = tmp_path / "r.json"
    code, _, err = run_cli([*argv(report, op=op), *extra], capsys)
    assert code == 1
    assert err.startswith("diffcheck: ")
    assert not report.exists()


def test_smallest_leftover_option_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="option --dim does not apply"):
        parse_run_args([*argv(tmp_path / "r.json", op="gemm"), "--tokens", "1", "--dim", "2"])


def test_default_config_keeps_the_public_shape(tmp_path: Path) -> None:
    args = parse_run_args(argv(tmp_path / "r.json"))
    assert args is not None
    record = json.loads(args.check.record().model_dump_json())
    assert list(record) == [
        "require_backend",
        "op",
        "tokens",
        "dim",
        "eps",
        "precision",
        "seed",
        "max_nmse",
    ]
    assert record == {
        "require_backend": CANDIDATE,
        "op": "rms-norm",
        "tokens": 4,
        "dim": 128,
        "eps": record["eps"],
        "precision": "f32",
        "seed": 42,
        "max_nmse": 1e-7,
    }
    # eps is stored as the f32 value; its bits are the reference tool's 0x358637bd.
    assert int(np.array([record["eps"]], np.float32).view(np.uint32)[0]) == 0x358637BD


@pytest.mark.parametrize(
    ("op", "shape"),
    [
        ("rms-norm", [4, 128]),
        ("gemm", [64, 32]),
        ("silu-mul", [4, 256]),
        ("context-lifecycle", [4, 99]),
    ],
)
def test_unavailable_required_backend_writes_not_run_and_exits_nonzero(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    shape: list[int],
) -> None:
    monkeypatch.setitem(sys.modules, UNAVAILABLE, None)  # absent here even where it is installed
    report = tmp_path / "r.json"
    code, _, err = run_cli(argv(report, backend=UNAVAILABLE, op=op), capsys)
    assert code == 1
    assert "cupy is not installed" in err
    assert f"report: {report}" in err
    document = json.loads(report.read_text())
    assert document["completed"] is True
    result = document["result"]
    assert result["status"] == "not_run"
    assert result["reference"] is None
    assert result["actual"] is None
    assert result["metrics"] is None
    assert document["executed_precision"] is None
    assert document["execution_elapsed_ms"] >= 0
    assert document["output_shape"] == shape
    assert "submission_metrics" not in document
    # cupy has no command contexts: its lifecycle would run as four independent chains, and
    # the record claims no submission phases for it (the lifecycle with contexts is tested
    # with the fake device in tests/test_runner.py).
    assert "submission_phases" not in document
    if op == "context-lifecycle":
        assert "four independent" in document["execution_path"]
        assert document["coverage"].startswith("Four independent gemm -> copy -> silu-mul chains")
    assert main(["replay", str(report)]) == 0  # consistent: nothing to re-derive, nothing claimed


def test_cli_runs_as_a_console_script_with_one_line_errors(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "diffcheck", "run", *argv(tmp_path / "r.json"), "--tokens", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr == "diffcheck: RMSNorm tokens and dim must be nonzero\n"
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "r.json").exists()


def test_stored_bits_are_the_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    assert run_cli([*argv(report, op="gemm"), "--m", "1", "--n", "3", "--k", "5"], capsys)[0] == 0
    result = json.loads(report.read_text())["result"]
    reference = decode_output(OutputArray.model_validate(result["reference"]), "reference")
    actual = decode_output(OutputArray.model_validate(result["actual"]), "actual")
    assert reference.shape == (3,)
    # An independent oracle from the seeded inputs: C = A @ B.T in float64.
    a = random_vec(1 * 5, -1.0, 1.0, 42).astype(np.float64).reshape(1, 5)
    b = random_vec(3 * 5, -1.0, 1.0, 43).astype(np.float64).reshape(3, 5)
    oracle = (a @ b.T).reshape(-1)
    np.testing.assert_allclose(reference, oracle, rtol=1e-6, atol=0)
    np.testing.assert_allclose(actual, oracle, rtol=1e-5, atol=0)


def test_a_directory_as_report_gets_a_new_name_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Running the same documented command twice must not end in "File exists".
    pytest.importorskip(CANDIDATE)
    (tmp_path / "existing.json").write_text("existing evidence")
    paths = []
    for _ in range(2):
        code, out, _ = run_cli(argv(tmp_path), capsys)
        assert code == 0
        paths.append(Path(out.splitlines()[0].removeprefix("Numerical check completed; report: ")))
    assert paths[0] != paths[1]
    assert all(
        p.parent == tmp_path and p.name.startswith("rms-norm-array_api_strict-") for p in paths
    )
    assert sorted(tmp_path.iterdir()) == sorted([tmp_path / "existing.json", *paths])
    assert (tmp_path / "existing.json").read_text() == "existing evidence"
    assert all(json.loads(p.read_text())["result"]["status"] == "passed" for p in paths)


def test_an_existing_report_error_names_the_directory_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "existing.json"
    report.write_text("existing evidence")
    code, _, err = run_cli(argv(report), capsys)
    assert code == 1
    assert "a directory to get a new name in it (--report reports/)" in err
    assert len(err.splitlines()) == 1


def test_replay_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # `diffcheck replay R | head -1`: the reader leaves early; no traceback, SIGPIPE's status.
    pytest.importorskip(CANDIDATE)
    report = tmp_path / "r.json"
    assert main(["run", *argv(report)[:-2], "--report", str(report)]) == 0
    # More than a pipe's buffer (64 KiB), so the writer is still writing when head leaves.
    many = " ".join([str(report)] * 80)
    script = (
        f"{sys.executable} -m diffcheck replay --claims {many} | head -c 10 >/dev/null; "
        "exit ${PIPESTATUS[0]}"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    assert done.stderr == ""
    assert done.returncode == 141


def test_replay_names_the_claimed_fields_and_gives_their_values_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(CANDIDATE)
    report = tmp_path / "r.json"
    assert main(["run", *argv(report)]) == 0
    capsys.readouterr()
    assert main(["replay", str(report)]) == 0
    claimed = capsys.readouterr().out.splitlines()[-1]
    assert claimed.startswith(f"{report}: claimed, not verified: environment(platform, python")
    assert claimed.endswith("(--claims: their values)")
    assert "=" not in claimed
    assert len(claimed) < 400 + len(str(report))
    assert main(["replay", "--claims", str(report)]) == 0
    valued = capsys.readouterr().out.splitlines()[-1]
    assert "environment.platform='" in valued


def test_the_readmes_check_runs_twice_and_show_takes_every_report_its_glob_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(CANDIDATE)
    for _ in range(2):
        assert main(["run", *argv(tmp_path)]) == 0
    reports = sorted(tmp_path.glob("rms-norm-array_api_strict-*.json"))
    assert len(reports) == 2
    capsys.readouterr()
    assert main(["show", *map(str, reports)]) == 0
    out = capsys.readouterr().out
    assert [line.split(": ")[0] for line in out.splitlines() if ": rms-norm on " in line] == [
        str(p) for p in reports
    ]
    (tmp_path / "bad.json").write_text("{}")
    assert main(["show", str(reports[0]), str(tmp_path / "bad.json")]) == 1
