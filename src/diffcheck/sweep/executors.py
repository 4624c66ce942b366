"""Where isolated checks run: local processes, or tasks on a dask cluster.

A check always runs in a worker process of its own crash domain: on this machine
(``local``: a warm worker of :mod:`.pool`, or a fresh interpreter per check), or on a dask
worker host that spawns a fresh one (``dask``), where a crash takes down only that process
and never the dask worker. Outcomes are yielded as checks finish, in any order.

The dask executor needs no shared filesystem: a task runs its check in a scratch directory
and returns the report document through dask, and the parent writes it under the sweep
directory (:mod:`.remote`).
"""

from __future__ import annotations

import abc
import importlib
import importlib.util
import queue
import threading
import uuid
from collections.abc import Generator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, ClassVar

from ..errors import ConfigError
from ..install import core_install
from .isolate import WorkerOutcome, run_isolated
from .pool import DEFAULT_WORKER_CHECKS, WarmWorkers
from .reaper import adopting
from .remote import Landing, RemoteResult, remote_spec, run_remote
from .spec import WorkerSpec

__all__ = [
    "EXECUTORS",
    "ISOLATIONS",
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "make_executor",
]

#: ``--isolation`` choices: warm long-lived workers, or a fresh interpreter per check.
ISOLATIONS = ("warm", "cold")


class Executor(abc.ABC):
    """Runs isolated checks and yields their outcomes as they finish."""

    name: ClassVar[str]

    @abc.abstractmethod
    def run(
        self, specs: Sequence[WorkerSpec], timeout_s: float
    ) -> Generator[WorkerOutcome, None, None]:
        """Run every spec (each in its own worker process); yield outcomes in finishing order.

        Closing the iterator early (an interrupt) stops what has not finished.
        """

    @abc.abstractmethod
    def describe(self) -> str:
        """A short description for the summary (``local, 2 jobs``)."""

    @property
    def jobs(self) -> int | None:
        """How many checks run at once, when this side decides it."""
        return None


class LocalExecutor(Executor):
    """Worker processes on this machine, ``jobs`` at a time.

    Threads only wait on their worker process, so a thread pool is enough to keep ``jobs``
    processes busy without a second level of processes. With ``isolation="warm"`` (the
    default) each thread keeps a long-lived worker per backend pair (:mod:`.pool`); with
    ``"cold"`` every check gets a fresh interpreter (:func:`.isolate.run_isolated`).
    """

    name = "local"

    def __init__(
        self, jobs: int, *, isolation: str = "warm", worker_checks: int = DEFAULT_WORKER_CHECKS
    ) -> None:
        if jobs < 1:
            raise ConfigError(f"--jobs {jobs}, but it must be at least 1")
        if isolation not in ISOLATIONS:
            raise ConfigError(
                f"--isolation {isolation}, but it must be one of: {', '.join(ISOLATIONS)}"
            )
        if worker_checks < 1:
            raise ConfigError(f"--worker-checks {worker_checks}, but it must be at least 1")
        self._jobs = jobs
        self.isolation = isolation
        self.worker_checks = worker_checks

    @property
    def jobs(self) -> int:
        return self._jobs

    def describe(self) -> str:
        jobs = f"{self._jobs} job{'s' if self._jobs != 1 else ''}"
        if self.isolation == "cold":
            return f"local, {jobs}, a fresh worker per check"
        return f"local, {jobs}, warm workers (up to {self.worker_checks} checks each)"

    def run(
        self, specs: Sequence[WorkerSpec], timeout_s: float
    ) -> Generator[WorkerOutcome, None, None]:
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=self._jobs, thread_name_prefix="diffcheck-sweep")
        warm = WarmWorkers(self.worker_checks) if self.isolation == "warm" and specs else None
        unit = warm.run if warm is not None else run_isolated
        # What a worker that died by itself left behind is re-parented here and ended.
        with adopting():
            try:
                futures = [
                    pool.submit(unit, spec.model_dump_json(), timeout_s, stop=stop)
                    for spec in specs
                ]
                for future in as_completed(futures):
                    yield future.result()
            finally:
                # Reached early only on an interrupt or an error: kill the workers still running.
                stop.set()
                pool.shutdown(wait=True, cancel_futures=True)
                if warm is not None:
                    warm.close()


class DaskExecutor(Executor):
    """One dask task per check on the scheduler at ``address``; each task spawns the worker
    and returns the report, which the parent writes (:mod:`.remote`).

    dask and distributed are imported only when a sweep runs with this executor (the
    ``dask`` extra of ``diffcheck-numerics``).
    """

    name = "dask"

    def __init__(self, address: str, *, connect_timeout_s: float = 30.0) -> None:
        self.address = address
        self.connect_timeout_s = connect_timeout_s

    def describe(self) -> str:
        return f"dask at {self.address}"

    def _client(self) -> Any:
        try:
            # Imported by name so the module is Any to mypy whether or not the extra is there.
            distributed: Any = importlib.import_module("distributed")
        except ImportError:
            raise ConfigError(_NO_DISTRIBUTED) from None
        try:
            return distributed.Client(
                self.address, timeout=self.connect_timeout_s, set_as_default=False
            )
        except (OSError, TimeoutError) as error:
            raise ConfigError(
                f"cannot reach the dask scheduler at {self.address}: {error}"
            ) from None

    def run(
        self, specs: Sequence[WorkerSpec], timeout_s: float
    ) -> Generator[WorkerOutcome, None, None]:
        client = self._client()
        futures: list[Any] = []
        # distributed.as_completed needs a default client; this one is private to the sweep,
        # so completions are collected through callbacks instead.
        finished: queue.Queue[Any] = queue.Queue()
        try:
            token = uuid.uuid4().hex[:8]
            landings: dict[str, Landing] = {}
            for index, spec in enumerate(specs):
                landing = Landing(spec)  # creates the report's incomplete record here
                if landing.reused is not None:
                    yield landing.reused
                    continue
                key = f"diffcheck-sweep-{token}-{index}"
                landings[key] = landing
                futures.append(
                    client.submit(
                        run_remote, remote_spec(spec), timeout_s, key=key, pure=False, retries=0
                    )
                )
            for future in futures:
                future.add_done_callback(finished.put)
            for _ in futures:
                done = finished.get()
                landing = landings[done.key]
                try:
                    result: RemoteResult = done.result()
                except Exception as error:  # the task died with its dask worker, or errored
                    text = str(error).splitlines()[0] if str(error) else ""
                    yield landing.fail(f"dask task failed: {type(error).__name__}: {text}")
                    continue
                yield landing.land(result)
        finally:
            # A cancelled task that is already running keeps its worker until the timeout.
            if futures:
                client.cancel(futures)
            client.close()


_NO_DISTRIBUTED = f"--executor dask needs the distributed package: {core_install('dask')}"

#: Executor names accepted by ``--executor``.
EXECUTORS = ("local", "dask")


def make_executor(
    name: str,
    *,
    jobs: int,
    scheduler: str | None,
    isolation: str = "warm",
    worker_checks: int = DEFAULT_WORKER_CHECKS,
) -> Executor:
    """The executor called ``name``.

    Raises
    ------
    ConfigError
        For an unknown name, ``dask`` without a scheduler address or without the
        distributed package, or a scheduler given to ``local``.
    """
    if name == "local":
        if scheduler is not None:
            raise ConfigError("--scheduler applies only to --executor dask")
        return LocalExecutor(jobs, isolation=isolation, worker_checks=worker_checks)
    if name == "dask":
        if not scheduler:
            raise ConfigError("--executor dask needs --scheduler ADDRESS (tcp://host:8786)")
        # Checked here, before the sweep directory is created, not when the sweep starts.
        if importlib.util.find_spec("distributed") is None:
            raise ConfigError(_NO_DISTRIBUTED)
        return DaskExecutor(scheduler)
    raise ConfigError(f"--executor {name}, but it must be one of: {', '.join(EXECUTORS)}")
