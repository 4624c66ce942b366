"""What replaying a bundle holds at its peak, from its shapes and integers alone.

A bundle's inputs are bounded by its file (64 MiB), but what a call makes of them is not: a
484-byte bundle calling ``ones`` with shape ``[16000, 16000]`` asks for 2 GB, two arrays of
shape ``(16000, 1)`` and ``(1, 16000)`` broadcast to 256 million elements, ``fft.fft`` with
``n=10**9`` pads to a billion. :func:`estimate_replay` bounds, before anything is called,
the elements of every output of the bundle's function from the decoded example, by one rule
per function of the standard (:data:`RULES`, complete: every name a bundle may call has
one), and :func:`check_replay_budget` refuses a replay over ``--max-memory`` (by default
:data:`~diffcheck.runner.budget.DEFAULT_FRACTION` of the memory available), as ``diffcheck run``
does.

Each rule is an upper bound, never an exact size: a test draws examples of every function
and checks that NumPy's outputs never exceed it. Elements are counted at 16 bytes, the
widest dtype a bundle holds (complex128).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ..errors import BundleError
from ..runner.budget import DEFAULT_FRACTION, MemoryEstimate, default_budget, format_bytes
from .recipes import Example

__all__ = [
    "RULES",
    "check_replay_budget",
    "estimate_replay",
    "excess_work",
    "output_elements",
]

#: Bytes counted per output element: the widest dtype a bundle can hold (complex128).
ELEMENT_BYTES: Final = 16
#: Output copies a replay holds at once: both sides' results, their host copies, the
#: recomputed reference and the stored outputs decoded for comparison.
OUTPUT_COPIES: Final = 6
_FREE_STEPS: Final = 1024  # diff steps allowed whatever the length: microseconds
_HUGE: Final = 2**80  # "more than any machine": an estimate that cannot be computed


@dataclass(frozen=True)
class _Call:
    """The decoded call, seen as shapes and integers (no array is touched but its shape)."""

    values: tuple[Any, ...]  # args, then positional ones, in order
    kwargs: dict[str, Any]

    def get(self, index: int, name: str, default: Any = None) -> Any:
        if name in self.kwargs:
            return self.kwargs[name]
        return self.values[index] if index < len(self.values) else default

    @property
    def arrays(self) -> list[np.ndarray[Any, Any]]:
        found = [v for v in self.values if isinstance(v, np.ndarray)]
        return found + [v for v in self.kwargs.values() if isinstance(v, np.ndarray)]

    @property
    def sizes(self) -> int:
        """Elements of every array input."""
        return sum(int(a.size) for a in self.arrays)

    @property
    def broadcast(self) -> int:
        """An upper bound of any broadcast of the inputs: the largest length per axis."""
        shapes = [a.shape for a in self.arrays]
        width = max((len(s) for s in shapes), default=0)
        axes = [1] * width
        for shape in shapes:
            for i, n in enumerate(shape):
                position = width - len(shape) + i
                axes[position] = max(axes[position], int(n))
        return math.prod(axes)

    @property
    def base(self) -> int:
        """Elements of a result no larger than its inputs or their broadcast."""
        return max(self.broadcast, self.sizes, 1)


def _count(value: Any) -> int:
    """Elements of a shape given as an int, a tuple of ints or an integer array."""
    if value is None:
        return 1
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return abs(value)
    if isinstance(value, tuple | list):
        return math.prod(_count(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
        return math.prod(abs(int(v)) for v in value.ravel()) if value.size else 1
    return _HUGE  # a float or text where a length belongs: numpy refuses it, we do first


def _largest(value: Any) -> int:
    """The largest integer of ``value`` (an int or an integer array), at least 1."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
        return max([abs(int(v)) for v in value.ravel()] + [1])
    if isinstance(value, int):
        return max(abs(value), 1)
    return _HUGE


def _real(value: Any) -> float:
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if isinstance(value, complex):
        return abs(value)
    if isinstance(value, bool | int | float):
        return float(value)
    return math.inf


def _arange(call: _Call) -> int:
    try:
        start, stop = _real(call.get(0, "start", 0)), call.get(1, "stop")
        step = abs(_real(call.get(2, "step", 1)))
        span = abs(start) if stop is None else abs(_real(stop) - start)
        count = math.ceil(span / step) if step else 0
    except (OverflowError, ValueError):
        return _HUGE
    return count  # an infinite span raises OverflowError or ValueError above: refused


def _eye(call: _Call) -> int:
    rows = _count(call.get(0, "n_rows", 1))
    cols = call.get(1, "n_cols")
    return rows * (rows if cols is None else _count(cols))


def _matmul(call: _Call) -> int:
    arrays = call.arrays
    if len(arrays) != 2:
        return call.base
    a, b = arrays
    rows = int(a.shape[-2]) if a.ndim > 1 else 1
    cols = int(b.shape[-1]) if b.ndim > 1 else 1
    batch = _Call((np.empty(a.shape[:-2]), np.empty(b.shape[:-2])), {}).broadcast
    return max(batch * rows * cols, 1)


def _product(call: _Call) -> int:
    """Outer products and contractions: at most every pair of input elements."""
    return max(math.prod(max(int(a.size), 1) for a in call.arrays), 1)


def _matrices(call: _Call) -> int:
    """Decompositions (svd, qr, eigh): per matrix of m x n at most (m + n) squared."""
    if not call.arrays:
        return 1
    x = call.arrays[0]
    if x.ndim < 2:
        return call.base
    m, n = int(x.shape[-2]), int(x.shape[-1])
    return max(math.prod(int(k) for k in x.shape[:-2]) * (m + n) ** 2, call.base)


def _fft(name: str) -> Callable[[_Call], int]:
    def rule(call: _Call) -> int:
        length = call.get(1, "s" if name.endswith("n") else "n")
        padded = 1 if length is None else _count(length) + 1  # rfft adds one
        return call.base * max(padded, 1) * 2  # complex out: two values an element

    return rule


def _first(rule: Callable[[Any], int], index: int, name: str) -> Callable[[_Call], int]:
    return lambda call: rule(call.get(index, name))


def _scaled(rule: Callable[[Any], int], index: int, name: str) -> Callable[[_Call], int]:
    return lambda call: call.base * rule(call.get(index, name))


def _many(factor: int) -> Callable[[_Call], int]:
    return lambda call: factor * call.base


_SAME: Callable[[_Call], int] = _many(1)
#: Functions whose outputs may be larger than their inputs and their broadcast, by rule;
#: every other function of the standard returns at most that (:data:`RULES` fills them in).
_AMPLIFIERS: dict[str, Callable[[_Call], int]] = {
    "zeros": _first(_count, 0, "shape"),
    "ones": _first(_count, 0, "shape"),
    "empty": _first(_count, 0, "shape"),
    "full": _first(_count, 0, "shape"),
    "arange": _arange,
    "linspace": lambda call: _count(call.get(2, "num", 1)),
    "eye": _eye,
    "broadcast_to": lambda call: max(_count(call.get(1, "shape")), call.base),
    "tile": _scaled(_count, 1, "repetitions"),
    "repeat": _scaled(_largest, 1, "repeats"),
    "take": _product,
    "take_along_axis": _product,
    "meshgrid": lambda call: len(call.arrays) * _product(call),
    "broadcast_arrays": lambda call: len(call.arrays) * call.base,
    "matmul": _matmul,
    "linalg.matmul": _matmul,
    "tensordot": _product,
    "linalg.tensordot": _product,
    "linalg.outer": _product,
    "linalg.cross": _many(1),
    "linalg.svd": _matrices,
    "linalg.qr": _matrices,
    "linalg.eigh": _matrices,
    "linalg.pinv": _matrices,
    "nonzero": lambda call: max(call.arrays[0].ndim, 1) * call.base if call.arrays else 1,
    "linalg.slogdet": _many(2),
    "unique_all": _many(4),
    "unique_counts": _many(2),
    "unique_inverse": _many(2),
    "cumulative_sum": _many(2),
    "cumulative_prod": _many(2),
    "fft.fftfreq": _first(_count, 0, "n"),
    "fft.rfftfreq": lambda call: _count(call.get(0, "n", 1)) // 2 + 1,
    **{f"fft.{n}": _fft(n) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{f"fft.{n}": _fft(n) for n in ("fftn", "ifftn", "rfftn", "irfftn")},
}


def _rules() -> dict[str, Callable[[_Call], int]]:
    from .bundle import BUNDLE_FUNCTIONS

    names = frozenset().union(*BUNDLE_FUNCTIONS.values())
    return {name: _AMPLIFIERS.get(name, _SAME) for name in sorted(names)}


#: Per function a bundle may call, an upper bound of its output elements.
RULES: Final = _rules()


def output_elements(function: str, example: Example) -> int:
    """An upper bound of the elements of every output of ``function`` on ``example``."""
    call = _Call((*example.args, *example.positional), dict(example.kwargs))
    rule = RULES.get(function)
    if rule is None:  # not a bundle function at all: nothing is called, nothing counted
        return 0
    try:
        return int(rule(call))
    except (OverflowError, ValueError, TypeError, IndexError):
        return _HUGE


def excess_work(function: str, example: Example) -> str | None:
    """Why the call would take time out of proportion to its size (None: it would not).

    NumPy's ``diff`` steps ``n`` times whatever the length (``n=10**9`` on three elements runs
    for an hour); past the elements it differences, the result is empty anyway.
    """
    if function != "diff":
        return None
    call = _Call((*example.args, *example.positional), dict(example.kwargs))
    n = call.get(1, "n", 1)
    # A few steps past the length cost nothing (and the search draws them on tiny arrays).
    if isinstance(n, int) and not isinstance(n, bool) and n > max(call.base, _FREE_STEPS):
        return (
            f"diff with n={n} differences only {call.base} elements: NumPy would step n "
            "times for an empty result"
        )
    return None


def estimate_replay(function: str, example: Example) -> MemoryEstimate:
    """What replaying ``function`` on ``example`` holds at its peak, in bytes."""
    inputs = sum(int(a.nbytes) for a in _Call(example.args, dict(example.kwargs)).arrays)
    outputs = output_elements(function, example) * ELEMENT_BYTES
    return MemoryEstimate(
        inputs=inputs,
        device_inputs=2 * inputs,  # one copy on each side's device (host memory on a CPU)
        reference_wide=0,
        outputs=OUTPUT_COPIES * outputs,
        report=0,
    )


def check_replay_budget(
    function: str, example: Example, max_memory: int | None, *, where: str
) -> MemoryEstimate:
    """Refuse a replay whose estimate exceeds ``max_memory`` (default: the default budget),
    or whose work is out of proportion to its size (:func:`excess_work`)."""
    work = excess_work(function, example)
    if work is not None:
        raise BundleError(f"{where}: {work}; nothing was run")
    estimate = estimate_replay(function, example)
    budget = default_budget() if max_memory is None else max_memory
    if budget is not None and estimate.total > budget:
        source = (
            "--max-memory"
            if max_memory is not None
            else f"{DEFAULT_FRACTION:.0%} of the memory available now"
        )
        total = estimate.total
        needs = format_bytes(total) if total < _HUGE else "more than any machine holds"
        raise BundleError(
            f"{where}: replaying {function} needs about {needs} (inputs "
            f"{format_bytes(estimate.inputs)}, outputs {OUTPUT_COPIES} x "
            f"{format_bytes(estimate.outputs // OUTPUT_COPIES)}), over the budget of "
            f"{format_bytes(budget)} ({source}); nothing was run. Raise --max-memory if the "
            "machine holds it"
        )
    return estimate
