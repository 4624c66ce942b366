"""Ending what a worker started, even a helper that left its session and cleared its environment.

The environment token of :mod:`.descendants` misses a helper that executes with an empty
environment (``env -i``). What such a helper cannot leave is its ancestry, so on Linux:

- every worker is a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): a descendant
  orphaned while the worker lives (a double-forked daemon, ``setsid -f``) is re-parented to
  the worker instead of to init, so the worker's process tree holds everything its checks
  started. Before a worker ends by itself it kills that tree (:func:`end_descendants`), and
  a parent that kills a worker (a timeout, an interrupt) first stops it and kills its tree;
- the sweep parent is a child subreaper while a local sweep runs (:func:`adopting`): what a
  worker that died by itself (a crash, ``os._exit``) left behind is re-parented to the
  sweep, which ends it (:func:`end_orphans`) once the worker ended.

Which of the sweep parent's children are leftovers: a process that the sweep did not start
(:func:`spawn` registers the workers it starts), that was not a child before the sweep
began, and that is in a session other than the parent's (every worker leads a session of its
own, so no descendant of a worker can be in the parent's). A program that runs a sweep
while, in another thread, it starts a child in a session of its own (or such a child
orphans a grandchild) would see that process ended with the sweep's leftovers.

Elsewhere (no ``/proc``, no ``prctl``) nothing here is guaranteed: only the worker's process
group and its environment token are ended.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = [
    "ProcessEntry",
    "adopting",
    "become_subreaper",
    "descendants",
    "end_descendants",
    "end_orphans",
    "processes",
    "release",
    "spawn",
    "stop_and_end_tree",
]

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_DEAD = ("Z", "X", "x")  # zombie or dead: nothing left to kill, only to reap
_PASSES = 50  # a process may fork once more between a scan and its kill: scan again
_REAP_WITHIN_S = 1.0  # a SIGKILLed process that is not gone by then (stuck in I/O) is left


@dataclass(frozen=True)
class ProcessEntry:
    """One line of ``/proc/<pid>/stat``, the fields needed here."""

    pid: int
    ppid: int
    session: int
    state: str
    #: Start time in clock ticks since boot: with the pid, names one process (pids are reused).
    start: int

    @property
    def dead(self) -> bool:
        return self.state in _DEAD


def _prctl(option: int, argument: object) -> int | None:
    """``prctl(option, argument)`` (Linux), or None where it cannot be called."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        result: int = libc.prctl(option, argument, 0, 0, 0)
    except (OSError, AttributeError):
        return None
    return result


def become_subreaper(on: bool = True) -> bool:
    """Make this process a child subreaper (or stop being one); returns whether it worked."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0) == 0


def _is_subreaper() -> bool:
    value = ctypes.c_int(0)
    return _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(value)) == 0 and value.value != 0


def _entry(name: str) -> ProcessEntry | None:
    try:
        with open(f"/proc/{name}/stat", "rb") as source:
            text = source.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses.
    fields = text.rpartition(")")[2].split()
    try:
        return ProcessEntry(int(name), int(fields[1]), int(fields[3]), fields[0], int(fields[19]))
    except (IndexError, ValueError):
        return None


def processes() -> dict[int, ProcessEntry]:
    """Every process visible in ``/proc`` (empty where there is none)."""
    table: dict[int, ProcessEntry] = {}
    try:
        names = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return table
    for name in names:
        found = _entry(name)
        if found is not None:
            table[found.pid] = found
    return table


def descendants(root: int, table: dict[int, ProcessEntry] | None = None) -> list[ProcessEntry]:
    """The processes below ``root`` in the process tree (breadth first)."""
    table = processes() if table is None else table
    children: dict[int, list[ProcessEntry]] = {}
    for entry in table.values():
        children.setdefault(entry.ppid, []).append(entry)
    found: list[ProcessEntry] = []
    frontier = [root]
    while frontier:
        below = [child for parent in frontier for child in children.get(parent, [])]
        found.extend(below)
        frontier = [child.pid for child in below]
    return found


def _kill(entries: list[ProcessEntry], done: set[tuple[int, int]]) -> None:
    for entry in entries:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(entry.pid, signal.SIGKILL)
        done.add((entry.pid, entry.start))


def end_descendants(root: int) -> int:
    """SIGKILL every live process below ``root``; returns how many were killed.

    Complete when ``root`` is a subreaper that is alive (or stopped): a process killed here
    re-parents its children to ``root``, and the next scan finds them.
    """
    killed: set[tuple[int, int]] = set()
    for _ in range(_PASSES):
        live = [
            entry
            for entry in descendants(root)
            if not entry.dead and (entry.pid, entry.start) not in killed
        ]
        if not live:
            break
        _kill(live, killed)
    return len(killed)


def stop_and_end_tree(group: int) -> None:
    """Kill a worker that leads process group ``group`` and everything below it.

    The group is stopped first, so the worker (a subreaper) cannot start more while its
    tree is killed, and keeps the orphans of what is killed; then the group is killed.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGSTOP)
    end_descendants(group)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


@dataclass
class _Adoption:
    """This process's state as a sweep parent; one per process, shared by every sweep in it."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    #: Sweeps running now; the process is a subreaper while it is above zero (and it worked).
    active: int = 0
    adopting: bool = False
    was_subreaper: bool = False
    #: Children from before the first sweep began: never taken for leftovers.
    before: set[tuple[int, int]] = field(default_factory=set)
    #: Live workers the sweeps started.
    owned: set[int] = field(default_factory=set)


_STATE = _Adoption()


@contextlib.contextmanager
def adopting() -> Iterator[bool]:
    """Be a child subreaper for the block (yields whether this process is one).

    Leftovers are ended when the block ends; the previous subreaper setting is restored.
    """
    state = _STATE
    with state.lock:
        if state.active == 0:
            me = os.getpid()
            state.before = {(e.pid, e.start) for e in processes().values() if e.ppid == me}
            state.was_subreaper = _is_subreaper()
            state.adopting = state.was_subreaper or become_subreaper()
        state.active += 1
    try:
        yield state.adopting
    finally:
        with state.lock:
            end_orphans()
            state.active -= 1
            if state.active == 0:
                if state.adopting and not state.was_subreaper:
                    become_subreaper(False)
                state.adopting = False
                state.before = set()


def spawn(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """Start a worker with ``start`` and record it as the sweep's own (never a leftover).

    Held under the lock that :func:`end_orphans` takes, so a worker that has just been
    forked is never mistaken for a leftover before it is recorded.
    """
    with _STATE.lock:
        process = start()
        _STATE.owned.add(process.pid)
    return process


def release(pid: int) -> None:
    """The worker ``pid`` has been reaped: it is no longer the sweep's."""
    with _STATE.lock:
        _STATE.owned.discard(pid)


def _reap(pids: list[int]) -> None:
    """Collect the exit status of ``pids`` (children of this process), briefly."""
    deadline = time.monotonic() + _REAP_WITHIN_S
    waiting = set(pids)
    while waiting:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                waiting.discard(pid)
        if not waiting or time.monotonic() > deadline:
            return
        time.sleep(0.002)


def end_orphans() -> int:
    """Kill and reap the leftovers re-parented to this sweep parent; returns how many.

    Does nothing unless a sweep is :func:`adopting` (and this process is a subreaper).
    """
    state = _STATE
    with state.lock:
        if not state.adopting:
            return 0
        me, session = os.getpid(), os.getsid(0)
        ended: set[tuple[int, int]] = set()
        for _ in range(_PASSES):
            stray = [
                entry
                for entry in processes().values()
                if entry.ppid == me
                and entry.session != session
                and entry.pid not in state.owned
                and (entry.pid, entry.start) not in state.before
                and (entry.pid, entry.start) not in ended  # one stuck in I/O: tried once
            ]
            if not stray:
                break
            # A killed orphan's own children come to this process too: the next pass.
            _kill([entry for entry in stray if not entry.dead], ended)
            ended.update((entry.pid, entry.start) for entry in stray)
            _reap([entry.pid for entry in stray])
        return len(ended)
