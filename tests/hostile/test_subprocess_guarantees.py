"""The guarantees only a separate process can show: memory limits, tracebacks, leftovers.

Each case runs ``python -m diffcheck`` under an address-space limit (``RLIMIT_AS``) in a
new session, and checks one stderr line, no traceback, the exit status, and that no
process of that session is left once it exits.

- a 20 MB report whose ``environment`` holds a million keys is refused under 1 GiB (it took
  about 60 times its size before: one pydantic error per key);
- a 320 MB report (one huge base64 text, within the read limit) under 0.75 GiB says in one
  line that it ran out of memory, naming the file, its size and the read limit.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ._harness import assert_refused

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc are Linux's")


def _limit(size: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (size, size))


def _session_members(session: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # field 6 of stat: the session id
            members.append(int(entry.name))
    return members


def _run_limited(argv: list[str], limit: int) -> tuple[int, str]:
    child = subprocess.Popen(
        [sys.executable, "-m", "diffcheck", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limit(limit),
        start_new_session=True,
    )
    _, err = child.communicate(timeout=300)
    assert _session_members(child.pid) == [], "a process of the command outlived it"
    return child.returncode, err.decode("utf-8", "backslashreplace")


@pytest.fixture
def memory_dir(tmp_path: Path) -> Iterator[Path]:
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    directory = shm / f"hostile-{os.getpid()}-{tmp_path.name}"
    directory.mkdir()
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


def _write_with(path: Path, document: dict[str, Any], marker: str, filler: bytes, n: int) -> None:
    head, tail = json.dumps(document).split(json.dumps(marker))
    with path.open("wb") as file:
        file.write(head.encode() + b'"')
        for _ in range(n):
            file.write(filler)
        file.write(b'"' + tail.encode())


def test_a_million_extra_keys_are_refused_under_one_gib(
    memory_dir: Path, report_json: dict[str, Any]
) -> None:
    path = memory_dir / "keys.json"
    try:
        report_json["environment"].update({f"key{i:07d}": "v" for i in range(1_000_000)})
        path.write_text(json.dumps(report_json))
        assert path.stat().st_size > 18_000_000
        code, err = _run_limited(["replay", str(path)], 1 << 30)
    finally:
        path.unlink(missing_ok=True)
    assert_refused(code, err)
    assert "keys" in err


def test_running_out_of_memory_reading_a_report_is_one_line(
    memory_dir: Path, report_json: dict[str, Any]
) -> None:
    path = memory_dir / "big.json"
    report_json["result"]["reference"]["base64"] = "@FILL@"
    try:
        _write_with(path, report_json, "@FILL@", b"A" * (1 << 20), 320)
        code, err = _run_limited(["replay", str(path)], 3 << 28)
    finally:
        path.unlink(missing_ok=True)
    assert_refused(code, err)
    # Read by the report reader (its own line) or elsewhere (main()'s line): either way one
    # line naming the file and the limit.
    assert "out of memory" in err
    assert str(path) in err
    assert "limit" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "/dev/zero"],
        ["replay", "x\x1b[2Jy"],
        [
            "run",
            "--require-backend",
            "numpy",
            "--op",
            "gemm",
            "--report",
            "r.json",
            "--m",
            "9" * 5000,
        ],
        ["sweep", "/proc/self/mem"],
        ["schema", "--write", "n" * 300],
    ],
)
def test_hostile_arguments_in_a_real_process_are_one_line(tmp_path: Path, argv: list[str]) -> None:
    code, err = _run_limited(argv, 4 << 30)
    assert_refused(code, err)
