"""Running ``diffcheck`` in-process on hostile input, and what every run must show.

:func:`cli` calls :func:`diffcheck.cli.main` with captured streams (fast enough for
thousands of cases); :func:`cli_subprocess` runs the real console entry point where the
guarantee is about the process (a traceback printed by the interpreter, memory, encodings).
:func:`assert_refused` is the contract of bad input: nonzero exit, exactly one stderr line,
no traceback, no raw control character.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from diffcheck.cli import main

__all__ = ["assert_one_line", "assert_refused", "cli", "cli_subprocess", "files_under"]


def cli(argv: Sequence[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """``diffcheck argv`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    chdir = contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext()
    with chdir, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit_:  # argparse's own exits (usage errors, --help)
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def cli_subprocess(
    argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The console entry point in a fresh interpreter (bytes out, nothing decoded)."""
    return subprocess.run(
        [sys.executable, "-m", "diffcheck", *argv],
        capture_output=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
        check=False,
    )


def assert_one_line(err: str, lines: int = 1) -> None:
    """At most ``lines`` stderr lines (one per problem), no traceback, no raw control character."""
    assert "Traceback" not in err, err[-2000:]
    assert err.count("\n") <= lines, err[-2000:]
    assert err == "" or err.endswith("\n"), err[-2000:]
    for line in err.splitlines():
        raw = [c for c in line if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029"]
        assert not raw, f"raw control characters {raw!r} in {line[:500]!r}"


def assert_refused(code: int, err: str) -> None:
    """Bad input: nonzero exit and exactly one escaped line on stderr."""
    assert code != 0, err
    assert err.strip(), "refused without saying why"
    assert_one_line(err)


def files_under(directory: Path) -> set[Path]:
    """Every path below ``directory`` (to see what a run created)."""
    return set(directory.rglob("*"))
