"""Warm isolated workers: long-lived worker processes per backend pair, one check at a time.

The parent keeps up to ``jobs`` workers. Each is forked from multiprocessing's fork server,
which is started before any backend is imported and preloads :mod:`.warm` (the runner, the
ops, NumPy, pydantic), so a new worker costs a ``fork`` rather than an interpreter start. A
worker serves checks of one (reference, candidate) pair only, so backends never share a
process, and it is replaced:

- after a crash (a signal, an exit) or a timeout, always: the check in flight fails with the
  cause, exactly as a cold worker's would, and no other check is touched;
- after ``worker_checks`` checks, to bound whatever state a backend leaks between checks;
- when the next check belongs to another pair.

What this gives up against a fresh interpreter per check (``--isolation cold``): checks that
run in the same worker share the process, so state a backend keeps between calls (caches,
allocator pools, a device context, global flags) can carry from one check into the next, at
most ``worker_checks - 1`` checks on. Inputs are generated from each check's seed, so they
never carry over.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
import time
import types
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from ..errors import BackendError
from . import reaper
from .descendants import TOKEN_ENV, end_tagged, new_token
from .isolate import (
    INTERRUPTED,
    WorkerEnd,
    WorkerOutcome,
    conclude,
    log_path,
    prepare_report_path,
    start_log,
)
from .spec import WorkerSpec
from .warm import Task
from .worker import requested_fault

__all__ = ["DEFAULT_WORKER_CHECKS", "WarmWorkers"]

#: Checks one warm worker runs before it is replaced.
DEFAULT_WORKER_CHECKS = 100

_PRELOAD = ["diffcheck.sweep.warm"]


def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    # Effective when the fork server starts, i.e. the first time this process forks a worker.
    context.set_forkserver_preload(_PRELOAD)
    return context


_START = threading.Lock()


@contextlib.contextmanager
def _without_main() -> Iterator[None]:
    """Start a worker without multiprocessing re-running the parent's ``__main__`` in it.

    The parent's main script (the ``diffcheck`` console script, a benchmark, pytest) has
    nothing to give a worker, and re-running one that is not guarded would start a sweep
    inside the worker. multiprocessing records ``__main__`` when a process starts, so a
    bare module stands in for it during the start (serialised: other threads may start too).
    """
    with _START:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


class _Worker:
    """One warm worker process and its pipes, seen from the parent."""

    def __init__(self, context: Any, key: tuple[str, str]) -> None:
        from .warm import serve

        self.key = key
        self.used = 0
        #: Marks whatever the worker's checks start (sent with its first check's environment).
        self.token = new_token()
        self.connection, child = context.Pipe(duplex=True)
        lifeline_read, self._lifeline = context.Pipe(duplex=False)
        self.process = context.Process(
            target=serve, args=(child, lifeline_read), name="diffcheck-sweep-worker", daemon=False
        )
        with _without_main():
            self.process.start()
        child.close()
        lifeline_read.close()

    def kill(self) -> None:
        """Kill the worker and its process group now."""
        pid = self.process.pid
        if pid is not None and self.process.exitcode is None:
            # It leads its own group (os.setsid); its tree holds what left the group.
            reaper.stop_and_end_tree(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                self.process.kill()  # in case it died or had not called setsid yet
        self.process.join()
        end_tagged(self.token)  # helpers that left the group (setsid, a daemon) end with it
        reaper.end_orphans()  # what a worker that died by itself left: re-parented here
        self._close()

    def close(self) -> None:
        """Ask the worker to finish; kill it if it does not within a second."""
        with contextlib.suppress(OSError, ValueError):
            self.connection.send(None)
        self.process.join(1.0)
        if self.process.exitcode is None:
            self.kill()
        end_tagged(self.token)
        reaper.end_orphans()
        self._close()

    def _close(self) -> None:
        for end in (self.connection, self._lifeline):
            with contextlib.suppress(OSError):
                end.close()

    def exit_status(self) -> int:
        self.process.join(5.0)
        if self.process.exitcode is None:
            self.kill()
        code: int = self.process.exitcode if self.process.exitcode is not None else -9
        return code


def _await(
    worker: _Worker, timeout_s: float, stop: threading.Event | None
) -> tuple[WorkerEnd, bool]:
    """Wait for the worker's reply: (how the check ended, whether the worker is still usable)."""
    deadline = time.monotonic() + timeout_s
    connection: Connection = worker.connection
    while True:
        if stop is not None and stop.is_set():
            worker.kill()
            return WorkerEnd(INTERRUPTED, None), False
        left = deadline - time.monotonic()
        if left <= 0:
            worker.kill()
            return WorkerEnd(f"worker exceeded the {timeout_s:g} s timeout; killed", None), False
        ready = wait([connection, worker.process.sentinel], timeout=min(left, 0.1))
        if connection in ready or (ready and connection.poll(0)):
            try:
                status: int = connection.recv()
            except (EOFError, OSError):
                return WorkerEnd(None, worker.exit_status()), False
            return WorkerEnd(None, 0, reported=status or None), status == 0
        if ready:  # the sentinel: the worker is gone
            return WorkerEnd(None, worker.exit_status()), False


class WarmWorkers:
    """Warm workers for ``jobs`` threads; each thread owns at most one worker at a time.

    Parameters
    ----------
    worker_checks
        Checks a worker runs before it is replaced (at least 1).
    """

    def __init__(self, worker_checks: int = DEFAULT_WORKER_CHECKS) -> None:
        self.worker_checks = worker_checks
        self._context = _context()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[_Worker] = []
        self._environment = dict(os.environ)

    def _worker(self, key: tuple[str, str]) -> _Worker:
        worker: _Worker | None = getattr(self._local, "worker", None)
        if worker is not None and (
            worker.key != key or worker.used >= self.worker_checks or not worker.process.is_alive()
        ):
            worker.close()
            worker = None
        if worker is None:
            try:
                worker = _Worker(self._context, key)
            except (OSError, RuntimeError, ValueError) as error:
                raise BackendError(
                    "sweep worker", f"cannot start a warm worker ({error}); try --isolation cold"
                ) from None
            with self._lock:
                self._all.append(worker)
            self._local.worker = worker
        return worker

    def _discard(self) -> None:
        self._local.worker = None

    def run(
        self, spec_json: str, timeout_s: float, stop: threading.Event | None = None
    ) -> WorkerOutcome:
        """Run one check on this thread's warm worker; same contract as ``run_isolated``."""
        spec = WorkerSpec.model_validate_json(spec_json)
        report = Path(spec.report)
        complete, moved = prepare_report_path(report)
        if complete:
            return WorkerOutcome(
                spec.id, spec.report, "not run: report already complete", None, reused=True
            )
        log = log_path(report)
        earlier_log = start_log(spec.id, log)
        worker = self._worker((spec.reference, str(spec.config["require_backend"])))
        started = time.perf_counter()
        worker.used += 1
        try:
            task = Task(
                spec_json,
                timeout_s,
                str(log),
                fault=requested_fault(spec.id),
                # Sent with a worker's first check only: it is the same for the whole sweep.
                environment=(
                    dict(self._environment, **{TOKEN_ENV: worker.token})
                    if worker.used == 1
                    else None
                ),
            )
            try:
                worker.connection.send(task)
            except (OSError, ValueError):  # it died before it could take the check
                ended, usable = WorkerEnd(None, worker.exit_status()), False
            else:
                ended, usable = _await(worker, timeout_s, stop)
        except BaseException:
            worker.kill()
            self._discard()
            raise
        wall_s = time.perf_counter() - started
        if not usable:
            worker.kill()
            self._discard()
        return conclude(spec, log, ended, wall_s, earlier_log=earlier_log, moved=moved)

    def close(self) -> None:
        """End every worker (asked first, killed after a second)."""
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.close()
