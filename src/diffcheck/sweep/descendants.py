"""Ending what a worker started, even what left its process group (``setsid``, a daemon).

A timeout or a worker's end kills the worker's process group, but a helper that a check
starts in a session of its own (``setsid``, a double-forked daemon) is in no group of the
worker's and, once the worker is gone, is not even its child. Every worker therefore runs
with a token of its own in its environment (:data:`TOKEN_ENV`), which every program it or
its helpers execute inherits; when the worker ends, :func:`end_tagged` kills every process
whose environment carries that token, found by a scan of ``/proc/<pid>/environ`` (Linux;
a scan of ~100 processes takes about 2 ms).

What it cannot see: a helper that clears its environment before executing, and (for warm
workers, which get the token after they start) a helper forked without executing a new
program, whose ``/proc`` environment is still its parent's original one. On Linux those are
found by ancestry instead (:mod:`.reaper`: workers and the sweep parent are child
subreapers). Where ``/proc`` is missing (macOS), only the process group is ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid

__all__ = ["TOKEN_ENV", "end_tagged", "new_token", "tagged"]

#: The environment variable that marks every process a worker starts.
TOKEN_ENV = "DIFFCHECK_SWEEP_WORKER"
_PASSES = 4  # a helper may start another while it is being killed: scan again


def new_token() -> str:
    """A token that no other worker (of this or another sweep) carries."""
    return uuid.uuid4().hex


def tagged(token: str) -> list[int]:
    """The pids of live processes whose environment carries ``token`` (none but ours: a
    process of another user cannot be read, and is skipped)."""
    marker = f"{TOKEN_ENV}={token}".encode()
    found: list[int] = []
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as source:
                environment = source.read()
        except OSError:
            continue
        if marker in environment.split(b"\0"):
            found.append(int(entry.name))
    return found


def end_tagged(token: str) -> int:
    """SIGKILL every process carrying ``token``; returns how many were killed."""
    killed: set[int] = set()
    for _ in range(_PASSES):
        # A process killed in an earlier pass may still be listed while it dies.
        pids = set(tagged(token)) - killed
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
    return len(killed)
