"""The stored summary.json is read as strictly as a report: exact types, no extra keys, bounded.

Each edit below makes a summary that a lax reader takes (a JSON true for the version 1, the
text "4" or 4.0 for a count, an unknown key); ``diffcheck replay SWEEP_DIR`` must refuse it
in one line naming the field, before re-deriving anything.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import write_matrix

from diffcheck.cli import main
from diffcheck.sweep import audit

MATRIX = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }]
"""

Edit = Callable[[dict[str, Any]], None]


def _set(*path: str | int, value: Any) -> Edit:
    def edit(summary: dict[str, Any]) -> None:
        target: Any = summary
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return edit


def _delete(key: str) -> Edit:
    return lambda summary: summary.pop(key)


EDITS: dict[str, tuple[Edit, str]] = {  # name: (edit, what the refusal names)
    "version true": (_set("schema_version", value=True), "schema_version True"),
    "version '1'": (_set("schema_version", value="1"), "schema_version '1'"),
    "version 1.0": (_set("schema_version", value=1.0), "schema_version 1.0"),
    "version '2'": (_set("schema_version", value="2"), "schema_version '2'"),
    "version 4": (_set("schema_version", value=4), "schema_version 4"),
    "version 2.0": (_set("schema_version", value=2.0), "schema_version 2.0"),
    "version 0": (_set("schema_version", value=0), "schema_version 0"),
    "version missing": (_delete("schema_version"), "schema_version None"),
    "count as text": (_set("counts", "total", value="1"), "counts.total"),
    "count as float": (_set("counts", "passed", value=1.0), "counts.passed"),
    "count as bool": (_set("counts", "not_run", value=False), "counts.not_run"),
    "seed as float": (_set("checks", 0, "seed", value=42.0), "checks.0.seed"),
    "required as int": (_set("checks", 0, "required", value=1), "checks.0.required"),
    "nmse as text": (_set("checks", 0, "tolerance", value="0.001"), "checks.0.tolerance"),
    "exit status as text": (_set("exit_status", value="0"), "exit_status"),
    "extra top-level key": (_set("verdict", value="passed"), "verdict"),
    "extra row key": (_set("checks", 0, "signed_off", value=True), "checks.0.signed_off"),
    "extra counts key": (_set("counts", "waived", value=0), "counts.waived"),
}


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("summary")
    matrix = write_matrix(base, MATRIX)
    assert main(["sweep", str(matrix), "--out", str(base / "out"), "--quiet"]) == 0
    return base


def _copy(genuine: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    shutil.copy(genuine / "matrix.toml", tmp_path / "matrix.toml")
    shutil.copytree(genuine / "out", tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary["matrix"] = str(tmp_path / "matrix.toml")
    return tmp_path / "out", summary


def _replay(directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["replay", str(directory)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_genuine_summary_agrees(
    genuine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Non-finite floats are written as text; a claimed one still reads.
    directory, summary = _copy(genuine, tmp_path)
    summary["elapsed_s"] = "Infinity"
    (directory / "summary.json").write_text(json.dumps(summary))
    code, _, err = _replay(directory, capsys)
    assert (code, err) == (0, "")


@pytest.mark.parametrize("name", list(EDITS))
def test_a_coerced_or_unknown_field_is_refused_in_one_line(
    genuine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    edit, named = EDITS[name]
    directory, summary = _copy(genuine, tmp_path)
    edit(summary)
    (directory / "summary.json").write_text(json.dumps(summary))
    code, out, err = _replay(directory, capsys)
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert f"{directory / 'summary.json'}: not a sweep summary (" in err, err
    assert named in err, err


def test_a_summary_that_is_not_an_object_is_refused(
    genuine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, _ = _copy(genuine, tmp_path)
    (directory / "summary.json").write_text("[1]")
    code, out, err = _replay(directory, capsys)
    assert (code != 0, out, err.count("\n")) == (True, "", 1), err
    assert "not a sweep summary (no JSON object;" in err, err


def test_a_huge_summary_is_refused_from_its_size(
    genuine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, _ = _copy(genuine, tmp_path)
    with open(directory / "summary.json", "r+b") as file:  # sparse: no disk, no read
        file.truncate(audit.MAX_SUMMARY_BYTES + 1)
    reads = 0
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        nonlocal reads
        reads += 1
        return real_read(fd, size)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "read", counting_read)
        code, out, err = _replay(directory, capsys)
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1, err
    assert str(audit.MAX_SUMMARY_BYTES) in err, err
    assert reads == 0


def test_a_summary_object_with_many_keys_is_refused_as_it_is_decoded(
    genuine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, summary = _copy(genuine, tmp_path)
    summary["checks"][0]["params"] = {f"p{i}": i for i in range(200_000)}
    (directory / "summary.json").write_text(json.dumps(summary))
    code, out, err = _replay(directory, capsys)
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1, err
    assert "200000 keys" in err, err


@pytest.mark.parametrize(
    "matrix",
    ["m" * 100_000, "/" + "d/" * 2100 + "m.toml", "/tmp/" + "n" * 256 + ".toml", "nul\x00.toml"],
    ids=["100k-characters", "path-over-4096-bytes", "part-over-255-bytes", "nul-byte"],
)
def test_a_matrix_path_no_system_takes_is_one_line(
    genuine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], matrix: str
) -> None:
    # Issue 34 T4: a 100,000-character matrix path was `OSError: File name too long`.
    directory, summary = _copy(genuine, tmp_path)
    summary["matrix"] = matrix
    (directory / "summary.json").write_text(json.dumps(summary))
    code, out, err = _replay(directory, capsys)
    assert (code, out, err.count("\n")) == (1, "", 1), err
    assert "is no file name" in err
    assert "Traceback" not in err
    assert "\x00" not in err
    assert len(err) < 1000
