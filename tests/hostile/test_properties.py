"""The hostile-input property suite: reports, bundles, matrices and argument lists.

For every generated case, run in this process through :func:`diffcheck.cli.main` (or the
matrix reader) with captured streams:

- bad input exits nonzero (input that is surely bad: extra or too many keys, damaged bytes,
  another encoding, deep nesting; other edits may be valid and may pass);
- stderr holds at most one line, no traceback, no raw control character;
- peak memory stays under ``MEMORY_FACTOR`` times the input's size plus ``MEMORY_CONSTANT``
  (traced for one case in ``TRACED_EVERY``; the process's peak RSS checked after each);
- nothing is created outside the case's own directory (its output directory).

Cases per run: ``DIFFCHECK_HOSTILE_EXAMPLES`` in all (default 10,000), shared as
:data:`SHARES` says; a nightly run sets it higher (e.g. 200000).
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import os
import resource
import shutil
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from diffcheck.errors import ConfigError
from diffcheck.sweep.matrix import load_matrix

from ._harness import assert_one_line, cli
from ._hostile import HOSTILE_TEXT, HOSTILE_VALUE, SPECIAL_PATHS, Edit, bundle_edits, edits

TOTAL = int(os.environ.get("DIFFCHECK_HOSTILE_EXAMPLES", "10000"))
SHARES = {"report": 0.3, "bundle": 0.15, "matrix": 0.25, "argv": 0.3}
#: Peak traced memory of one case is under this many times its input's size ...
MEMORY_FACTOR = 40
#: ... plus this many bytes (imports are done; this covers the models and the replay).
MEMORY_CONSTANT = 64 << 20
#: One case in this many runs under tracemalloc (it makes a case about 3 times slower).
TRACED_EVERY = 8
#: Peak RSS may also hold what a few earlier traced cases and the allocator kept.
RSS_SLACK = 256 << 20


def _settings(kind: str) -> settings:
    return settings(
        max_examples=max(1, int(TOTAL * SHARES[kind])),
        deadline=None,
        # _rss_baseline is function-scoped on purpose: once per test, not per case.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


@pytest.fixture(scope="module", autouse=True)
def _entry_points_read_once() -> Iterator[None]:
    # Scanning installed distributions costs ~45 ms a backend name here; the snapshot the
    # sweep planner uses reads them once for the module (nothing installs adapters meanwhile).
    from diffcheck.adapters._registry import entry_point_snapshot

    with entry_point_snapshot():
        yield


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


#: The process's peak RSS when the running test began: under pytest-xdist a worker runs other
#: modules' tests in the same process first, so the peak at import time is not a baseline.
_baseline_rss = _peak_rss()
_traced = itertools.count()


@pytest.fixture(autouse=True)
def _rss_baseline() -> None:
    global _baseline_rss
    _baseline_rss = _peak_rss()


def _case_dir(session: Path) -> Path:
    """The case directory, its ``out`` emptied of what the previous case wrote there."""
    root = session / "case"
    for path in (root / "out").iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    return root


def _check(session: Path, root: Path, run: Any, size: int, lines: int = 1) -> tuple[int, str, str]:
    """Run ``run()``; check memory, stderr and where files appeared.

    Memory: the process's peak RSS must stay under its peak when the test began plus the
    bound (checked after every case, free), and one case in :data:`TRACED_EVERY` runs under
    tracemalloc, whose peak for that case alone must be under the bound.
    """
    before = sorted(p.name for p in root.iterdir())
    traced = next(_traced) % TRACED_EVERY == 0
    bound = MEMORY_FACTOR * size + MEMORY_CONSTANT
    if traced:
        tracemalloc.start()
    try:
        code, out, err = run()
        if traced:
            peak = tracemalloc.get_traced_memory()[1]
            assert peak < bound, (peak, size)
    finally:
        if traced:
            tracemalloc.stop()
    assert_one_line(err, lines)
    rss = _peak_rss()
    assert rss < _baseline_rss + bound + RSS_SLACK, (rss, _baseline_rss, size)
    assert [p.name for p in session.iterdir()] == ["case"], "a file appeared outside the case"
    after = sorted(p.name for p in root.iterdir())
    assert after == before, f"created outside out/: {set(after) ^ set(before)}"
    assert not any((root / "dir").iterdir())
    return code, out, err


@functools.cache
def _report_edits(name: str, text: bytes) -> st.SearchStrategy[Edit]:
    # One strategy per document: its paths are listed once, not once per case.
    return edits(json.loads(text))


def _replay_case(session: Path, text: bytes, edit: Edit, command: str) -> None:
    root = _case_dir(session)
    path = root / "input"
    path.write_bytes(text)
    argv = ["replay", str(path)] if command == "replay" else ["upgrade", str(path)]
    if command == "upgrade":
        argv += ["--out", str(root / "out" / "new.json")]
    code, out, err = _check(session, root, lambda: cli(argv, cwd=root), len(text))
    event(f"{edit.kind}: exit {code}")
    # 2: a bundle whose candidate is not installed here replays as not_run.
    assert code in (0, 1, 2), err
    if edit.surely_bad:
        assert code != 0, (edit.kind, out)
        assert err, "refused without a line on stderr"
    if code == 0 and command == "replay":
        assert "agrees" in out


@_settings("report")
@given(
    data=st.data(),
    which=st.sampled_from(["gemm", "attention"]),
    command=st.sampled_from(["replay", "replay", "upgrade"]),
)
def test_any_edited_report_is_replayed_or_refused_in_one_line(
    session_dir: Path, report_texts: dict[str, bytes], data: st.DataObject, which: str, command: str
) -> None:
    document = json.loads(report_texts[which])
    edit = data.draw(_report_edits(which, report_texts[which]))
    _replay_case(session_dir, edit.apply(document), edit, command)


@pytest.fixture(scope="module")
def bundle_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from diffcheck.search import search_api
    from value_fakes import FaultyAdapter

    out = tmp_path_factory.mktemp("search") / "out"
    result = search_api(FaultyAdapter("ulp3"), functions=["exp"], examples=20, seed=3, out=out)
    entry = next(f for f in result.document.findings if f.kind == "value")
    parsed: dict[str, Any] = json.loads((out / entry.bundle).read_text())
    return parsed


@functools.cache
def _bundle_edits(text: bytes) -> st.SearchStrategy[Edit]:
    return bundle_edits(json.loads(text))


@_settings("bundle")
@given(data=st.data())
def test_any_edited_bundle_is_replayed_or_refused_in_one_line(
    session_dir: Path, bundle_json: dict[str, Any], data: st.DataObject
) -> None:
    """Every field edited, removed or typed wrong, huge claimed shapes, names outside the
    standard: replayed (exit 0, 1 or 2) or refused in one line; a surely bad one refused."""
    document = copy.deepcopy(bundle_json)
    edit = data.draw(_bundle_edits(json.dumps(bundle_json).encode()))
    _replay_case(session_dir, edit.apply(document), edit, "replay")


_MATRIX_LINES = [
    "schema_version = 1",
    'description = "d"',
    "[defaults]",
    "seeds = [42]",
    'precisions = ["f32"]',
    "[[pairs]]",
    'reference = "numpy"',
    'candidate = "array_api_strict"',
    "[[ops.gemm.shapes]]",
    "m = 4",
    "n = 4",
    "k = 4",
]
_TOML_VALUE = st.one_of(
    st.sampled_from(
        ['"4"', "4.0", "true", "-1", "1e400", "nan", "inf", "[]", "{}", "18446744073709551616"]
    ),
    HOSTILE_TEXT.map(json.dumps),
    st.integers(min_value=2, max_value=400).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=17, max_value=3000).map(lambda n: "{" + "a." * n + "a = 1}"),
)


@st.composite
def _matrix_texts(draw: st.DrawFn) -> str:
    lines = list(_MATRIX_LINES)
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines)))
        choice = draw(st.integers(0, 4))
        if choice == 0 and index < len(lines) and "=" in lines[index]:
            key = lines[index].split("=")[0].strip()
            lines[index] = f"{key} = {draw(_TOML_VALUE)}"
        elif choice == 1:
            lines.insert(index, ".".join(["k"] * draw(st.integers(2, 3000))) + " = 1")
        elif choice == 2:
            lines.insert(index, f"{draw(HOSTILE_TEXT.map(json.dumps))} = {draw(_TOML_VALUE)}")
        elif choice == 3 and index < len(lines):
            del lines[index]
        else:
            lines.insert(index, draw(HOSTILE_TEXT))
    return "\n".join(lines) + "\n"


@_settings("matrix")
@given(text=_matrix_texts())
def test_any_matrix_text_reads_or_is_one_config_error(session_dir: Path, text: str) -> None:
    root = _case_dir(session_dir)
    path = root / "input"
    data = text.encode("utf-8", "surrogatepass")
    path.write_bytes(data)

    def run() -> tuple[int, str, str]:
        try:
            load_matrix(path)
        except ConfigError as error:
            return 1, "", f"diffcheck: {error}\n"
        return 0, "", ""

    code, _, _ = _check(session_dir, root, run, len(data))
    event(f"matrix exit {code}")


_COMMANDS = ["run", "replay", "upgrade", "schema", "ops", "sweep", "nosuch", "-h", "--version"]
_OPTIONS = [
    "--require-backend",
    "--reference",
    "--op",
    "--report",
    "--seed",
    "--max-nmse",
    "--precision",
    "--max-memory",
    "--allow-self-test",
    "--m",
    "--n",
    "--k",
    "--heads",
    "--out",
    "--write",
    "--require-pass",
    "--jobs",
    "--timeout",
    "--resume",
    "--help",
]
_VALUES = [
    "array_api_strict",
    "numpy",
    "mlx:cpu",
    "gemm",
    "attention",
    "f32",
    "bf16",
    "2",
    "4",
    "out/r.json",
    "out/r2.json",
    "out",
    "input",
    "1e-7",
    "1G",
    "0",
]
_TOKEN = st.one_of(
    st.sampled_from(_OPTIONS),
    st.sampled_from(_VALUES),
    st.sampled_from(SPECIAL_PATHS),
    HOSTILE_TEXT,
    HOSTILE_VALUE.map(str),
)


@_settings("argv")
@given(command=st.sampled_from(_COMMANDS), tokens=st.lists(_TOKEN, max_size=10))
def test_any_argument_list_runs_or_is_refused_in_one_line(
    session_dir: Path, report_texts: dict[str, bytes], command: str, tokens: list[str]
) -> None:
    root = _case_dir(session_dir)
    (root / "input").write_bytes(report_texts["gemm"])
    argv = [command, *tokens]
    # replay says one line per report it was given; every other command one line in all.
    lines = max(1, len(tokens)) if command == "replay" else 1
    code, _, err = _check(session_dir, root, lambda: cli(argv, cwd=root), 4096, lines)
    event(f"{command}: exit {code}")
    assert code in (0, 1), (argv, err)
    if code == 1 and command not in ("replay",):
        assert err, f"exit 1 without a line: {argv!r}"
