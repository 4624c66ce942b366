"""Running one check in its own worker process, with a timeout, and settling its report.

:func:`run_isolated` is the cold unit (``--isolation cold``, and every dask task): it
spawns ``python -m diffcheck.sweep.worker`` in a new session (its own process group, so a
timeout kills the worker and anything it started; what left the group is found in the
worker's process tree, :mod:`.reaper`, or by its environment token, :mod:`.descendants`),
waits, and then settles the report file with :func:`~diffcheck.sweep.records.settle_report`,
turning a
signal, a timeout or a bad exit status into a ``failed`` record with the cause. The warm
workers of :mod:`.pool` settle their checks through the same :func:`conclude`.

The worker's exit is observed with ``waitid(WNOWAIT)`` and its group is killed before the
worker is reaped, so the process-group id cannot have been reused by then. POSIX only
(process groups and signals); Windows is not a target.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..files import remove_stale_temporaries
from . import reaper
from .descendants import TOKEN_ENV, end_tagged, new_token
from .records import OWN_IO_STATUS, ReportState, read_state, set_aside, settle_report
from .spec import WorkerSpec
from .worker import PARENT_ENV, TIMEOUT_ENV
from .worker_log import log_path, log_tail, open_log, start_log

__all__ = [
    "INTERRUPTED",
    "WorkerEnd",
    "WorkerOutcome",
    "conclude",
    "describe_exit",
    "kill_group",
    "log_path",
    "prepare_report_path",
    "run_isolated",
    "start_log",
]

INTERRUPTED = "interrupted: the sweep was stopped; worker killed"


@dataclass(frozen=True)
class WorkerOutcome:
    """How one check's worker ended and what became of its report (picklable for dask)."""

    id: str
    report: str
    #: How the worker ended: "exit 0", "killed by signal SIGKILL (9)", "timed out after 60 s"...
    exit: str
    #: The worker's wall time (spawn to exit), or None when no worker ran.
    wall_s: float | None
    #: What the parent wrote into the report, or None when the worker's record stands.
    action: str | None = None
    #: The kept worker log (stdout and stderr), when the worker did not end cleanly.
    log: str | None = None
    #: Where an earlier incomplete or unreadable report was moved, if one was.
    moved_aside: str | None = None
    #: True when a complete report already existed and no worker ran.
    reused: bool = False
    #: Why diffcheck's own I/O failed, when it did (the report is left incomplete).
    io_failure: str | None = None


def describe_exit(returncode: int) -> str:
    """``exit N`` or ``killed by signal SIGNAME (N)`` for a ``Popen.returncode``."""
    if returncode >= 0:
        return f"exit {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "unknown signal"
    return f"killed by signal {name} ({-returncode})"


def prepare_report_path(path: Path) -> tuple[bool, Path | None]:
    """Get ``path`` ready for a new run: (already complete?, where an old file was moved).

    A complete report is left alone (the caller reuses it). An incomplete or unreadable one
    is moved aside, never deleted.
    """
    state, _ = read_state(path)
    if state is ReportState.COMPLETE:
        return True, None
    if state is ReportState.MISSING:
        return False, None
    return False, set_aside(path)


def _exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the worker has exited, without reaping it where the OS allows.

    An unreaped worker keeps its pid, so its process-group id cannot be reused before the
    group is killed. Where ``os.waitid`` is missing (some macOS builds), ``poll`` reaps it;
    the group is then killed right after, leaving a window of microseconds.
    """
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        return process.poll() is not None
    try:
        return waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def kill_group(pid: int) -> None:
    """Kill the worker ``pid`` (it leads its group), its group and its process tree."""
    # The group may already be empty; that is the outcome we wanted.
    reaper.stop_and_end_tree(pid)


def _wait(
    process: subprocess.Popen[bytes], timeout_s: float, stop: threading.Event | None
) -> str | None:
    """Wait for the worker; kill its group on timeout or stop. Returns why it was killed."""
    deadline = time.monotonic() + timeout_s
    pause = 0.002
    while not _exited(process):
        if stop is not None and stop.is_set():
            kill_group(process.pid)
            process.wait()
            return INTERRUPTED
        if time.monotonic() >= deadline:
            kill_group(process.pid)
            process.wait()
            return f"worker exceeded the {timeout_s:g} s timeout; killed"
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return None


def run_isolated(
    spec_json: str,
    timeout_s: float,
    *,
    python: str | None = None,
    stop: threading.Event | None = None,
) -> WorkerOutcome:
    """Run one check in a fresh worker process and leave a complete report behind.

    Parameters
    ----------
    spec_json
        The :class:`~diffcheck.sweep.spec.WorkerSpec` as JSON (plain text travels anywhere).
    timeout_s
        Wall-clock limit of the worker; past it the worker's process group is SIGKILLed.
    python
        The interpreter to run the worker with (default: this one).
    stop
        When set while the worker runs, the worker is killed (the sweep was interrupted)
        and its report is left incomplete, so that ``--resume`` runs the check again.

    Returns
    -------
    WorkerOutcome
        How the worker ended and what the parent wrote.

    Raises
    ------
    ReportError
        When the report file cannot be settled (a broken output directory).
    """
    spec = WorkerSpec.model_validate_json(spec_json)
    report = Path(spec.report)
    complete, moved = prepare_report_path(report)
    if complete:  # a rerun of a task that had finished (a dask retry, or --resume)
        return WorkerOutcome(
            spec.id, spec.report, "not run: report already complete", None, reused=True
        )
    log = log_path(report)
    earlier_log = start_log(spec.id, log)
    started = time.perf_counter()
    # Appended, never truncated, never through a link: see .worker_log.
    sink = open_log(log)
    token = new_token()  # marks whatever the worker starts, even in a session of its own
    try:
        environment = dict(
            os.environ,
            **{PARENT_ENV: str(os.getpid()), TIMEOUT_ENV: repr(timeout_s), TOKEN_ENV: token},
        )
        process = reaper.spawn(
            lambda: subprocess.Popen(
                [python or sys.executable, "-m", "diffcheck.sweep.worker", spec_json],
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    finally:
        os.close(sink)
    try:
        killed = _wait(process, timeout_s, stop)
        if killed is None:
            kill_group(process.pid)  # leftovers of a worker that died; the group is its own
            process.wait()
    except BaseException:
        kill_group(process.pid)
        process.wait()
        raise
    finally:
        reaper.release(process.pid)
        end_tagged(token)  # helpers that left the group (setsid, a daemon) end with it
        reaper.end_orphans()  # and those that also cleared their environment (env -i)
    wall_s = time.perf_counter() - started
    ended = WorkerEnd(killed, process.returncode if killed is None else None)
    return conclude(spec, log, ended, wall_s, earlier_log=earlier_log, moved=moved)


@dataclass(frozen=True)
class WorkerEnd:
    """How a worker's check ended, as the parent saw it."""

    #: Why the parent killed it (timeout, interrupt), or None.
    killed: str | None
    #: Its exit status (negative: a signal) when it exited by itself, else None.
    returncode: int | None
    #: Set by a warm worker that survived a check it could not run (its reply status).
    reported: int | None = None


def conclude(
    spec: WorkerSpec,
    log: Path,
    ended: WorkerEnd,
    wall_s: float,
    *,
    earlier_log: bool,
    moved: Path | None,
) -> WorkerOutcome:
    """Settle a check's report after its worker ended, and say how it went."""
    if ended.killed is not None or ended.reported or ended.returncode:
        # A worker killed (a timeout, an interrupt) or dead while it wrote leaves its
        # temporary (.dc-<pid>-<hex>.tmp) beside the report: its process is gone now, so
        # it goes (another worker's, still alive, stays).
        with contextlib.suppress(OSError):
            remove_stale_temporaries(Path(spec.report).parent)
    if ended.killed == INTERRUPTED:
        # Left incomplete on purpose: the check did not fail, it was stopped, and --resume
        # moves an incomplete report aside and runs the check again.
        return WorkerOutcome(spec.id, spec.report, ended.killed, wall_s, log=str(log))
    if OWN_IO_STATUS in (ended.returncode, ended.reported):
        # diffcheck could not write the report: not a verdict on the backend. Left as it is
        # (incomplete, or missing), so --resume runs the check again; the sweep stops.
        cause = log_tail(log) or "the worker could not write its report"
        return WorkerOutcome(
            spec.id, spec.report, "own I/O failed", wall_s, log=str(log), io_failure=cause
        )
    failure = None
    if ended.killed is not None:
        exit_text = failure = ended.killed
    elif ended.reported:
        exit_text = f"reported status {ended.reported}"
        tail = log_tail(log)
        failure = f"worker reported status {ended.reported}" + (f": {tail}" if tail else "")
    else:
        returncode = ended.returncode if ended.returncode is not None else 0
        exit_text = describe_exit(returncode)
        if returncode < 0:
            failure = f"worker {exit_text}"
        elif returncode != 0:
            tail = log_tail(log)
            failure = f"worker exited with status {returncode}" + (f": {tail}" if tail else "")
    report = Path(spec.report)
    settled = settle_report(report, spec.check(), failure, elapsed_ms=wall_s * 1000.0)
    kept: str | None = str(log)
    if failure is None and settled.action is None and not earlier_log:
        with contextlib.suppress(OSError):
            if log.stat().st_size == 0:
                log.unlink()  # the empty log this clean run created; nothing to keep
                kept = None
    if kept is not None and not os.path.exists(kept):
        kept = None
    return WorkerOutcome(
        spec.id,
        spec.report,
        exit_text,
        wall_s,
        action=settled.action,
        log=kept,
        moved_aside=str(moved or settled.moved_aside or "") or None,
    )
