"""Any ``diffcheck run`` argument list: a valid check with a complete report, or one line.

Hypothesis draws argument lists from the real options and values (valid and invalid) and
arbitrary text. For every one, ``diffcheck run`` either runs a valid check, leaving exactly
one complete report, or prints one line on stderr and exits 1 having created nothing;
never a traceback, never a ``completed: false`` file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from diffcheck.cli import main
from diffcheck.cli.run_args import ALLOWED, parse_run_args
from diffcheck.errors import ConfigError

#: How many argument lists the property tries (the report states it).
ARGV_CASES = 250

_KEYS = [*sorted(ALLOWED), "--bogus", "-h", "--help", "--max-nmse=1e-7", "--", "-"]
_VALUES = [
    "array_api_strict",
    "numpy",
    "numpy:cpu",
    "cupy",
    "torch:nope",
    "nope",
    "gemm",
    "rms-norm",
    "silu-mul",
    "context-lifecycle",
    "metal-context",
    "f32",
    "f16",
    "bf16",
    "0",
    "1",
    "3",
    "7",
    "-1",
    "+2",
    "1e-6",
    "2e-7",
    "1e-30",
    "nan",
    "inf",
    "18446744073709551616",
    "1K",
    "1GiB",
    "@REPORT",
    "@DIR",
    "@MISSING",
    "a\nb",
    "\x00",
    "\ud800",
]
_TOKENS = st.one_of(st.sampled_from(_KEYS), st.sampled_from(_VALUES), st.text(max_size=8))
_ARGV = st.one_of(
    st.lists(_TOKENS, max_size=14),
    # Mostly well-formed: required options first, then anything.
    st.tuples(
        st.just(["--require-backend"]),
        st.sampled_from(["array_api_strict", "numpy", "cupy"]),
        st.just(["--op"]),
        st.sampled_from(["gemm", "rms-norm", "silu-mul", "context-lifecycle"]),
        st.just(["--report", "@REPORT"]),
        st.lists(
            st.tuples(
                st.sampled_from(
                    [
                        "--seed",
                        "--precision",
                        "--max-nmse",
                        "--m",
                        "--tokens",
                        "--eps",
                        "--max-memory",
                        "--reference",
                        "--k",
                    ]
                ),
                st.sampled_from(_VALUES),
            ),
            max_size=3,
        ).map(lambda pairs: [token for pair in pairs for token in pair]),
        st.lists(st.sampled_from(["--allow-self-test", "--bogus"]), max_size=1),
    ).map(lambda t: [*t[0], t[1], *t[2], t[3], *t[4], *t[5], *t[6]]),
)


def _paths(argv: list[str], directory: Path) -> list[str]:
    names = {
        "@REPORT": str(directory / "r.json"),
        "@DIR": str(directory),
        "@MISSING": str(directory / "missing" / "r.json"),
    }
    return [names.get(token, token) for token in argv]


def _files(directory: Path) -> set[Path]:
    return {p for p in directory.rglob("*") if p.is_file()}


@settings(
    max_examples=ARGV_CASES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_ARGV)
def test_any_run_argv_is_a_valid_check_or_one_line_and_no_report(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        args = _paths(argv, directory)
        try:
            parsed = parse_run_args(args)
            error = None
        except ConfigError as raised:
            parsed, error = None, raised
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(directory)  # a report named by arbitrary text lands here, not in the tree
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["run", *args])
        finally:
            os.chdir(cwd)
        files = _files(directory)
        event("config error" if error is not None else "valid or help")
        if error is not None:
            assert code == 1
            assert len(err.getvalue().splitlines()) == 1, err.getvalue()
            assert files == set(), files
            return
        if parsed is None:  # --help
            assert code == 0
            assert out.getvalue().startswith("usage: diffcheck run")
            return
        assert code in (0, 1)
        report = parsed.report if parsed.report.is_absolute() else directory / parsed.report
        if code == 1 and not report.is_file():
            # Refused before the report existed (its directory is missing, it is a directory,
            # the memory budget): one line, nothing created.
            assert len(err.getvalue().splitlines()) == 1, err.getvalue()
            assert files == set(), files
            return
        event(f"report written, exit {code}")
        assert files == {report}
        document = json.loads(report.read_text())
        assert document["completed"] is True
        assert (document["result"]["status"] == "passed") == (code == 0)
