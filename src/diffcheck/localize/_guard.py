"""What ``locate`` refuses before it runs, and what it checks of the program as it runs.

Misuse is a one-line :class:`~diffcheck.errors.ConfigError` naming what was given, what it
must be and what to do: a candidate that is no backend, a bound that is no number, inputs
that are no arrays, the reference as its own candidate. A program must return arrays
(``None``, a string, a float or a generator have no values to compare) and give the same
result twice on the reference (an unseeded random draw is no rounding error). A time limit
stops a program that does not end.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import ConfigError, DiffcheckError
from ._proxy import Tracked, is_array

__all__ = [
    "Deadline",
    "LocateTimeout",
    "check_arguments",
    "returned_arrays",
]


class LocateTimeout(DiffcheckError):
    """``locate`` stopped a program that ran past its ``time_limit``."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def check_arguments(
    fn: Any,
    inputs: tuple[Any, ...],
    candidate: Any,
    reference: Any,
    nmse_bounds: Any,
    precision: Any,
    time_limit: Any,
) -> None:
    """Refuse misuse of :func:`diffcheck.locate` with one line each (see the module)."""
    if not callable(fn):
        raise ConfigError(
            f"fn={_short(fn)} is not callable; pass a function fn(xp, *arrays) that returns arrays"
        )
    for role, backend in (("candidate", candidate), ("reference", reference)):
        # An adapter by what locate asks of it (isinstance of the Protocol checks every
        # member, about 0.1 ms).
        if not isinstance(backend, str) and not callable(getattr(backend, "probe", None)):
            raise ConfigError(
                f"{role}={_short(backend)} is a {type(backend).__name__}; it must be a backend "
                "name such as 'mlx:cpu' or an adapter (run 'diffcheck backends' for the names)"
            )
    if not isinstance(precision, str):
        raise ConfigError(f"precision={_short(precision)} must be one of the names f32, f16, bf16")
    if nmse_bounds is not None:
        if not isinstance(nmse_bounds, Mapping):
            raise ConfigError(
                f"nmse_bounds={_short(nmse_bounds)} must be a mapping of function names to "
                'NMSE bounds, such as {"matmul": 1e-6}'
            )
        for name, value in nmse_bounds.items():
            if (
                not isinstance(name, str)
                or isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ConfigError(
                    f"nmse_bounds entry {_short(name)}: {_short(value)} must name a function "
                    'and give a positive finite NMSE, such as {"matmul": 1e-6}'
                )
    if time_limit is not None and (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, int | float)
        or not time_limit > 0
        or math.isnan(time_limit)
    ):
        raise ConfigError(
            f"time_limit={_short(time_limit)} must be a positive number of seconds (or None "
            "for no limit)"
        )
    for i, value in enumerate(inputs):
        _check_input(i, value)


def _check_input(i: int, value: Any) -> None:
    if isinstance(value, bool | int | float | complex):
        return
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        value = value[0]  # (values, "bfloat16"): the values must be numbers
    if isinstance(value, str | bytes) or not (
        is_array(value) or isinstance(value, list | tuple) or hasattr(value, "__array__")
    ):
        raise ConfigError(
            f"input {i} is a {type(value).__name__} ({_short(value)}); inputs must be arrays "
            "of numbers or Python numbers"
        )
    try:
        kind = np.asarray(value).dtype.kind if not is_array(value) else "?"
    except Exception:
        kind = "O"
    if kind in "OUSVMm":
        raise ConfigError(
            f"input {i} ({_short(value)}) holds no numbers (NumPy dtype kind {kind!r}); inputs "
            "must be arrays of numbers or Python numbers"
        )


def returned_arrays(value: Any, side: str) -> list[Any]:
    """The arrays a program returned (in order); ConfigError for anything else.

    A program's result is what both sides are compared on at the end: an array, or a
    tuple, list or dict of them.
    """
    found: list[Any] = []

    def walk(item: Any) -> None:
        if isinstance(item, Tracked):
            found.append(item.raw)
        elif is_array(item):
            found.append(item)
        elif isinstance(item, np.generic):  # NumPy's 0-d result of a whole reduction
            found.append(np.asarray(item))
        elif isinstance(item, tuple | list):
            for member in item:
                walk(member)
        elif isinstance(item, dict):
            for member in item.values():
                walk(member)
        else:
            raise ConfigError(
                f"the program returned {type(item).__name__} {_short(item)} on {side}; it must "
                "return its result as arrays (an array, or a tuple, list or dict of arrays)"
            )

    walk(value)
    if not found:
        raise ConfigError(
            f"the program returned no array on {side} ({_short(value)}); it must return its "
            "result as arrays"
        )
    return found


class _Expired(BaseException):
    """Raised inside the program when its time is up (not an Exception: it gets out)."""


class Deadline:
    """A time limit for the whole ``locate``: checked at each recorded call, and by SIGALRM.

    The alarm interrupts a program that sleeps or loops outside any call; it is used only in
    the main thread, and stops the program only where it stands in the program's own file:
    an alarm that arrives inside a garbage-collector callback or a finalizer would be lost
    (Python reports it as unraisable), so there it comes again 20 ms later. Another timer
    running (pytest-timeout's) is restored with the time it had left.
    """

    def __init__(self, seconds: float | None, fn: Any = None) -> None:
        self.seconds = seconds
        self.end = math.inf if seconds is None else time.monotonic() + seconds
        code = getattr(fn, "__code__", None) or getattr(type(fn).__call__, "__code__", None)
        self.files = frozenset([code.co_filename]) if code is not None else frozenset()

    def _alarm(self, signum: int, frame: Any) -> None:
        if frame is not None and frame.f_code.co_filename in self.files:
            raise _Expired
        signal.setitimer(signal.ITIMER_REAL, 0.02)  # a callback or library code: soon again

    def check(self) -> None:
        if time.monotonic() > self.end:
            raise _Expired

    @contextlib.contextmanager
    def running(self, side: str, where: Callable[[], str]) -> Iterator[None]:
        """Run one side's program under the limit; LocateTimeout when it runs out."""
        armed = False
        if self.seconds is not None and threading.current_thread() is threading.main_thread():
            left = max(self.end - time.monotonic(), 1e-3)
            theirs = signal.getitimer(signal.ITIMER_REAL)[0]  # another timer (pytest-timeout)
            if theirs == 0.0 or theirs > left:  # else theirs fires first anyway
                started = time.monotonic()
                previous = signal.signal(signal.SIGALRM, self._alarm)
                signal.setitimer(signal.ITIMER_REAL, left)
                armed = True
        try:
            yield
        except _Expired:
            raise LocateTimeout(
                f"locate stopped the program on {side} after time_limit={self.seconds:g} s "
                f"({where()}); pass a larger time_limit, or time_limit=None for none"
            ) from None
        finally:
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0.0)
                signal.signal(signal.SIGALRM, previous)
                if theirs:  # the other timer goes on with the time it had left
                    rest = theirs - (time.monotonic() - started)
                    signal.setitimer(signal.ITIMER_REAL, max(rest, 1e-3))
