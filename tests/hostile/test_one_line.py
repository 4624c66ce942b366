"""Issue 18 items 17 and 18: what used to end in a traceback or a split line is one line.

Each case fed the command a value that once raised (AssertionError, ValueError past the
4300-digit limit, OverflowError, UnicodeEncodeError, OSError) or echoed a newline or ESC raw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ._harness import assert_one_line, assert_refused, cli, cli_subprocess

_RUN = ["run", "--require-backend", "array_api_strict", "--op", "gemm"]


@pytest.mark.parametrize("command", ["replay", "upgrade"])
@pytest.mark.parametrize("version", [2.0, 1.0, True, "2", None, [2]])
def test_a_schema_version_that_only_equals_an_int_is_refused_in_one_line(
    tmp_path: Path, report_json: dict[str, Any], command: str, version: object
) -> None:
    report_json["schema_version"] = version
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report_json))
    argv = [command, str(path)] + (
        ["--out", str(tmp_path / "new.json")] if command == "upgrade" else []
    )
    code, _, err = cli(argv)
    assert_refused(code, err)
    assert "schema_version" in err
    assert not (tmp_path / "new.json").exists()


@pytest.mark.parametrize("option", ["--m", "--seed", "--k"])
@pytest.mark.parametrize("digits", [21, 4301, 5000])
def test_integers_past_u64_in_any_number_of_digits_are_one_line(
    tmp_path: Path, option: str, digits: int
) -> None:
    argv = [*_RUN, "--report", str(tmp_path / "r.json"), option, "9" * digits]
    code, _, err = cli(argv)
    assert_refused(code, err)
    assert option in err
    assert not (tmp_path / "r.json").exists()


def test_twenty_digits_with_leading_zeros_still_parse(tmp_path: Path) -> None:
    # The digit bound counts significant digits: zeros in front are not a larger number.
    argv = [*_RUN, "--report", str(tmp_path / "r.json"), "--m", "0" * 30 + "2"]
    argv += ["--n", "2", "--k", "2"]
    code, _, err = cli(argv)
    assert code == 0, err


@pytest.mark.parametrize(
    "size", ["9" * 400, "1" + "0" * 30 + "TiB", "99999999999TiB", "1e310TiB", "9" * 5000 + ".5G"]
)
def test_max_memory_too_large_to_be_a_size_is_one_line(tmp_path: Path, size: str) -> None:
    code, _, err = cli([*_RUN, "--report", str(tmp_path / "r.json"), "--max-memory", size])
    assert_refused(code, err)
    assert "--max-memory" in err
    assert len(err) < 400


def test_max_memory_at_the_bound_still_parses() -> None:
    from diffcheck.memory import MAX_SIZE, parse_size

    assert parse_size(str(MAX_SIZE)) == MAX_SIZE
    assert parse_size("1.5GiB") == 3 * 2**29


@pytest.mark.parametrize(
    "env", [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}]
)
@pytest.mark.parametrize("argv", [["run", "--help"], ["--help"], ["ops"]])
def test_help_on_an_ascii_stdout_is_written_with_escapes(
    env: dict[str, str], argv: list[str]
) -> None:
    done = cli_subprocess(argv, env={**env, "PYTHONIOENCODING": env.get("PYTHONIOENCODING", "")})
    assert b"Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode in (0, 1)
    assert done.stdout
    if argv == ["run", "--help"]:
        assert done.returncode == 0
        done.stdout.decode("ascii")  # everything it wrote is ASCII (escapes for · and ᵀ)


def test_schema_write_into_a_regular_file_says_it_is_not_a_directory(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    code, _, err = cli(["schema", "--write", str(target)])
    assert_refused(code, err)
    assert "is not a directory" in err
    assert target.read_text() == "x"


@pytest.mark.parametrize("name", ["a" * 300, "a\x00b", "missing/sub"])
def test_schema_write_to_an_unusable_name_is_one_line(tmp_path: Path, name: str) -> None:
    code, _, err = cli(["schema", "--write", str(tmp_path / name)])
    assert_refused(code, err)
    assert list(tmp_path.iterdir()) == []


def test_pytest_reference_option_naming_no_backend_is_a_usage_line(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        "def test_a(diffcheck_compare):\n"
        "    import numpy as np\n"
        "    diffcheck_compare(lambda xp, a: a + 1, np.ones(4, dtype=np.float32))\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "test_a.py",
            "--diffcheck-reference=nosuch",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    text = done.stderr + done.stdout
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, text
    assert "Traceback" not in text
    assert "--diffcheck-reference='nosuch' is not a backend" in text
    assert "required backend" not in text


_HOSTILE_NAMES = ["a\nb", "x\x1b[31mred", "tab\there", "nul\x7fdel", "line\u2028sep", "c1\x85"]


@pytest.mark.parametrize("name", _HOSTILE_NAMES)
def test_a_path_with_control_characters_is_echoed_escaped(tmp_path: Path, name: str) -> None:
    for argv in (
        ["replay", str(tmp_path / name)],
        ["upgrade", str(tmp_path / name), "--out", str(tmp_path / "o.json")],
        ["schema", "--write", str(tmp_path / name)],
        ["sweep", str(tmp_path / name), "--out", str(tmp_path / "out")],
    ):
        code, _, err = cli(argv)
        assert_refused(code, err)


@pytest.mark.parametrize("name", _HOSTILE_NAMES)
def test_a_backend_or_op_name_with_control_characters_is_echoed_escaped(
    tmp_path: Path, name: str
) -> None:
    report = str(tmp_path / "r.json")
    for argv in (
        ["run", "--require-backend", name, "--op", "gemm", "--report", report],
        ["run", "--require-backend", "array_api_strict", "--op", name, "--report", report],
        [*_RUN, "--report", report, "--reference", name],
        [*_RUN, "--report", report, "--precision", name],
        [name],
        ["replay", f"--{name}"],
    ):
        code, _, err = cli(argv)
        assert_refused(code, err)
    assert not Path(report).exists()


def test_the_one_line_check_itself_fails_on_a_split_or_raw_escape() -> None:
    for bad in (
        "diffcheck: a\nb\n",
        "diffcheck: \x1b[31m\n",
        "Traceback (most recent call last)\n",
    ):
        with pytest.raises(AssertionError):
            assert_one_line(bad)


@pytest.mark.parametrize("version", [2.0, True])
def test_the_resume_reader_refuses_a_schema_version_that_only_equals_an_int(
    tmp_path: Path, report_json: dict[str, Any], version: object
) -> None:
    # sweep --resume and the sweep's settling read through read_report.
    from diffcheck.errors import ReportError
    from diffcheck.report.read import read_report

    report_json["schema_version"] = version
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report_json))
    with pytest.raises(ReportError, match="schema_version"):
        read_report(path)
