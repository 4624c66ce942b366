"""Hostile input and forged evidence around a sweep: --resume, report paths, views, options."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from sweep_helpers import STRICT, SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.install import core_install
from diffcheck.report.replay import load_report
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


def _sweep_process(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``diffcheck sweep`` in its own process, memory-capped (a reader of /dev/zero fails)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [sys.executable, "-m", "diffcheck", "sweep", *args, "--quiet"],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=cap,
        check=False,
    )


def test_resume_replays_a_reused_report_and_never_trusts_an_edited_verdict(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    monkeypatch.setenv(FAULT_ENV, f"{SECOND}:exit")
    first = sweep_cli(matrix, out)
    assert first.code == 1
    forged = out / f"{SECOND}.json"
    data = json.loads(forged.read_text())
    assert data["result"]["status"] == "failed"
    data["result"]["status"], data["result"]["reason"] = "passed", None
    forged.unlink()
    forged.write_text(json.dumps(data))
    evidence = forged.read_bytes()
    resumed = sweep_cli(matrix, out, "--resume")
    rows = resumed.rows()
    assert rows[FIRST]["resumed"] is True  # an honest report replays and is reused
    assert rows[SECOND]["resumed"] is False  # the forged one is not
    assert rows[SECOND]["status"] == "failed"  # rerun, and the fault is still there
    assert resumed.code == 1
    aside = out / f"{SECOND}.unverified.json"
    assert aside.read_bytes() == evidence  # kept aside, byte for byte
    assert "does not replay (a passed result must store both outputs)" in resumed.err
    assert resumed.err.count("\n") == 1


def test_a_symlink_at_a_report_path_is_never_followed(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    # A valid complete report, elsewhere, linked in place of the real one.
    elsewhere = tmp_path / "elsewhere.json"
    report = out / f"{FIRST}.json"
    elsewhere.write_bytes(report.read_bytes())
    report.unlink()
    report.symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    resumed = sweep_cli(matrix, out, "--resume")
    assert resumed.code == 1
    assert resumed.err == (
        f"diffcheck: {report} is a symbolic link, not a report; it is never followed or "
        "replaced: remove it, or choose a new --out\n"
    )
    assert report.is_symlink()
    assert elsewhere.read_bytes() == before


def test_a_symlinked_report_directory_is_never_followed(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / STRICT).symlink_to(elsewhere, target_is_directory=True)
    run = sweep_cli(matrix, out)
    assert run.code == 1
    assert run.err == (
        f"diffcheck: {out / STRICT} is a symbolic link; report directories are never "
        "followed: remove it, or choose a new --out\n"
    )
    assert list(elsewhere.iterdir()) == []


def test_a_deeply_nested_or_binary_report_is_moved_aside_and_rerun(
    tmp_path: Path, sweep_cli: Sweep
) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    nested = "[" * 100_000
    (out / f"{FIRST}.json").write_text(nested)
    (out / f"{SECOND}.json").write_bytes(b"\xff\xfe\x00binary")
    resumed = sweep_cli(matrix, out, "--resume")
    assert resumed.code == 0, resumed.err
    assert {row["resumed"] for row in resumed.rows().values()} == {False}
    assert (out / f"{FIRST}.incomplete.json").read_text() == nested
    assert load_report(out / f"{FIRST}.json").completed
    lines = resumed.err.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(
        "1x3x5-f32-s42.json: it is nested too deeply to be a report; "
        "moved to gemm-1x3x5-f32-s42.incomplete.json, rerunning"
    )
    assert "is not UTF-8 text" in lines[1]


def test_a_fifo_at_a_report_path_is_one_line_not_a_hang(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    assert sweep_cli(matrix, out).code == 0
    fifo = out / f"{FIRST}.json"
    fifo.unlink()
    os.mkfifo(fifo)
    done = _sweep_process(str(matrix), "--out", str(out), "--resume", timeout=60)
    assert done.returncode == 1
    assert done.stderr == (
        f"diffcheck: {fifo} is not a regular file, not a report; it is never followed or "
        "replaced: remove it, or choose a new --out\n"
    )


@pytest.mark.parametrize("kind", ["nested", "binary", "directory"])
def test_malformed_matrix_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "m.toml"
    if kind == "nested":
        path.write_text("a = " + "[" * 100_000)
    elif kind == "binary":
        path.write_bytes(b"schema_version = 1\n\xff\xfe\x00")
    else:
        path.mkdir()
    code = main(["sweep", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"diffcheck: matrix {path}: "), err
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_endless_matrix_files_are_one_line_errors(tmp_path: Path, kind: str) -> None:
    # In a memory-capped process of its own: an unbounded reader would hang or exhaust it.
    path = tmp_path / "m.toml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    done = _sweep_process(str(path), "--out", str(tmp_path / "out"), timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(f"diffcheck: matrix {path}: cannot use it: "), done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_planted_symlinks_cannot_redirect_the_views(tmp_path: Path, sweep_cli: Sweep) -> None:
    matrix = write_matrix(tmp_path, TWO)
    out = tmp_path / "out"
    out.mkdir()
    victims = {}
    # The names the views' temporaries used to have, for this process: each a symlink out.
    for name in ("summary.json", "junit.xml", "index.html"):
        victim = tmp_path / f"victim-{name}"
        victim.write_text("precious")
        (out / f".{name}.{os.getpid()}.tmp").symlink_to(victim)
        victims[name] = victim
    run = sweep_cli(matrix, out)
    assert run.code == 0, run.err
    for name, victim in victims.items():
        assert victim.read_text() == "precious"
        assert (out / name).is_file()
        assert not (out / name).is_symlink()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()]


def test_control_characters_are_escaped_in_junit_and_html(tmp_path: Path, sweep_cli: Sweep) -> None:
    text = 'description = "bell \\u0007 and \\u001b[31m escape"\n' + TWO
    run = sweep_cli(write_matrix(tmp_path, text), tmp_path / "out")
    assert run.code == 0, run.err
    junit = (tmp_path / "out" / "junit.xml").read_bytes()
    ET.fromstring(junit)  # parses: no raw control character left
    assert b"\x07" not in junit
    assert b"\x1b" not in junit
    html = (tmp_path / "out" / "index.html").read_text()
    assert not any(ch in html for ch in "\x01\x07\x0b\x1b")
    assert "bell \\x07 and \\x1b[31m escape" in html
    # A pair's backend names never carry them: the matrix refuses them (issue 34, S1's rule).
    bad = TWO + '[[pairs]]\ncandidate = "no\\u0001such\\u000bbackend"\n'
    refused = sweep_cli(write_matrix(tmp_path, bad, "bad.toml"), tmp_path / "out2")
    assert refused.code == 1
    assert refused.err.count("\n") == 1
    assert "no\\x01such\\x0bbackend" in refused.err
    assert not (tmp_path / "out2").exists()


def test_booleans_are_not_numbers_in_a_matrix(tmp_path: Path, sweep_cli: Sweep) -> None:
    for bad, message in (
        ("m = true, n = 3", "ops.gemm.shapes.0: m = true: a boolean where a number is expected"),
        ("m = 1, n = 3, seeds = [false]", "seeds = a list with a boolean"),
    ):
        matrix = write_matrix(tmp_path, TWO.replace("m = 1, n = 3", bad), "b.toml")
        run = sweep_cli(matrix, tmp_path / "out")
        assert run.code == 1
        assert message in run.err
        assert run.err.count("\n") == 1
        assert not (tmp_path / "out").exists()


def test_dask_without_distributed_creates_nothing(
    tmp_path: Path, sweep_cli: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    out = tmp_path / "out"
    run = sweep_cli(
        write_matrix(tmp_path, TWO), out, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"
    )
    assert run.code == 1
    assert run.err == (
        f"diffcheck: --executor dask needs the distributed package: {core_install('dask')}\n"
    )
    assert not out.exists()


def test_option_values_are_checked_before_planning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, message in (
        (["--worker-checks", "0"], "diffcheck: --worker-checks 0, but it must be at least 1\n"),
        (["--max-checks", "0"], "diffcheck: --max-checks 0, but it must be at least 1\n"),
        (
            ["--isolation", "lukewarm"],
            "diffcheck sweep: argument --isolation: invalid choice: 'lukewarm'",
        ),
    ):
        try:
            code = main(["sweep", str(write_matrix(tmp_path, TWO)), *args])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        err = capsys.readouterr().err
        assert code == 1
        assert err.startswith(message), err
        assert err.count("\n") == 1, err
