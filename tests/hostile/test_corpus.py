"""The generated hostile corpus beyond reports, bundles, matrices and argument lists.

:mod:`.test_properties` feeds reports, bundles, matrices and argument lists; this module
feeds the other readers and payloads, through the same checks (:func:`._check`: one escaped
stderr line at most, bounded memory, nothing created outside the case's ``out``):

- ``journal``: a search journal with one line edited (:func:`.edits` of its header or of a
  record), read back by ``Journal.resume`` as ``fuzz --api --resume`` does;
- ``findings``: a ``findings.json`` edited the same way, given to ``diffcheck replay``
  (it is neither a report nor a bundle: always refused, in one line);
- ``path``: path payloads (parents, NUL, control characters, names past the system's limits,
  devices, FIFOs) given as the path of every reader, and as a stored path (a summary's matrix);
- ``terminal``: control sequences, line breaks and markup written into a report's texts
  (reason, platform, execution path, segment names), replayed and shown: no raw control
  character may reach stdout or stderr, and no line may be added.

Cases per run: :data:`SHARES` of ``DIFFCHECK_HOSTILE_EXAMPLES`` (10,000 by default: 2,500
here beside the 10,000 of :mod:`.test_properties`).
"""

from __future__ import annotations

import copy
import functools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from diffcheck.errors import DiffcheckError

from ._harness import assert_one_line, cli, cli_subprocess
from ._hostile import HOSTILE_TEXT, SPECIAL_PATHS, Edit, edits
from .test_properties import (  # noqa: F401 - the autouse fixtures apply here too
    TOTAL,
    _case_dir,
    _check,
    _entry_points_read_once,
    _rss_baseline,
)

SHARES = {"journal": 0.1, "findings": 0.05, "path": 0.05, "terminal": 0.05}


def _settings(kind: str) -> settings:
    return settings(
        max_examples=max(1, int(TOTAL * SHARES[kind])),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


def _raw(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


# -- a search's journal and findings ---------------------------------------------------------

_FUNCTIONS = ["exp", "abs"]


@pytest.fixture(scope="module")
def search_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from diffcheck.search import search_api
    from value_fakes import FaultyAdapter

    out = tmp_path_factory.mktemp("corpus-search") / "out"
    search_api(FaultyAdapter("ulp3"), functions=_FUNCTIONS, examples=20, seed=3, out=out)
    return out


@pytest.fixture(scope="module")
def search_header(search_out: Path) -> dict[str, Any]:
    first = json.loads((search_out / "journal.jsonl").read_text().splitlines()[0])
    return {k: v for k, v in first.items() if k != "kind"}


@functools.cache
def _line_edits(text: str) -> st.SearchStrategy[Edit]:
    return edits(json.loads(text))


@st.composite
def _journal_texts(draw: st.DrawFn, lines: tuple[str, ...]) -> tuple[bytes, Edit, int]:
    index = draw(st.integers(0, len(lines) - 1))
    edit = draw(_line_edits(lines[index]))
    edited = edit.apply(json.loads(lines[index]))
    if edit.kind in ("utf16", "not_utf8", "truncate", "deep"):
        piece = edited
    else:  # a journal line is one line: the writer's compact form
        piece = json.dumps(json.loads(edited.decode("utf-8", "surrogatepass"))).encode(
            "utf-8", "surrogatepass"
        )
    parts = [line.encode() for line in lines]
    parts[index] = piece
    return b"\n".join(parts) + b"\n", edit, index


@_settings("journal")
@given(data=st.data())
def test_any_edited_journal_resumes_as_its_run_or_is_one_line(
    session_dir: Path, search_out: Path, search_header: dict[str, Any], data: st.DataObject
) -> None:
    from diffcheck.search.output import Journal

    lines = tuple((search_out / "journal.jsonl").read_text().splitlines())
    text, edit, index = data.draw(_journal_texts(lines))
    root = _case_dir(session_dir)
    out = root / "out" / "run"
    shutil.copytree(search_out / "bundles", out / "bundles")
    (out / "journal.jsonl").write_bytes(text)

    def run() -> tuple[int, str, str]:
        try:
            journal = Journal.resume(out, search_header)
        except DiffcheckError as error:
            return 1, "", f"diffcheck: {error}\n"
        records = list(journal.done.values())
        assert all(len(d.entries) == d.run.findings == len(d.fragments) for d in records)
        assert all(e.function == d.run.function for d in records for e in d.entries)
        assert all((out / e.bundle).is_file() for d in records for e in d.entries)
        return 0, "", ""

    code, _, _err = _check(session_dir, root, run, len(text))
    event(f"journal line {index} {edit.kind}: exit {code}")
    # A damaged last line is the one a kill cuts short: its function is searched again.
    if edit.surely_bad and index < len(lines) - 1:
        assert code == 1, (edit, index)


@_settings("findings")
@given(data=st.data())
def test_any_edited_findings_file_is_refused_by_replay_in_one_line(
    session_dir: Path, search_out: Path, data: st.DataObject
) -> None:
    text = (search_out / "findings.json").read_text()
    edit = data.draw(_line_edits(text))
    edited = edit.apply(json.loads(text))
    root = _case_dir(session_dir)
    path = root / "out" / "findings.json"
    path.write_bytes(edited)
    code, out, err = _check(session_dir, root, lambda: cli(["replay", str(path)]), len(edited))
    event(f"findings {edit.kind}: exit {code}")
    assert code == 1
    assert err
    assert out == ""


# -- path payloads ---------------------------------------------------------------------------

_PATH = st.one_of(
    st.sampled_from(SPECIAL_PATHS),
    HOSTILE_TEXT,
    st.integers(1, 40).map(lambda n: "/".join(["d" * 255] * n)),
    st.integers(256, 5000).map(lambda n: "n" * n),
    st.sampled_from(["out/../../escape", "out/./x/../../y", "/tmp/../etc/passwd", "~root"]),
)


@_settings("path")
@given(payload=_PATH, command=st.sampled_from(["replay", "show", "upgrade", "stored", "name"]))
def test_any_path_payload_is_read_or_refused_in_one_line(
    session_dir: Path, report_texts: dict[str, bytes], payload: str, command: str
) -> None:
    from diffcheck.files import stored_path
    from diffcheck.text import check_name

    root = _case_dir(session_dir)
    (root / "input").write_bytes(report_texts["gemm"])

    def run() -> tuple[int, str, str]:
        if command == "stored":
            try:
                path = stored_path(payload, "the matrix")
            except DiffcheckError as error:
                return 1, "", f"diffcheck: {error}\n"
            assert len(str(path).encode("utf-8", "surrogateescape")) <= 4096
            return 0, "", ""
        if command == "name":
            try:
                name = check_name("op", payload)
            except ValueError as error:
                return 1, "", f"diffcheck: {error}\n"
            assert "/" not in name
            assert name not in (".", "..")
            return 0, "", ""
        if command == "upgrade":  # asked to write under out/ ("..": a path the user chose)
            return cli(
                ["upgrade", "input", "--out", f"out/{payload.replace('..', '__')}"], cwd=root
            )
        return cli([command, payload], cwd=root)

    code, out, _err = _check(session_dir, root, run, 4096)
    event(f"path {command}: exit {code}")
    assert not _raw(out)
    if command in ("replay", "show") and payload != "input" and not payload.startswith("-"):
        assert code != 0, (payload, out)  # no payload names a report (an option asks for help)


# -- terminal payloads -----------------------------------------------------------------------

_TERMINAL = st.one_of(
    st.sampled_from(
        [
            "\x1b[2J\x1b[H",
            "\x1b]0;owned\x07",
            "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
            "\x00\x07\x08\x7f\x9b",
            "line\nbreak\r\n",
            "\u2028\u2029",
            "<script>alert(1)</script>",
            "\u202eevil",
        ]
    ),
    HOSTILE_TEXT,
)
_TEXT_FIELDS = [
    ("result", "reason"),
    ("environment", "platform"),
    ("environment", "candidate_detail"),
    ("execution_path",),
    ("coverage",),
    ("segments", 0, "name"),
    ("segments", 0, "label"),
    ("result", "backend"),
    ("config", "require_backend"),
]


def _set(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    target: Any = document
    for part in path[:-1]:
        if (isinstance(target, dict) and part in target) or (
            isinstance(target, list) and isinstance(part, int) and part < len(target)
        ):
            target = target[part]
        else:
            return False
    if not isinstance(target, dict) or path[-1] not in target:
        return False
    target[path[-1]] = value
    return True


@_settings("terminal")
@given(
    payload=_TERMINAL,
    field=st.sampled_from(_TEXT_FIELDS),
    command=st.sampled_from(["replay", "show"]),
)
def test_no_text_of_a_report_reaches_the_terminal_raw(
    session_dir: Path,
    report_texts: dict[str, bytes],
    genuine_lines: dict[str, int],
    payload: str,
    field: tuple[Any, ...],
    command: str,
) -> None:
    document = copy.deepcopy(json.loads(report_texts["attention"]))
    if not _set(document, field, payload):
        return
    data = json.dumps(document).encode("utf-8", "surrogatepass")
    root = _case_dir(session_dir)
    path = root / "out" / "r.json"
    path.write_bytes(data)
    code, out, err = _check(session_dir, root, lambda: cli([command, str(path)]), len(data))
    event(f"terminal {command} {field[-1]}: exit {code}")
    assert not _raw(out)
    assert not _raw(err)
    assert "\u2028" not in out
    assert "\u2029" not in out
    if code == 0:  # read: as many lines as the genuine report's (no payload added one)
        assert out.count("\n") <= genuine_lines[command], out


@pytest.fixture(scope="module")
def genuine_lines(
    report_texts: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, int]:
    path = tmp_path_factory.mktemp("genuine") / "r.json"
    path.write_bytes(report_texts["attention"])
    counts = {}
    for command in ("replay", "show"):
        code, out, err = cli([command, str(path)])
        assert code == 0, err
        counts[command] = out.count("\n")
    return counts


def test_the_console_script_writes_no_raw_control_byte(
    tmp_path: Path, report_texts: dict[str, bytes]
) -> None:
    payload = "\x1b[2J\x1b]0;owned\x07 a\nb\r\x00c \x9b31m\u2028"
    # In a fresh interpreter: the bytes a terminal would receive, for a payload in a reason.
    document = json.loads(report_texts["gemm"])
    document["result"]["reason"] = payload
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document))
    for command in ("replay", "show"):
        done = cli_subprocess([command, str(path)])
        for stream in (done.stdout, done.stderr):
            assert not [b for b in stream if b < 0x20 and b not in b"\n\t"], stream[-500:]
            assert b"\xc2\x9b" not in stream
            assert b"\xe2\x80\xa8" not in stream
        assert_one_line(done.stderr.decode())


@pytest.mark.parametrize("command", ["upgrade", "run"])
def test_a_new_report_path_with_a_nul_byte_is_one_line(
    tmp_path: Path, report_texts: dict[str, bytes], command: str
) -> None:
    # Found by the path corpus: `upgrade --out "out/\0"` was a ValueError traceback.
    (tmp_path / "input").write_bytes(report_texts["gemm"])
    target = str(tmp_path / "new\x00.json")
    argv = (
        ["upgrade", str(tmp_path / "input"), "--out", target]
        if command == "upgrade"
        else ["run", "--require-backend", "array_api_strict", "--op", "gemm", "--report", target]
    )
    code, _, err = cli(argv)
    assert code == 1
    assert_one_line(err)
    assert "NUL byte" in err
