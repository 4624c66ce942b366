"""``python -m diffcheck.sweep.worker SPEC_JSON``: run one check in a fresh process.

The process builds the check from the spec, runs it with :func:`~diffcheck.runner.run_check`
(which creates the report new, writes the incomplete record, then the final one) and exits
0 once the final record is on disk, whatever the check's status, and
:data:`~diffcheck.sweep.records.OWN_IO_STATUS` when diffcheck could not write the report
(its own I/O failed: no verdict on the backend). Anything else (a crash, a
hang the parent kills, an exit status other than 0) leaves the parent to settle the report.

``python -m diffcheck.sweep.worker --probe NAME...`` probes backends in this throwaway
process instead (so a backend that crashes while probing takes only this process down) and
prints one JSON object per line: ``{"name", "status", "reason"}``.

A worker dies with its parent and enforces its own deadline (:mod:`.lifeline`): the parent
passes its pid in ``DIFFCHECK_SWEEP_PARENT`` and the check's timeout in
``DIFFCHECK_SWEEP_TIMEOUT_S``. Its final record replaces only the file it created
(:func:`~diffcheck.sweep.records.run_guarded`).

Test hook
---------
Under pytest only (``PYTEST_CURRENT_TEST`` is set), ``DIFFCHECK_SWEEP_TEST_FAULT`` holds
comma-separated ``<check-id>:<fault>`` items; the worker of that check injects the fault
into its candidate's ``execute``, after the incomplete record exists: ``kill`` (SIGKILL
itself), ``abort`` (SIGABRT), ``segv`` (SIGSEGV), ``hang`` (sleep until killed), ``exit``
(``os._exit(3)``), ``enospc`` (diffcheck's later writes fail as on a full disk; the
check itself runs on) or ``helper`` (starts a daemon in a session of its own, prints its
pid, and the check runs on). Two more start a ``sleep 300`` whose ``argv[0]`` is the text of
``DIFFCHECK_SWEEP_TEST_MARKER`` (so a test finds it by its command line) and let the check
run on: ``setsid`` (``setsid sleep 300``, not waited for) and ``envless`` (a double-forked
daemon in a session of its own, executed with an empty environment, as ``env -i`` does).
Faults chain with ``+``: ``envless+kill`` starts the helper, then the worker dies.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = [
    "FAULTS",
    "FAULT_ENV",
    "MARKER_ENV",
    "PARENT_ENV",
    "TIMEOUT_ENV",
    "inject",
    "main",
    "requested_fault",
]

FAULT_ENV: Final = "DIFFCHECK_SWEEP_TEST_FAULT"
MARKER_ENV: Final = "DIFFCHECK_SWEEP_TEST_MARKER"
PARENT_ENV: Final = "DIFFCHECK_SWEEP_PARENT"
TIMEOUT_ENV: Final = "DIFFCHECK_SWEEP_TIMEOUT_S"


def _hang() -> None:
    while True:
        time.sleep(3600)


def _disk_full() -> None:
    """Every later write of a new file by diffcheck fails as on a full disk (the check runs)."""
    from .. import files

    def write_temporary(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "report")

    files.write_temporary = write_temporary


def _full_log() -> None:
    """The check's log is on the full disk too: every write to stdout and stderr fails."""
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, 1)
    os.dup2(full, 2)
    os.close(full)


def _daemon_helper() -> None:
    """Start a helper that leaves the worker's session and parent (a double-forked daemon)."""
    import subprocess

    inner = "import time; time.sleep(300)"
    outer = (
        "import subprocess, sys; "
        f"p = subprocess.Popen([sys.executable, '-c', {inner!r}], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"
    )
    pid = subprocess.run(
        [sys.executable, "-c", outer], capture_output=True, text=True, check=True
    ).stdout.strip()
    print(f"diffcheck sweep worker: test helper pid {pid}", file=sys.stderr, flush=True)


def _marked_sleep() -> list[str]:
    """A ``sleep 300`` named by the test's marker: [program, argv[0]] for ``os.execv``."""
    import shutil

    marker = os.environ.get(MARKER_ENV) or "diffcheck-test-helper"
    return [shutil.which("sleep") or "/bin/sleep", marker]


def _setsid_helper() -> None:
    """``setsid sleep 300``: a helper in a session of its own, never waited for."""
    import shutil
    import subprocess

    program, marker = _marked_sleep()
    run = "import os, sys; os.execv(sys.argv[1], [sys.argv[2], '300'])"
    setsid = shutil.which("setsid")
    prefix = [setsid] if setsid else []
    helper = subprocess.Popen(
        [*prefix, sys.executable, "-c", run, program, marker],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=setsid is None,
    )
    print(f"diffcheck sweep worker: test helper pid {helper.pid}", file=sys.stderr, flush=True)


def _envless_helper() -> None:
    """A double-forked daemon in a session of its own, with an empty environment (env -i)."""
    import subprocess

    program, marker = _marked_sleep()
    daemon = (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    os.execve(sys.argv[1], [sys.argv[2], '300'], {})\n"
        "os._exit(0)\n"
    )
    subprocess.run(
        [sys.executable, "-c", daemon, program, marker],
        env={},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    print("diffcheck sweep worker: test helper without environment", file=sys.stderr, flush=True)


FAULTS: Final[dict[str, Callable[[], None]]] = {
    "kill": lambda: os.kill(os.getpid(), signal.SIGKILL),
    "abort": os.abort,
    "segv": lambda: os.kill(os.getpid(), signal.SIGSEGV),
    "hang": _hang,
    "exit": lambda: os._exit(3),
    "enospc": _disk_full,
    "fulllog": _full_log,
    "helper": _daemon_helper,
    "setsid": _setsid_helper,
    "envless": _envless_helper,
}


def requested_fault(check_id: str) -> str | None:
    """The test fault asked for ``check_id`` (pytest runs only), or None."""
    if "PYTEST_CURRENT_TEST" not in os.environ:  # never honoured outside a test run
        return None
    for item in os.environ.get(FAULT_ENV, "").split(","):
        target, _, fault = item.strip().rpartition(":")
        if target == check_id and all(part in FAULTS for part in fault.split("+")):
            return fault
    return None


def inject(adapter: Any, fault: str) -> None:
    """Make ``adapter``'s candidate ``execute`` run the test fault ``fault`` first."""
    print(
        f"diffcheck sweep worker: test fault {fault!r} injected (pid {os.getpid()})",
        file=sys.stderr,
        flush=True,
    )

    def execute(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("role", "candidate") == "candidate":
            for part in fault.split("+"):
                FAULTS[part]()
        return original(*args, **kwargs)

    original = adapter.execute
    adapter.execute = execute


def _probe(names: Sequence[str]) -> int:
    from ..adapters import resolve
    from ..errors import DiffcheckError

    for name in names:
        try:
            probe = resolve(name).probe()
            line = {"name": name, "status": probe.status, "reason": probe.reason}
        except DiffcheckError as error:
            line = {"name": name, "status": "unavailable", "reason": str(error)}
        print(json.dumps(line), flush=True)
    return 0


def _lifeline() -> None:
    from .lifeline import Watchdog, die_with_parent, own_deadline
    from .reaper import become_subreaper

    become_subreaper()  # what a check orphans (a daemon, setsid -f) stays in this tree

    parent = os.environ.get(PARENT_ENV, "")
    expected = int(parent) if parent.isdigit() else os.getppid()
    die_with_parent(expected)
    watchdog = Watchdog(expected)
    timeout = os.environ.get(TIMEOUT_ENV, "")
    with contextlib.suppress(ValueError):  # run by hand with no timeout: the parent watch only
        watchdog.arm(own_deadline(float(timeout)))
    watchdog.start()


def _run(spec_json: str) -> int:
    from ..adapters import resolve
    from .reaper import end_descendants
    from .records import run_guarded
    from .spec import WorkerSpec

    _lifeline()
    try:
        spec = WorkerSpec.model_validate_json(spec_json)
        check = spec.check()
        candidate = resolve(check.require_backend)
        fault = requested_fault(spec.id)
        if fault is not None:
            inject(candidate, fault)
        run_guarded(check, Path(spec.report), candidate)
    finally:
        end_descendants(os.getpid())  # nothing the check started outlives its worker
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the worker; returns the process exit status (0 once the report is complete)."""
    from pydantic import ValidationError

    from ..errors import DiffcheckError
    from .records import OWN_IO_STATUS, OwnIOError

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ["--probe"]:
            return _probe(args[1:])
        if len(args) != 1:
            print(
                "usage: python -m diffcheck.sweep.worker SPEC_JSON | --probe NAME...",
                file=sys.stderr,
            )
            return 2
        return _run(args[0])
    except OwnIOError as error:
        _say(f"diffcheck sweep worker: {str(error).splitlines()[0]}")
        return OWN_IO_STATUS
    except (DiffcheckError, ValidationError) as error:
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        _say(f"diffcheck sweep worker: {text}")
        return 2


def _say(text: str) -> None:
    """One line into the check's log, which may be on the full disk the error is about.

    A print that fails there must not turn the exit status into 1 (a failed check, a
    verdict on the backend) in place of the status that says diffcheck's own I/O failed.
    """
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
