"""Running a bundle's replay in a worker process, so a call that crashes or hangs cannot end
the process that replays it.

A bundle of kind ``crash`` records a call that killed its process (MLX's ``floor_divide``
of INT_MIN by -1 raises SIGFPE); one of kind ``hang`` a call that never returned. Replaying
them in-process would kill or block ``diffcheck replay``. :func:`run_in_worker` runs one
picklable function in a fresh interpreter (``python -m diffcheck.search.replay_worker FD``,
the parent's ``sys.path``, its own session, killed with its parent on Linux) and waits at
most ``timeout_s``: the answer, or a :class:`~.isolation.CallFailure` of kind ``crash``
(the worker died: how) or ``hang`` (the worker and everything it started are killed).

The request and the answer are pickled over a pipe of their own (a backend writing to
stdout cannot corrupt them); the worker's stdout and stderr are discarded, so a crash's
own report (a fatal-error dump) never reaches the replaying command's one line.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from .isolation import CallFailure, HarnessError

__all__ = ["run_in_worker"]


def _describe(status: int) -> str:
    if status >= 0:
        return f"exited with status {status}"
    try:
        return f"was killed by {signal.Signals(-status).name} ({-status})"
    except ValueError:
        return f"was killed by signal {-status}"


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything written to ``fd`` until end-of-file, or None past ``deadline``."""
    import selectors

    chunks: list[bytes] = []
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not selector.select(min(left, 0.1)):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def run_in_worker(timeout_s: float, function: Callable[..., Any], *args: Any) -> Any | CallFailure:
    """``function(*args)`` in a worker process: its value, or how the worker failed.

    Raises
    ------
    HarnessError
        When ``function`` raised in the worker (diffcheck's own error, not a backend's
        crash): with its type and message, for the caller to report in one line.
    """
    request = pickle.dumps((function, args))
    answer_read, answer_write = os.pipe()
    request_read, request_write = os.pipe()
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "diffcheck.search.replay_worker",
                str(request_read),
                str(answer_write),
            ],
            pass_fds=(request_read, answer_write),
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own group: a hang kills what the call started
        )
    finally:
        os.close(request_read)
        os.close(answer_write)
    try:
        with contextlib.suppress(BrokenPipeError):
            view = memoryview(request)
            while view:
                view = view[os.write(request_write, view) :]
        os.close(request_write)
        request_write = -1
        data = _read_all(answer_read, started + timeout_s)
    finally:
        if request_write >= 0:
            os.close(request_write)
        os.close(answer_read)
        if process.poll() is None:  # a hang, or an answer without an exit yet
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
        status = process.wait()
    seconds = time.monotonic() - started
    if data is None:
        return CallFailure("hang", f"no result within the {timeout_s:g} s replay timeout; killed")
    if not data:
        how = _describe(status)
        return CallFailure("crash", f"the replay's worker process {how} after {seconds:.2f} s")
    state, value = pickle.loads(data)  # from the worker this process started
    if state == "error":
        raise HarnessError(value)
    return value


def main(argv: list[str]) -> int:
    """Read one pickled ``(function, args)`` from ``argv[0]``, answer on ``argv[1]``."""
    from ..sweep.lifeline import die_with_parent

    die_with_parent()
    request_fd, answer_fd = int(argv[0]), int(argv[1])
    with os.fdopen(request_fd, "rb") as source:
        function, args = pickle.loads(source.read())
    try:
        data = pickle.dumps(("ok", function(*args)))
    except Exception as error:  # diffcheck's own failure: the parent says so in one line
        data = pickle.dumps(("error", f"{type(error).__name__}: {error}"))
    with os.fdopen(answer_fd, "wb") as answer:
        answer.write(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
