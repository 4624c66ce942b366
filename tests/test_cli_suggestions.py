"""A mistyped name gets the nearest one and a pointer to the listing; both spellings of an
option work; numeric errors state the range; an existing report path says what to do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters import known_backends
from diffcheck.cli import main
from diffcheck.cli.run_args import ALLOWED, SPELLINGS, parse_run_args
from diffcheck.errors import ConfigError
from diffcheck.ops import OPS
from diffcheck.suggest import did_you_mean, nearest

CANDIDATE = "array_api_strict"


def _err(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's commands exit from their parser
        code = int(exit_.code or 0)
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["backend"], "unknown command 'backend' (did you mean \"backends\"?)"),
        (
            ["run", "--require-backend", "mlxx:cpu", "--op", "gemm", "--report", "r.json"],
            "did you mean \"mlx:cpu\"? 'diffcheck backends' lists every backend",
        ),
        (
            ["run", "--require-backend", CANDIDATE, "--op", "gem", "--report", "r.json"],
            'unsupported operator "gem" (did you mean "gemm"?); \'diffcheck ops\' lists every op',
        ),
        (
            ["run", "--require-backend", CANDIDATE, "--op", "gemm", "--seeed", "1"],
            'unknown option "--seeed" (did you mean "--seed"?)',
        ),
        (
            ["run", "--require-backend", CANDIDATE, "--op", "gemm", "--m", "-1"],
            'invalid numeric value for --m: "-1"; it must be a whole number from 0 to',
        ),
        (
            ["fuzz", "--require-backend", CANDIDATE, "--op", "gemm", "--exampels", "2"],
            'unrecognized arguments: --exampels 2 (did you mean "--examples"?)',
        ),
    ],
)
def test_a_typo_names_the_nearest_name_and_where_to_look(
    argv: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert expected in _err(argv, capsys)
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([*OPS]), st.data())
def test_every_op_name_with_one_letter_dropped_suggests_that_op(
    name: str, data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(name) - 1))
    typo = name[:at] + name[at + 1 :]
    if typo in OPS or not typo:
        return
    with pytest.raises(ConfigError) as raised:
        parse_run_args(["--require-backend", CANDIDATE, "--op", typo, "--report", "r.json"])
    suggested = nearest(typo, [*OPS])
    assert suggested is not None
    assert f'did you mean "{suggested}"?' in str(raised.value)
    assert "'diffcheck ops' lists every op" in str(raised.value)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(known_backends()), st.data())
def test_every_backend_with_a_letter_doubled_suggests_that_backend(
    name: str, data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(name) - 1))
    typo = name[: at + 1] + name[at:]
    with pytest.raises(ConfigError, match="'diffcheck backends' lists every backend") as raised:
        parse_run_args(["--require-backend", f"{typo}:cpu", "--op", "gemm", "--report", "r"])
    assert f'did you mean "{nearest(typo, known_backends())}:cpu"?' in str(raised.value)


def test_every_option_is_accepted_in_both_spellings() -> None:
    for option in ALLOWED:
        other = "--" + (
            option[2:].replace("_", "-") if "_" in option else option[2:].replace("-", "_")
        )
        if other != option:
            assert SPELLINGS[other] == option
    assert SPELLINGS["--head-dim"] == "--head_dim"
    assert SPELLINGS["--require_backend"] == "--require-backend"


@pytest.mark.parametrize("spelling", ["--head-dim", "--head_dim"])
def test_head_dim_in_either_spelling_sets_the_same_param(spelling: str) -> None:
    args = parse_run_args(
        ["--require-backend", CANDIDATE, "--op", "attention", spelling, "8", "--report", "r.json"]
    )
    assert args is not None
    assert args.check.params.head_dim == 8  # type: ignore[attr-defined]


def test_both_spellings_at_once_are_one_key_given_twice() -> None:
    with pytest.raises(ConfigError, match="duplicate option --head_dim"):
        parse_run_args(
            [
                "--require-backend",
                CANDIDATE,
                "--op",
                "attention",
                "--head-dim",
                "8",
                "--head_dim",
                "8",
                "--report",
                "r.json",
            ]
        )


def test_argparse_commands_take_both_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--all"]) == 0
    capsys.readouterr()
    assert main(["replay", "--require_pass", "/nonexistent/r.json"]) == 1
    err = capsys.readouterr().err
    assert "unrecognized" not in err
    assert "read report" in err


def test_an_existing_report_says_it_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    report.write_text("mine")
    err = _err(
        ["run", "--require-backend", CANDIDATE, "--op", "gemm", "--report", str(report)], capsys
    )
    assert "File exists" in err
    assert "a report is never overwritten: give a new path, a directory to get a new name" in err
    assert report.read_text() == "mine"


def test_no_suggestion_for_a_name_far_from_all() -> None:
    assert did_you_mean("zzzzzzzz", ["gemm", "softmax"]) == ""
    assert did_you_mean("gemm", ["gemm"]) == ""


@pytest.mark.parametrize(
    ("typo", "expected"),
    [("--seeed", "--seed"), ("--exampels", "--examples"), ("--bogus", None), ("--m", "--m")],
)
def test_options_are_suggested_only_when_close(typo: str, expected: str | None) -> None:
    assert nearest(typo, [*ALLOWED, "--examples"]) == expected


@pytest.mark.parametrize(
    "command", ["run", "replay", "show", "backends", "ops", "schema", "upgrade", "sweep", "fuzz"]
)
def test_help_is_plain_text_without_rst_markup(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code: object
    try:
        code = main([command, "--help"])
    except SystemExit as exit_:  # argparse's commands exit after printing help
        code = exit_.code
    assert code in (0, None)
    out = capsys.readouterr().out
    assert out.startswith("usage: diffcheck ")
    assert "``" not in out
    assert not re.search(r":[a-z]+:`", out), out


def test_rst_is_reduced_to_its_words() -> None:
    from diffcheck.cli._parser import plain

    assert plain("``diffcheck run``: see :func:`diffcheck.compare` and :class:`~x.Y`") == (
        "diffcheck run: see diffcheck.compare and x.Y"
    )
