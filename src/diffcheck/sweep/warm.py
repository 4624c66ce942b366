"""The warm worker process: runs checks one at a time, as the parent sends them over a pipe.

Workers are forked from a fork server (:mod:`.pool`) that imported this module, and with it
the runner, the ops, NumPy and pydantic, but no candidate backend. A worker imports its
backend on its first check and keeps it for the next ones, so a check no longer pays an
interpreter start, the imports and the device initialisation.

Each check still has its own crash domain: the worker runs one check at a time, and a
crash, a hang or an exit ends only the check in flight (the parent settles its report and
forks a fresh worker). Each check's stdout and stderr go to its own log file (file
descriptors 1 and 2 are redirected for the check), so a crash leaves that check's last
words beside its report. The worker leads its own session and dies with its parent or past
its own deadline (:mod:`.lifeline`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import runner  # noqa: F401  (preloaded in the fork server: NumPy, pydantic, the ops)
from ..adapters import resolve
from ..errors import DiffcheckError, ReportError
from .lifeline import Watchdog, die_with_parent, own_deadline
from .reaper import become_subreaper, end_descendants
from .records import OWN_IO_STATUS, OwnIOError, run_guarded
from .spec import WorkerSpec
from .worker import inject
from .worker_log import open_log

__all__ = ["Task", "serve"]


@dataclass(frozen=True)
class Task:
    """One check for a warm worker (pickled over its pipe)."""

    spec_json: str
    timeout_s: float
    log: str
    #: A test fault (pytest runs only; the parent decides, see :mod:`.worker`).
    fault: str | None = None
    #: The parent's environment when the sweep started; a worker adopts it before its first
    #: check (the fork server's own may be older: it outlives a sweep in a long process).
    environment: dict[str, str] | None = None


@contextlib.contextmanager
def _output_to(fd: int) -> Iterator[None]:
    """Send file descriptors 1 and 2 (and so Python's and C's output) to ``fd`` (closed after)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in (fd, *saved):
            os.close(descriptor)


def _run_one(task: Task) -> int:
    """Run one check; 0 once its final record is written, 2 when it could not run."""
    try:
        spec = WorkerSpec.model_validate_json(task.spec_json)
        check = spec.check()
        candidate = resolve(check.require_backend)
        if task.fault is not None:
            inject(candidate, task.fault)
        run_guarded(check, Path(spec.report), candidate)
    except OwnIOError as error:
        _say(f"diffcheck sweep worker: {str(error).splitlines()[0]}")
        return OWN_IO_STATUS
    except (DiffcheckError, ValidationError) as error:
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        _say(f"diffcheck sweep worker: {text}")
        return 2
    return 0


def _say(text: str) -> None:
    """One line into the check's log; a log on a full disk takes nothing, and says nothing.

    The line is the log's, not the parent's: the status sent back tells the parent how the
    check ended, and the parent says it in one line (a failed print must not become a
    traceback chained onto the error it was reporting).
    """
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def serve(connection: Any, lifeline: Any) -> None:
    """The worker's loop: receive a :class:`Task`, run it, reply with its status; ``None`` ends it.

    Parameters
    ----------
    connection
        The duplex pipe to the parent.
    lifeline
        A pipe end whose other end only the parent holds: end-of-file means it is gone.
    """
    os.setsid()  # its own group: a timeout kills the worker and whatever the check started
    become_subreaper()  # what a check orphans (a daemon, setsid -f) stays in this tree
    parent = os.getppid()
    die_with_parent(parent)
    watchdog = Watchdog(parent, lifeline)
    watchdog.start()
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            task = None
        if task is None:
            end_descendants(os.getpid())  # nothing its checks started outlives the worker
            return
        if task.environment is not None and task.environment != os.environ:
            os.environ.clear()
            os.environ.update(task.environment)
        try:
            # The parent left a regular file there (.worker_log); never followed.
            sink = open_log(Path(task.log))
        except ReportError:
            connection.send(OWN_IO_STATUS)  # no log to write to: diffcheck's own I/O failed
            continue
        with _output_to(sink):
            watchdog.arm(own_deadline(task.timeout_s))
            try:
                status = _run_one(task)
            except BaseException:  # a bug: its traceback goes to the check's log, then exit
                with contextlib.suppress(BaseException):  # a log on a full disk: no traceback
                    traceback.print_exc()
                    sys.stderr.flush()
                end_descendants(os.getpid())
                os._exit(1)
            watchdog.disarm()
        connection.send(status)
