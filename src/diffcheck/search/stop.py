"""A stop request for a running search: set by a signal handler, checked at safe points.

A signal handler that raises lands wherever the main thread is, including inside a
garbage-collector callback, whose exceptions Python prints and swallows. So SIGINT and
SIGTERM only set this flag; the search checks it before every example and while it waits
for its worker, and then raises :class:`StopRequested` from there.
"""

from __future__ import annotations

import threading

__all__ = ["StopRequested", "clear_stop", "request_stop", "stop_requested"]

_STOP = threading.Event()


class StopRequested(KeyboardInterrupt):
    """SIGINT or SIGTERM asked the search to stop."""


def request_stop() -> None:
    """Ask the running search to stop at its next safe point."""
    _STOP.set()


def clear_stop() -> None:
    """Forget an earlier request (a new search starts)."""
    _STOP.clear()


def stop_requested() -> bool:
    """Whether a stop was requested since the search started."""
    return _STOP.is_set()
