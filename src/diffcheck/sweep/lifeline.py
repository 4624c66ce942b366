"""Keeping a worker from outliving its sweep: die with the parent, and enforce its own deadline.

A killed sweep parent (SIGKILL, SIGTERM, a lost CI runner) must not leave workers behind: a
hung one would run forever, and a slow one would later write into a directory a ``--resume``
is using. Two mechanisms, both in the worker:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` through ctypes: the kernel kills the worker
  the moment its parent exits;
- everywhere, a daemon :class:`Watchdog` thread that notices the parent is gone (its
  lifeline pipe reads end-of-file, or the worker was re-parented) and that enforces the
  worker's own deadline per check, whatever the parent does. Either way it kills the
  worker's whole process group (the worker leads its own session), so whatever the check
  started dies too.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from typing import Any

__all__ = ["DEADLINE_GRACE_S", "Watchdog", "die_with_parent", "own_deadline"]

#: How far past the parent's timeout a worker's own deadline lies: the parent kills first.
DEADLINE_GRACE_S = 5.0

_PR_SET_PDEATHSIG = 1


def own_deadline(timeout_s: float) -> float:
    """The worker's own limit for a check the parent gives ``timeout_s``."""
    return timeout_s * 1.25 + DEADLINE_GRACE_S


def die_with_parent(expected_parent: int | None = None) -> bool:
    """Ask the kernel to SIGKILL this process when its parent exits (Linux only).

    Returns whether the request was made. When the parent is already gone (re-parented
    before the request), the process exits at once.
    """
    done = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            done = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(70)  # the parent died before the request: nobody is waiting for this worker
    return done


def _kill_own_group(why: str) -> None:
    from .reaper import end_descendants

    with contextlib.suppress(OSError):
        os.write(2, f"diffcheck sweep worker: {why}; killing itself\n".encode())
    end_descendants(os.getpid())  # a subreaper's tree: even what left its group
    with contextlib.suppress(OSError):
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(137)


class Watchdog(threading.Thread):
    """Kills this worker when its parent goes away or a check runs past its own deadline.

    Parameters
    ----------
    parent
        The parent's pid at start; a different ``os.getppid()`` later means it died.
    lifeline
        Optionally, a connection whose other end only the parent holds: end-of-file on it
        means the parent is gone (works where the worker's parent is a fork server).
    """

    def __init__(self, parent: int, lifeline: Any | None = None) -> None:
        super().__init__(name="diffcheck-watchdog", daemon=True)
        self._parent = parent
        self._lifeline = lifeline
        self._deadline: float | None = None
        self._limit_s = 0.0
        self._lock = threading.Lock()

    def arm(self, limit_s: float) -> None:
        """Start the clock of one check: past ``limit_s`` seconds the worker dies."""
        with self._lock:
            self._limit_s = limit_s
            self._deadline = time.monotonic() + limit_s

    def disarm(self) -> None:
        """The check finished in time."""
        with self._lock:
            self._deadline = None

    def run(self) -> None:
        while True:
            if self._lifeline is not None:
                try:
                    gone = self._lifeline.poll(0.25)  # readable only at end-of-file
                except (EOFError, OSError):
                    gone = True
                if gone:
                    _kill_own_group("its sweep parent is gone")
            else:
                time.sleep(0.25)
            if os.getppid() != self._parent:
                _kill_own_group("its sweep parent is gone")
            with self._lock:
                late = self._deadline is not None and time.monotonic() > self._deadline
                limit = self._limit_s
            if late:
                _kill_own_group(f"a check ran past the worker's own {limit:g} s deadline")
