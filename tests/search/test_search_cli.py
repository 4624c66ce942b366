"""``diffcheck fuzz --api``: options, one-line errors, the schema, known divergences, coverage."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from diffcheck.adapters import KnownApiDivergence
from diffcheck.adapters.api_inputs import EVERY_INPUT, NAN_INPUT
from diffcheck.cli import main
from diffcheck.search import search_api
from diffcheck.search.findings import FINDINGS_SCHEMA_FILE, findings_schema_text
from diffcheck.search.table import SKIPPED, all_functions, recipes
from diffcheck.values.spec import ADDED_2024_12, STANDARD_FUNCTIONS
from value_fakes import FaultyAdapter

SCHEMA = Path(__file__).parents[2] / "reports" / "schema" / FINDINGS_SCHEMA_FILE
STRICT = "array_api_strict"


def test_checked_in_findings_schema_matches_the_model() -> None:
    assert SCHEMA.read_text() == findings_schema_text(), (
        "run 'nox -s schema' and commit reports/schema/findings-v2.json"
    )


def test_every_standard_function_is_searched_or_skipped_with_a_reason() -> None:
    table = recipes()
    everything = {n for names in STANDARD_FUNCTIONS.values() for n in names} | set(ADDED_2024_12)
    assert set(all_functions()) == everything
    assert set(table) | set(SKIPPED) == everything
    assert not set(table) & set(SKIPPED)
    assert all(reason.strip() for reason in SKIPPED.values())


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--api", "--op", "gemm"], "not allowed with"),
        (["--api", "--functions", "exp,nope"], "--functions nope"),
        (["--api", "--functions", ","], "--functions is empty"),
        (["--api", "--precision", "f16"], "--precision belong to --op"),
        (["--op", "gemm", "--functions", "exp"], "--functions belongs to --api"),
        (["--api", "--examples", "0"], "--examples 0"),
    ],
)
def test_bad_options_are_one_line(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_code(["fuzz", "--require-backend", STRICT, *argv]) == 1
    err = capsys.readouterr().err
    assert words in err
    assert len(err.strip().splitlines()) == 1


def _exit_code(argv: list[str]) -> int:
    """The command's exit status, whether it returns it or the parser exits with it."""
    try:
        return main(argv)
    except SystemExit as leaving:
        return int(leaving.code or 0)


def test_an_existing_out_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["fuzz", "--require-backend", STRICT, "--api", "--out", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err
    assert "exists; give a new directory, or --resume to continue it" in err
    assert list(tmp_path.iterdir()) == []


def test_the_command_writes_findings_that_validate_against_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("array_api_strict", reason="the candidate is array-api-strict")
    out = tmp_path / "out"
    argv = ["fuzz", "--require-backend", STRICT, "--api", "--functions", "exp,add,empty"]
    code = main([*argv, "--examples", "15", "--seed", "2", "--out", str(out)])
    captured = capsys.readouterr()
    assert "api search: 2 functions" in captured.out
    assert "api search: 3/3 empty" in captured.err  # a line per function without a terminal
    document = json.loads((out / "findings.json").read_text())
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert [s["function"] for s in document["skipped"]] == ["empty"]
    assert [r["function"] for r in document["functions_tried"]] == ["exp", "add"]
    assert code == (0 if not document["findings"] else 1)
    assert (out / "index.html").read_text().startswith("<!doctype html>")


class _Declaring(FaultyAdapter):
    """A faulty backend that declares its own divergences, as an adapter would."""

    def known_api_divergences(self) -> tuple[KnownApiDivergence, ...]:
        return (
            KnownApiDivergence(
                function="hypot", kind="missing", covers=EVERY_INPUT, reason="not offered"
            ),
            KnownApiDivergence(
                function="hypot", kind="value", covers=NAN_INPUT, reason="a kind never seen"
            ),
            KnownApiDivergence(
                function="exp", kind="value", covers=NAN_INPUT, reason="fixed long ago"
            ),
            KnownApiDivergence(
                function="sin", kind="value", covers=NAN_INPUT, reason="not searched here"
            ),
        )


def test_declared_divergences_mark_findings_known_and_list_those_not_seen(tmp_path: Path) -> None:
    result = search_api(
        _Declaring("missing"), functions=["hypot", "exp"], examples=15, out=tmp_path / "out"
    )
    doc = result.document
    assert [(f.function, f.kind, f.known is not None) for f in doc.findings] == [
        ("hypot", "missing", True)
    ]
    assert doc.counts.known == 1
    assert result.unexplained == 0
    assert [(d.function, d.kind) for d in doc.known] == [("hypot", "missing")]
    # Declared for searched functions and met by no finding; sin was not searched at all.
    assert [(d.function, d.kind) for d in doc.no_longer_reproduces] == [
        ("hypot", "value"),
        ("exp", "value"),
    ]
    assert "known" in (tmp_path / "out" / "index.html").read_text()


def test_a_declared_divergence_excuses_only_its_kind_and_dtypes(tmp_path: Path) -> None:
    class Narrow(FaultyAdapter):
        def known_api_divergences(self) -> tuple[KnownApiDivergence, ...]:
            return (
                KnownApiDivergence(
                    function="log1p", kind="value", covers=NAN_INPUT, reason="wrong kind"
                ),
                KnownApiDivergence(
                    function="log1p",
                    kind="nan",
                    dtypes=("float16",),
                    covers=NAN_INPUT,
                    reason="wrong dtype",
                ),
            )

    result = search_api(  # in-process: a local class cannot be sent to a worker process
        Narrow("nan"), functions=["log1p"], examples=30, out=tmp_path / "out", isolate=False
    )
    assert result.document.findings
    assert all(f.known is None for f in result.document.findings)
    assert result.unexplained == len(result.document.findings)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"function": "not_a_function", "kind": "value"}, "standard function"),
        ({"function": "exp", "kind": "wrong"}, "kind="),
        ({"function": "exp", "kind": "value", "dtypes": "float32"}, "tuple of dtype"),
        ({"function": "exp", "kind": "value", "dtypes": ("float8",)}, "standard dtype"),
        ({"function": "exp", "kind": "value", "upstream": "two\nlines"}, "one non-empty line"),
    ],
)
def test_a_malformed_declaration_is_one_line(fields: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words) as error:
        KnownApiDivergence(reason="because", covers=NAN_INPUT, **fields)  # type: ignore[arg-type]
    assert "\n" not in str(error.value)


class _Hostile(FaultyAdapter):
    """A backend whose error message carries markup and control characters."""

    def __init__(self) -> None:
        super().__init__()

        def atan2(x1: object, x2: object) -> object:
            raise ValueError("<script>alert(1)</script>\x07\x1b[31m")

        self._namespace.atan2 = atan2  # type: ignore[attr-defined]


def test_the_page_escapes_markup_and_control_characters(tmp_path: Path) -> None:
    search_api(  # in-process: the patched namespace lives in this process only
        _Hostile(), functions=["atan2"], examples=10, out=tmp_path / "out", isolate=False
    )
    page = (tmp_path / "out" / "index.html").read_text()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "\x07" not in page
    assert "\x1b" not in page
    assert "\\x07" in page


def test_on_a_terminal_the_progress_is_a_rich_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("array_api_strict", reason="the candidate is array-api-strict")
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["fuzz", "--require-backend", STRICT, "--api", "--functions", "exp", "--examples", "5"]
    assert _exit_code(argv) in (0, 1)
    assert "api search: 1/1" not in terminal.getvalue()  # no plain lines on a terminal
    assert "api search: 1 functions" in capsys.readouterr().out
