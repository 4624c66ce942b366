"""Backends that end or stall the process that calls them, and one that is merely slow.

Each is a :class:`~value_fakes.FaultyAdapter` whose ``exp`` misbehaves on its first
non-empty floating input of a run: the marker file (created just before) makes it happen
exactly once, so a test pays one worker restart, not one per example. They pickle by their
constructor arguments, so the search's worker process can rebuild them.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np

from value_fakes import FaultyAdapter, FaultyNamespace

MISBEHAVIOURS = (
    "sigfpe",
    "abort",
    "hang",
    "slow",
    "float32-only",
    "wrong-then-crash",
    "foreign",
    "float64-everywhere",
)


class Foreign:
    """A library's own object, which no answer of the search's worker may carry home."""


class _Namespace(FaultyNamespace):
    def __init__(self, how: str, marker: str) -> None:
        super().__init__("none")
        self.how, self.marker = how, marker

    def exp(self, x: Any, /) -> Any:
        result = super().exp(x)
        values = np.asarray(x)
        if self.how == "float64-everywhere":  # wrong in float64; in float32 only past 2
            wrong = values.dtype == np.float64 or (
                values.dtype == np.float32 and bool(np.any(np.abs(values) >= 2))
            )
            return (
                np.asarray(result) * np.asarray(1.01, np.asarray(result).dtype) if wrong else result
            )
        if self.how == "foreign":  # every result holds a library object, not host data
            return np.asarray(Foreign(), dtype=object)
        if self.how == "slow":
            time.sleep(0.05)
            return result
        if self.how == "float32-only":  # wrong in float32 only: no other dtype shares it
            if values.dtype == np.float32 and values.size:
                return (np.asarray(result) * np.float32(1.001)).astype(np.float32)
            return result
        if self.how == "wrong-then-crash":  # wrong everywhere; crashes once on a 0-d input
            if values.ndim == 0 and values.dtype.kind == "f" and not os.path.exists(self.marker):
                Path(self.marker).touch()
                os.kill(os.getpid(), signal.SIGFPE)
            return np.asarray(result) + np.asarray(1, dtype=np.asarray(result).dtype)
        if values.size and values.dtype.kind == "f" and not os.path.exists(self.marker):
            Path(self.marker).touch()
            if self.how == "sigfpe":
                os.kill(os.getpid(), signal.SIGFPE)
            elif self.how == "abort":
                os.abort()
            else:
                time.sleep(3600)
        return result


class Misbehaving(FaultyAdapter):
    """``exp`` crashes (SIGFPE, abort), hangs, is slow, is wrong in float32 only, is
    wrong everywhere and crashes once on a 0-d input (met while shrinking), or returns a
    library object (``foreign``)."""

    def __init__(self, how: str, marker: str = "") -> None:
        if how not in MISBEHAVIOURS:
            raise ValueError(f"unknown misbehaviour {how!r}")
        super().__init__("none")
        self.how, self.marker = how, marker
        self._namespace = _Namespace(how, marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.how, self.marker))

    @property
    def spec(self) -> str:
        return f"misbehaving[{self.how}]"
