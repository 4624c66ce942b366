"""Fixtures of the sweep tests: the CLI in-process, and one fault-injected sweep per session.

Worker processes are real (``python -m diffcheck.sweep.worker``); faults are injected with
the worker's pytest-only ``DIFFCHECK_SWEEP_TEST_FAULT`` hook.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# The helpers live beside the tests; importable by name under pytest's importlib mode, as
# the parent conftest does for ``fakes``.
sys.path.insert(0, str(Path(__file__).parent))

from sweep_helpers import FAULT_MATRIX, FAULT_TIMEOUT_S, FAULTS, SweepRun, write_matrix

from diffcheck.cli import main
from diffcheck.sweep.worker import FAULT_ENV


@pytest.fixture
def sweep_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., SweepRun]:
    """Run ``diffcheck sweep`` in-process (workers are still separate processes)."""

    def run(matrix: Path, out: Path, *options: str) -> SweepRun:
        code = main(["sweep", str(matrix), "--out", str(out), "--quiet", *options])
        captured = capsys.readouterr()
        return SweepRun(code, captured.out, captured.err, out)

    return run


@pytest.fixture(scope="session")
def fault_sweep(tmp_path_factory: pytest.TempPathFactory) -> SweepRun:
    """The fault matrix swept once per session: kill, hang, abort and exit injected."""
    base = tmp_path_factory.mktemp("fault-sweep")
    matrix = write_matrix(base, FAULT_MATRIX)
    out = base / "out"
    faults = ",".join(f"{check}:{fault}" for check, fault in FAULTS.items())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FAULT_ENV, faults)
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(
                [
                    "sweep",
                    str(matrix),
                    "--out",
                    str(out),
                    "--jobs",
                    "2",
                    "--timeout",
                    str(FAULT_TIMEOUT_S),
                    "--quiet",
                ]
            )
    return SweepRun(code, stdout.getvalue(), stderr.getvalue(), out)
