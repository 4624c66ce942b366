"""Any ``replay`` or ``fuzz`` argument list: accepted, or one line on stderr and exit 1.

Hypothesis draws argument lists from the real options, values that are valid and invalid
for them, report files of every kind (passed, failed, not JSON, incomplete, missing, a
directory) and arbitrary text. For each, ``diffcheck replay`` / ``diffcheck fuzz`` exits 0 or
1 (``--help`` exits 0 with the usage), never raises, and every stderr line is a one-line
diagnostic. ``replay`` says ``agrees: passed`` only for the report that passed, and exits 0
only when every report it was given agrees. ``fuzz`` runs for real on tiny shapes (a few
examples, a few dozen elements), so an accepted argument list really runs; it writes only
under ``--report-dir``.

Cases tried per run: 200 replay argument lists, 60 fuzz argument lists. (``run`` and
``sweep`` argument lists: tests/test_run_argv_property.py, tests/sweep/test_properties.py.)
"""

from __future__ import annotations

import contextlib
import functools
import io
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report.writer import ReportWriter
from diffcheck.runner import initial_document, run_check
from diffcheck.testing import perturb

REPLAY_CASES = 200
FUZZ_CASES = 60

_NO_LINE_BREAKS = st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))


def _cli(argv: Sequence[str], cwd: Path) -> tuple[int, str, str]:
    """``diffcheck`` with ``argv`` run in ``cwd``: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit_:  # argparse's own exits (usage errors, --help)
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _one_line_each(err: str) -> list[str]:
    assert "Traceback" not in err
    assert "\r" not in err
    lines = err.splitlines()
    assert err == "" or err.endswith("\n"), err
    for line in lines:
        assert line.startswith(("diffcheck", "@", "fuzz: ")), line
    return lines


# replay


@functools.cache
def _report_texts() -> dict[str, bytes]:
    """Report files of every kind, written once per session."""
    from diffcheck.adapters import resolve

    texts: dict[str, bytes] = {"@BAD": b"{not json", "@EMPTY": b""}
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        check = make_check("array_api_strict", "gemm", m=2, n=3, k=4)
        run_check(check, root / "pass.json")
        run_check(check, root / "fail.json", candidate=perturb(resolve("array_api_strict"), "nan"))
        writer = ReportWriter(root / "incomplete.json")
        writer.write(initial_document(check, resolve("array_api_strict")))
        texts["@PASS"] = (root / "pass.json").read_bytes()
        texts["@FAIL"] = (root / "fail.json").read_bytes()
        texts["@INCOMPLETE"] = (root / "incomplete.json").read_bytes()
    return texts


_FILES = ["@PASS", "@FAIL", "@BAD", "@EMPTY", "@INCOMPLETE", "@MISSING", "@DIR"]
_REPLAY_TOKENS = st.one_of(
    st.sampled_from(["@PASS", "@PASS", "@PASS", "@FAIL", "@FAIL", *_FILES]),
    st.sampled_from(["--require-pass"] * 6 + ["-h", "--help", "--bogus", "--", "-"]),
    st.text(_NO_LINE_BREAKS, max_size=8),
)


@settings(
    max_examples=REPLAY_CASES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.one_of(
        st.lists(_REPLAY_TOKENS, max_size=6),
        # Only reports that load, so that agreement (and --require-pass) is reached often.
        st.lists(st.sampled_from(["@PASS", "@FAIL", "--require-pass"]), min_size=1, max_size=4),
    )
)
def test_any_replay_argv_agrees_or_is_one_line_per_problem(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for name, text in _report_texts().items():
            (root / name).write_bytes(text)
        (root / "@DIR").mkdir()
        before = sorted(p.name for p in root.iterdir())
        code, out, err = _cli(["replay", *argv], root)
        assert sorted(p.name for p in root.iterdir()) == before, "replay writes nothing"
    lines = _one_line_each(err)
    if ("-h" in argv or "--help" in argv) and code == 0:
        assert out.startswith("usage: diffcheck replay")
        event("help")
        return
    assert code in (0, 1), (code, out, err)
    for line in out.splitlines():
        # After its agreement line: what replay could not re-derive, what it checked against
        # the world, and the fields it cannot verify.
        if any(kind in line for kind in (": note: ", ": checked: ", ": claimed, not verified: ")):
            continue
        path, _, verdict = line.rpartition(": agrees: ")
        assert verdict in ("passed", "failed"), line
        # Only the report that passed replays as a pass.
        assert (verdict == "passed") == (path == "@PASS"), line
    if code == 0:
        assert not lines, err
        assert out, "a zero exit replayed at least one report"
        if "--require-pass" in argv:
            assert "agrees: failed" not in out
        event("all agree")
    elif lines:
        event("refused")
    else:
        # Exit 1 with nothing on stderr: --require-pass, and a report agreed as not passed.
        assert "--require-pass" in argv
        assert "agrees: failed" in out, (out, err)
        event("agrees, but not passed")


def test_a_replay_path_with_a_null_byte_is_one_line(tmp_path: Path) -> None:
    code, _, err = _cli(["replay", "r\x00.json"], tmp_path)
    assert code == 1
    assert len(_one_line_each(err)) == 1


# fuzz

_FUZZ_OPTIONS: dict[str, list[str]] = {
    "--require-backend": ["array_api_strict", "numpy", "cupy", "nope", "torch:nope", ""],
    "--op": ["gemm", "rms-norm", "silu-mul", "context-lifecycle", "softmax", "nope", "GEMM"],
    "--reference": ["numpy", "array_api_strict", "cupy", "nope"],
    "--precision": ["f32", "f16", "bf16", "f64", ""],
    "--max-nmse": ["1e-7", "1e-3", "0", "-1", "nan", "inf", "1e-300", "x"],
    # Small counts only: every accepted list really runs.
    "--examples": ["1", "2", "0", "-1", "+2", "x", "18446744073709551616"],
    "--seed": ["0", "7", "18446744073709551615", "18446744073709551616", "-1", "1.5"],
    "--max-elements": ["48", "96", "0", "1", "2", "-3", "x"],
    "--report-dir": ["out", "@MISSING", "@FILE", ""],
}
_FUZZ_VALID: dict[str, list[str]] = {
    "--reference": ["numpy"],
    "--max-nmse": ["1e-3", "1e-7"],
    "--examples": ["1", "2"],
    "--seed": ["0", "7", "18446744073709551615"],
    "--max-elements": ["48", "96"],
    "--report-dir": ["out"],
}


def _pairs(options: dict[str, list[str]]) -> st.SearchStrategy[tuple[str, str]]:
    return st.sampled_from(sorted(options)).flatmap(
        lambda key: st.tuples(st.just(key), st.sampled_from(options[key]))
    )


_FUZZ_PAIRS = st.one_of(_pairs(_FUZZ_VALID), _pairs(_FUZZ_VALID), _pairs(_FUZZ_OPTIONS))
_FUZZ_ARGV = st.one_of(
    # Mostly well-formed: a backend and an op, then any options (later ones win).
    st.tuples(
        st.sampled_from(["array_api_strict"] * 4 + ["cupy", "nope"]),
        st.sampled_from(["gemm", "silu-mul", "rms-norm"] * 2 + ["nope"]),
        st.lists(_FUZZ_PAIRS, max_size=3),
        st.lists(st.sampled_from(["--bogus", "-h", "--seed", "x"]), max_size=1),
    ).map(
        lambda t: [
            *("--require-backend", t[0], "--op", t[1]),
            *(token for pair in t[2] for token in pair),
            *t[3],
        ]
    ),
    # Anything: options, values and text in any order.
    st.lists(
        st.one_of(
            st.sampled_from(sorted(_FUZZ_OPTIONS)),
            st.sampled_from([v for values in _FUZZ_OPTIONS.values() for v in values]),
            st.text(_NO_LINE_BREAKS, max_size=6),
        ),
        max_size=8,
    ),
)
#: Tiny defaults, put first so that any drawn value overrides them (argparse keeps the last).
_TINY = ["--examples", "2", "--max-elements", "64"]


@settings(
    max_examples=FUZZ_CASES,
    deadline=None,
    derandomize=True,
    # fuzz runs its own Hypothesis search inside this one, on purpose.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.nested_given],
)
@given(_FUZZ_ARGV)
def test_any_fuzz_argv_runs_or_is_one_line(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "@FILE").write_text("not a directory")
        args = [str(root / "missing" / "d") if token == "@MISSING" else token for token in argv]
        code, out, err = _cli(["fuzz", *_TINY, *args], root)
        written = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name != "@FILE")
    lines = _one_line_each(err)
    if code == 0 and out.startswith("usage: diffcheck fuzz"):
        assert "-h" in argv
        event("help")
        return
    assert code in (0, 1), (code, out, err)
    if code == 0:
        # Every example passed: the summary on stdout, only progress lines on stderr.
        assert out.startswith("fuzz: "), out
        assert "passed" in out, out
        assert all(line.startswith("fuzz: ") for line in lines), err
        event("passed")
    else:
        failures = [line for line in lines if line.startswith("diffcheck")]
        assert len(failures) == 1, err
        event("one-line failure")
    # Nothing is written anywhere but inside --report-dir (an empty one is the directory).
    dirs = {args[i + 1] for i, token in enumerate(args[:-1]) if token == "--report-dir"}
    inside = [path for path in written if any(path.startswith(d) for d in dirs)]
    assert inside == written or "" in dirs, written
