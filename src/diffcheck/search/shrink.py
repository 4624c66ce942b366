"""Shrinking's limits: the run's own, and every cut said.

Hypothesis stops shrinking after ``MAX_SHRINKING_SECONDS`` (300 s) of wall time, silently
as far as a caller can see: under a heavy load a shrink of ``remainder`` was cut from 232
runs to 210, so the same seed gave another minimal example. A search without a time budget
is meant to be repeatable under any load, so its shrinks have no clock limit; with
``--time-budget`` the limit is what the budget leaves. Hypothesis' other limit, a count of
successful shrinks (500), does not depend on the clock; each shrink either limit stops is
recorded with the function (``cut`` in findings.json), so a minimal example that may not be
minimal says so. Hypothesis has no public switch for either: its engine's module constant
and exit hook are patched for the duration of one search, and left alone when renamed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["shrink_limits"]


@contextmanager
def shrink_limits(deadline: float | None) -> Iterator[list[str]]:
    """Shrinks within the run's budget (``deadline``, monotonic; None: no clock limit).

    Yields the list to which each shrink stopped by a limit adds one line.
    """
    cuts: list[str] = []
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:  # pragma: no cover - Hypothesis reorganised
        yield cuts
        return
    runner = getattr(engine, "ConjectureRunner", None)
    reasons = getattr(engine, "ExitReason", None)
    seconds = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    exit_with = getattr(runner, "exit_with", None)
    if runner is None or reasons is None or seconds is None or exit_with is None:
        yield cuts  # pragma: no cover - renamed upstream: Hypothesis' own limits apply
        return
    limits = {r for r in (getattr(reasons, n, None) for n in _SHRINK_LIMITS) if r is not None}

    def recording(self: Any, reason: Any) -> None:
        if reason in limits and not getattr(self, "ignore_limits", False):
            cuts.append(
                f"shrinking stopped by Hypothesis' limit ({reason.name.replace('_', ' ')}) "
                f"after {getattr(self, 'shrinks', '?')} shrinks: the example shown may not be "
                "minimal"
            )
        exit_with(self, reason)

    limit = math.inf if deadline is None else max(deadline - time.monotonic(), 0.0)
    engine.MAX_SHRINKING_SECONDS = limit  # type: ignore[assignment]  # an int there; inf compares alike
    runner.exit_with = recording
    try:
        yield cuts
    finally:
        engine.MAX_SHRINKING_SECONDS = seconds
        runner.exit_with = exit_with


#: Hypothesis' reasons for ending a run that cut a shrink short.
_SHRINK_LIMITS = ("max_shrinks", "very_slow_shrinking")
