"""Where the search's calls run: in a warm worker process (the default), or in this one.

A backend can kill the process that calls it (MLX's ``floor_divide`` of INT_MIN by -1
raises SIGFPE) or never return (a complex64 ``mean`` ran for over ten minutes). So each
example is judged in a worker process that holds both adapters and stays warm from one call
to the next; the parent waits at most ``timeout_s`` per call. A worker that dies or runs
past the timeout is killed with everything it started (it leads its own session) and
replaced on the next call, and the call becomes a :class:`CallFailure` of kind ``crash``
or ``hang``: a finding, not the end of the run.

A worker is a fresh interpreter (``python -m diffcheck.search.worker``, the parent's
``sys.path``, its own session): the parent has already loaded and used the backends, and
forking a process whose libraries run threads is not safe; nor does the worker re-import
the caller's main module, as multiprocessing's ``spawn`` would. Requests and answers are
pickled over a socket pair; answers hold host data only (:mod:`.wire`: never a library's
object, which torch would share through file descriptors another process cannot fetch),
and an answer that cannot come home is a ``crash`` finding of that call. Adapters travel to the worker pickled, so an adapter must be
picklable (every registered one is); :class:`InProcess` runs the same calls here, for
speed comparisons and for adapters that cannot travel.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import ConfigError
from ..values.call import Outcome
from ..values.model import ValueVerdict
from .stop import StopRequested, stop_requested
from .wire import as_sent, dump_answer, host_only, load_answer

if TYPE_CHECKING:
    from ..adapters import Adapter
    from .recipes import Example

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "WIRE_FAILURE",
    "CallFailure",
    "Calls",
    "InProcess",
    "Isolated",
    "calls_for",
]

#: How a crash finding whose answer could not come home as host data begins its reason.
WIRE_FAILURE = "the worker's answer could not be brought home as host data"

#: Seconds one example (both sides, and the blame's extra calls) may take in a worker.
DEFAULT_CALL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class CallFailure:
    """An example whose worker died (``crash``), ran past the timeout (``hang``), or was
    stopped because the search's explicit time budget ran out first (``cut``: no finding)."""

    kind: Literal["crash", "hang", "cut"]
    reason: str


class Calls(Protocol):
    """Runs the search's calls: a verdict per example, both sides' outputs for a bundle."""

    mode: str
    timeout_s: float | None

    def judge(
        self, function: str, example: Example, deadline: float | None = None
    ) -> ValueVerdict | CallFailure: ...

    def outputs(
        self, function: str, example: Example, *, candidate: bool = True
    ) -> tuple[Outcome, Outcome] | CallFailure: ...

    def close(self) -> None: ...


class InProcess:
    """Every call in this process: fastest, but a crash or hang of a backend ends the run.

    The calls are made exactly as a worker makes them: on the example as the worker
    receives it (pickled and read back: every array an owned, C-ordered copy, not the
    drawn object) and answered as the worker answers (host data only), so both modes judge
    the same bytes and give the same verdict.
    """

    mode = "in-process"
    timeout_s: float | None = None

    def __init__(self, reference: Adapter, candidate: Adapter) -> None:
        self._reference, self._candidate = reference, candidate

    def judge(
        self, function: str, example: Example, deadline: float | None = None
    ) -> ValueVerdict | CallFailure:
        from .runner import judge

        sent = as_sent(example)
        answer: ValueVerdict = host_only(judge(function, sent, self._reference, self._candidate))
        return answer

    def outputs(
        self, function: str, example: Example, *, candidate: bool = True
    ) -> tuple[Outcome, Outcome] | CallFailure:
        sent = as_sent(example)
        answer: tuple[Outcome, Outcome] = host_only(
            _outputs(function, sent, self._reference, self._candidate, candidate)
        )
        return answer

    def close(self) -> None:
        return None


def _outputs(
    function: str, example: Example, reference: Adapter, candidate: Adapter, both: bool
) -> tuple[Outcome, Outcome]:
    from .runner import outputs

    if both:
        return outputs(function, example, reference, candidate)
    ref, _ = outputs(function, example, reference, reference)
    return ref, Outcome(raised="not run: the candidate's call did not return")


def serve(connection: Any) -> None:
    """The worker's loop: the adapters first, then ``(request, function, example[, flag])``
    until ``None`` or end-of-file; each answered ``("ok", value)`` or ``("error", text)``."""
    try:
        ref, cand = (pickle.loads(blob) for blob in connection.recv())
    except Exception as error:  # an adapter class this interpreter cannot import
        connection.send(("error", f"{type(error).__name__}: {error}"))
        return
    connection.send(("ok", None))
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        try:
            if request[0] == "judge":
                from .runner import judge

                reply: Any = ("ok", judge(request[1], request[2], ref, cand))
            else:
                reply = ("ok", _outputs(request[1], request[2], ref, cand, request[3]))
        except Exception as error:  # the harness failed, not a backend: the parent says so
            reply = ("error", f"{type(error).__name__}: {error}")
        try:
            data = dump_answer(reply)
        except Exception as error:  # a result that cannot travel: that call's finding
            data = dump_answer(("wire", f"{type(error).__name__}: {error}"))
        connection.send_bytes(data)


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:300]


def _describe(exitcode: int | None) -> str:
    if exitcode is None:
        return "ended"
    if exitcode >= 0:
        return f"exited with status {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = "an unknown signal"
    return f"was killed by {name} ({-exitcode})"


class HarnessError(Exception):
    """The worker's own code failed (not a backend): raised in the parent with its text."""


class Isolated:
    """One warm worker holding both adapters; replaced after a crash or a hang.

    Parameters
    ----------
    reference, candidate
        The adapters, pickled once for every worker started.
    timeout_s
        The longest one request may take before the worker is killed and it is a ``hang``.
    """

    mode = "worker"

    def __init__(self, reference: Adapter, candidate: Adapter, *, timeout_s: float) -> None:
        try:
            self._adapters = (pickle.dumps(reference), pickle.dumps(candidate))
        except Exception as error:
            raise ConfigError(
                f"the adapters cannot be sent to a worker process ({type(error).__name__}: "
                f"{error}); run the search in-process (--in-process) instead"
            ) from None
        self.timeout_s: float | None = timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._connection: Any = None
        #: Workers started so far (the first, then one per crash or hang).
        self.started = 0

    def start(self) -> None:
        """Start the first worker now (it is otherwise started by the first request)."""
        if self._process is None:
            self._start()

    def _start(self) -> None:
        here, there = socket.socketpair()
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "diffcheck.search.worker", str(there.fileno())],
                pass_fds=(there.fileno(),),
                env=environment,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own group: a hang kills what the call started
            )
        finally:
            there.close()
        self._connection = Connection(here.detach())
        self.started += 1
        self._connection.send(self._adapters)
        ready = self._connection.poll(max(self.timeout_s or 0.0, 60.0))
        try:
            status, text = self._connection.recv() if ready else ("error", "no answer")
        except (EOFError, OSError) as error:
            status, text = "error", f"it ended ({error or 'end of file'})"
        if status != "ok":
            self._stop()
            raise ConfigError(
                f"the search's worker process cannot load the adapters ({text}); "
                "make them importable by module name, or run in-process (--in-process)"
            )

    def _ask(self, request: tuple[Any, ...], deadline: float | None = None) -> Any:
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._start()
        process = self._process
        assert process is not None
        started = time.monotonic()
        wait = self.timeout_s or 0.0
        budget_first = deadline is not None and deadline - started < wait
        if deadline is not None and budget_first:
            wait = max(deadline - started, 0.0)
        try:
            self._connection.send(request)
            ready = self._wait_for_answer(started + wait)
        except (BrokenPipeError, EOFError, OSError):
            ready = True  # the worker is gone: recv below says how
        if not ready:
            self._stop()
            if budget_first:
                return CallFailure("cut", f"the time budget ran out during a call ({wait:.1f} s)")
            return CallFailure(
                "hang", f"no result within the {self.timeout_s:g} s call timeout; worker killed"
            )
        try:
            status, value = load_answer(self._connection.recv_bytes())
        except (EOFError, OSError):
            how = _describe(_wait(process, 5))
            seconds = time.monotonic() - started
            self._stop()
            return CallFailure("crash", f"the worker process {how} after {seconds:.2f} s")
        except Exception as error:  # WireError, or anything else reading it: never the run's end
            self._stop()  # the stream may be out of step: a fresh worker for the next call
            return CallFailure("crash", f"{WIRE_FAILURE} ({_one_line(error)}); worker replaced")
        if status == "wire":
            return CallFailure("crash", f"{WIRE_FAILURE} ({value})")
        if status == "error":
            raise HarnessError(value)
        return value

    def _wait_for_answer(self, until: float) -> bool:
        """Wait for the worker's answer until ``until`` (monotonic), in short slices, so a
        stop request (SIGINT, SIGTERM) ends the wait at once: the worker is then killed."""
        while True:
            left = until - time.monotonic()
            if self._connection.poll(max(min(left, 0.1), 0.0)):
                return True
            if stop_requested():
                self._stop()
                raise StopRequested
            if left <= 0.1:
                return False

    def judge(
        self, function: str, example: Example, deadline: float | None = None
    ) -> ValueVerdict | CallFailure:
        """The verdict, or how the call failed; ``deadline`` (monotonic) may cut the wait."""
        answer: ValueVerdict | CallFailure = self._ask(("judge", function, example), deadline)
        return answer

    def outputs(
        self, function: str, example: Example, *, candidate: bool = True
    ) -> tuple[Outcome, Outcome] | CallFailure:
        answer: tuple[Outcome, Outcome] | CallFailure = self._ask(
            ("outputs", function, example, candidate)
        )
        return answer

    def _stop(self) -> None:
        """Kill the worker's whole group (it may have started helpers) and reap it."""
        process, self._process = self._process, None
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.close()
            self._connection = None
        if process is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)  # its group: pgid is its pid
        _wait(process, 5)

    def close(self) -> None:
        """End the worker (asked politely first; killed when it does not go)."""
        process = self._process
        if process is not None and process.poll() is None and self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.send(None)
            _wait(process, 2)
        self._stop()


def _wait(process: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return process.wait(seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            process.kill()
        return process.wait()


def calls_for(reference: Adapter, candidate: Adapter, *, isolate: bool, timeout_s: float) -> Calls:
    """Isolated calls (a warm worker) or in-process ones."""
    if isolate:
        calls = Isolated(reference, candidate, timeout_s=timeout_s)
        calls.start()  # a worker that cannot load the adapters: one line, before any search
        return calls
    return InProcess(reference, candidate)
