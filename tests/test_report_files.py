"""Report files as hostile input and under kills: one line, nonzero exit, nothing lost.

Readers (``diffcheck replay``, ``upgrade``) read at most a stated size from regular files
only; the writer puts one whole record at a report path at every instant; the schema
writer replaces rather than follows a symbolic link.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.errors import ReportError
from diffcheck.files import remove_stale_temporaries
from diffcheck.report import ReportWriter, load_report, parse_report, read_report, replay
from diffcheck.report.arrays import encode_output
from diffcheck.runner import run_check

CANDIDATE = "array_api_strict"


def _replay_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["replay", str(path)])
    err = capsys.readouterr().err
    return code, err


def _one_line_error(code: int, err: str, contains: str) -> None:
    assert code == 1
    assert err.count("\n") == 1, err
    assert err.startswith("diffcheck: ")
    assert contains in err, err
    assert "Traceback" not in err


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "honest.json"
    run_check(make_check(CANDIDATE, "gemm", m=2, n=3, k=4), path)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe\x00\x01binary", "is not UTF-8 text (byte 0 is 0xff)"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"a": ' * 50_000, "nested too deeply"),
        (b"", "is not JSON"),
        (b"[1, 2]", "is not a JSON object"),
        (b'{"schema_version": 5}', "has schema_version 5; this diffcheck reads 1, 2, 3 and 4"),
        (b'{"schema_version": true}', "has schema_version True"),
        (b'{"schema_version": 2}', "does not match schema v2 at config"),
    ],
)
def test_garbage_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "garbage.json"
    path.write_bytes(content)
    _one_line_error(*_replay_cli(path, capsys), message)


def test_a_device_a_directory_and_a_missing_file_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_line_error(*_replay_cli(Path("/dev/zero"), capsys), "is a character device")
    # A directory is read as a sweep: one without a summary says so.
    _one_line_error(*_replay_cli(tmp_path, capsys), "no summary.json")
    _one_line_error(*_replay_cli(tmp_path / "absent.json", capsys), "No such file")


def test_a_fifo_is_refused_without_waiting_for_a_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    outcome: list[tuple[int, str]] = []
    reader = threading.Thread(target=lambda: outcome.append(_replay_cli(fifo, capsys)))
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "replay blocked on a FIFO"
    _one_line_error(*outcome[0], "is a FIFO")


def test_a_file_over_the_stated_limit_is_refused_before_it_is_read(report: Path) -> None:
    size = report.stat().st_size
    with pytest.raises(ReportError, match=f"is {size} bytes, over the {size - 1}-byte limit"):
        read_report(report, limit=size - 1)
    assert read_report(report, limit=size).completed


def test_one_bad_report_among_several_is_one_line_and_the_others_still_replay(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00")
    assert main(["replay", str(bad), str(report)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1
    assert f"{report}: agrees: passed" in captured.out


def _edited(report: Path, change: Any) -> bytes:
    data = json.loads(report.read_text())
    change(data["result"]["actual"])
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a.update(nbytes=a["nbytes"] - 4), "are 24 bytes, not the stated 20"),
        (
            lambda a: a.update(element_count=a["element_count"] + 1),
            "are 28 bytes, not the stated 24",
        ),
        (
            lambda a: a.update(base64=a["base64"][:-4]),
            "take 32 base64 characters, not the 28 stored",
        ),
        (lambda a: a.update(base64="*" + a["base64"][1:]), "not strict base64"),
        (lambda a: a.update(base64=a["base64"][:-4] + "A==="), "not strict base64"),
        (lambda a: a.update(sha256="0" * 64), "do not match their SHA-256 digest"),
        (lambda a: a.update(base64=a["base64"][:8][::-1] + a["base64"][8:]), "SHA-256"),
    ],
)
def test_stored_bytes_are_checked_against_their_sizes_and_digest_before_use(
    report: Path, change: Any, message: str
) -> None:
    outcome = replay(parse_report(_edited(report, change), "edited"))
    assert not outcome.agrees
    assert any(message in p for p in outcome.disagreements), outcome.disagreements


def test_a_v2_report_is_compact(tmp_path: Path) -> None:
    values = np.random.default_rng(0).standard_normal(10_000).astype(np.float32)
    record = encode_output(values).model_dump_json()
    assert len(record) < 1.34 * values.nbytes + 200


def test_a_long_report_name_gets_a_whole_report_or_one_line_and_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    longest = tmp_path / ("r" * (limit - 5) + ".json")
    assert (
        main(["run", "--require-backend", CANDIDATE, "--op", "gemm", "--report", str(longest)]) == 0
    )
    assert load_report(longest).completed
    too_long = tmp_path / ("r" * (limit - 4) + ".json")
    code = main(["run", "--require-backend", CANDIDATE, "--op", "gemm", "--report", str(too_long)])
    err = capsys.readouterr().err
    _one_line_error(code, err, "File name too long")
    assert sorted(p.name for p in tmp_path.iterdir()) == [longest.name]


def test_the_writer_refuses_an_existing_path_of_any_kind(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(ReportError, match="File exists"):
        ReportWriter(link)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nothing")
    with pytest.raises(ReportError, match="File exists"):
        ReportWriter(dangling)
    assert not (tmp_path / "nothing").exists()
    assert target.read_text() == "keep"


_KILLED_WRITER = """
import sys
from pathlib import Path
from diffcheck.config import make_check
from diffcheck.runner import run_check
out = Path(sys.argv[1])
check = make_check("array_api_strict", "gemm", m=64, n=64, k=64)
run_check(check)  # warm: the first check's imports are not the write being interrupted
print("ready", flush=True)
for index in range(10_000):
    run_check(check, out / f"r{index}.json")
"""


def test_a_kill_at_any_instant_leaves_whole_records_and_temporaries_a_later_run_removes(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(5)
    for attempt in range(6):
        out = tmp_path / f"attempt{attempt}"
        out.mkdir()
        child = subprocess.Popen(
            [sys.executable, "-c", _KILLED_WRITER, str(out)], stdout=subprocess.PIPE
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        time.sleep(float(rng.uniform(0.05, 0.4)))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        reports = sorted(out.glob("r*.json"))
        assert reports, "the child wrote no report before it was killed"
        for path in reports:
            document = load_report(path)  # never empty, never truncated
            assert document.completed or document.result is None
        remove_stale_temporaries(out)
        assert [p.name for p in out.iterdir() if not p.name.startswith("r")] == []


def test_a_temporary_of_a_live_process_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / f".dc-{os.getpid()}-{'0' * 16}.tmp"
    mine.write_text("in flight")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".dc-{dead.stdout.strip()}-{'1' * 16}.tmp"
    stale.write_text("left by a killed writer")
    unrelated = tmp_path / ".dc-1-notatemporary.tmp"
    unrelated.write_text("not ours")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert mine.exists()
    assert unrelated.exists()


def test_schema_write_replaces_a_symlink_and_needs_an_existing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "v2.json").symlink_to(outside)
    assert main(["schema", "--write", str(schemas)]) == 0
    assert outside.read_text() == "precious"
    assert not (schemas / "v2.json").is_symlink()
    assert json.loads((schemas / "v2.json").read_text())["$id"].endswith("/v2.json")
    assert sorted(p.name for p in schemas.iterdir()) == [
        "findings-v2.json",
        "matrix-v1.json",
        "summary-v3.json",
        "v1.json",
        "v2.json",
        "v3.json",
        "v4.json",
    ]
    capsys.readouterr()
    code = main(["schema", "--write", str(tmp_path / "missing")])
    _one_line_error(code, capsys.readouterr().err, "does not exist")


def test_a_report_over_the_max_memory_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    from diffcheck.report.limits import report_read_limit
    from diffcheck.report.replay import load_document

    limit = report_read_limit(2**20)
    path = tmp_path / "big.json"
    with path.open("wb") as handle:  # sparse: refused from its size, never read
        handle.truncate(limit.bytes + 1)
    with pytest.raises(ReportError) as error:
        load_document(path, 2**20)
    assert str(error.value) == (
        f"{path} is {limit.bytes + 1} bytes, over the {limit.bytes}-byte limit ({limit.explain()})"
    )
    assert "1.0 MiB (--max-memory)" in limit.explain()
