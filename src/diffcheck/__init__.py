"""diffcheck: differential numerical testing of array backends.

Run the same deterministic inputs on a reference and a required candidate backend, compare
them with a strict, segment-by-segment NMSE differ, and keep a versioned JSON report that a
later reader can re-check from the stored bits alone.

Importing this package imports no optional backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._distribution import __version__
from .differ import Metrics, Segment, SegmentVerdict, Verdict, diff
from .errors import (
    BackendError,
    ConfigError,
    DiffcheckError,
    ReportError,
    UnknownBackendError,
    UnknownOpError,
)

if TYPE_CHECKING:
    from .api import compare, run
    from .localize import locate, reduce
    from .search import search_api

__all__ = [
    "BackendError",
    "ConfigError",
    "DiffcheckError",
    "Metrics",
    "ReportError",
    "Segment",
    "SegmentVerdict",
    "UnknownBackendError",
    "UnknownOpError",
    "Verdict",
    "__version__",
    "compare",
    "diff",
    "locate",
    "reduce",
    "run",
    "search_api",
]


def __getattr__(name: str) -> Any:
    # The runner pulls in pydantic models and the adapter registry; load it on first use.
    if name in ("compare", "run"):
        from . import api

        return getattr(api, name)
    if name in ("locate", "reduce"):  # the first wrong call of a program, its smallest repro
        from . import localize

        return getattr(localize, name)
    if name == "search_api":  # the API search (diffcheck fuzz --api); Hypothesis loads as it runs
        from .search import search_api

        return search_api
    raise AttributeError(f"module 'diffcheck' has no attribute {name!r}")
