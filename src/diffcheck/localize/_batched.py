"""Error figures and the quick bound check of a window's output pairs, sharing their work.

A window of a program's calls gives about two pairs per call (the candidate's own output and
its local re-run's, each against the reference's). Judged with :func:`._arrays.same_bits`,
:func:`._arrays.within` and :func:`._arrays.error_of` one after the other, a pair costs
about forty elementwise passes: each function widens, subtracts and checks finiteness anew,
and on a transformer block of 58 calls that cost more than running the program. Here one
float64 difference serves both questions, a finite sum of its squares stands for the
finiteness checks, and the reference's sum of squares is taken once for both its pairs;
every figure and answer is still theirs, bit for bit (a property test holds it to them).
(Joining the pairs of a window end to end into one array per dtype was measured too: the
work is in the elements, not in the calls, and it was slower.)

Pairs outside what this shortcut assumes (dtypes that differ, integer or complex values, empty
arrays, shapes that differ, NaN, infinities) go through those three functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..values.model import Bound
from ..values.ulp import ulp_distance
from ._arrays import equal_error, error_of, host_dtype, same_bits, within
from ._result import CallError

__all__ = ["Assessed", "Pair", "assess"]

_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}  # same-width views for bit equality


@dataclass(frozen=True)
class Pair:
    """One output of one call: the reference's, as expected, and the candidate's (host)."""

    reference: Any  # in the reference's own dtype
    expected: Any  # the reference rounded into the candidate's dtype (or the reference)
    candidate: Any
    bound: Bound


@dataclass(frozen=True)
class Assessed:
    """What :func:`assess` found for one pair."""

    #: The expected and the candidate's output have the same bits.
    same_bits: bool
    #: :func:`._arrays.within` for the pair (None: it cannot decide; also when the bits match).
    quick: bool | None
    #: :func:`._arrays.error_of` of the reference and the candidate, passed, with no reason.
    figures: CallError


def _plain(host: Any) -> npt.NDArray[Any]:
    return np.asarray(host[0] if isinstance(host, tuple) else host)


def _one(pair: Pair) -> Assessed:
    """The pair judged alone, as the judge did before windows were judged together."""
    if same_bits(pair.expected, pair.candidate):
        figures = (
            equal_error(pair.reference)
            if pair.expected is pair.reference
            else error_of(pair.reference, pair.candidate, None)
        )
        return Assessed(True, None, figures)
    quick = within(pair.expected, pair.candidate, pair.bound)
    return Assessed(False, quick, error_of(pair.reference, pair.candidate, None))


def assess(pairs: Sequence[Pair]) -> list[Assessed]:
    """Every pair's bit equality, quick bound check and error figures."""
    energies: dict[int, float] = {}
    with np.errstate(all="ignore"):
        return [_lean(pair, energies) for pair in pairs]


def _lean(pair: Pair, energies: dict[int, float]) -> Assessed:
    """:func:`_one`, with each elementwise pass made once and shared by both questions.

    ``energies`` holds the reference's sum of squares by the identity of its host array: the
    carried and the local output of a call are both measured against it.
    """
    e, c, r = _plain(pair.expected), _plain(pair.candidate), _plain(pair.reference)
    if not (
        e.dtype == c.dtype
        and e.dtype.kind == "f"
        and r.dtype.kind == "f"
        and e.shape == c.shape == r.shape
        and c.size > 0
        and host_dtype(pair.expected) == host_dtype(pair.candidate)
    ):
        return _one(pair)
    # Flat in C order, as error_of reads them (a transposed reference output is copied so).
    e, c, r = e.reshape(-1), c.reshape(-1), r.reshape(-1)
    bits = _BITS[e.dtype.itemsize]
    same = bool(np.array_equal(e.view(bits), c.view(bits)))
    narrowed = pair.expected is not pair.reference
    if same and not narrowed:
        return Assessed(True, None, equal_error(pair.reference))
    diff = np.subtract(r, c, dtype=np.float64)
    np.abs(diff, out=diff)
    squares = float(np.vdot(diff, diff).real)
    if not math.isfinite(squares):  # NaN, infinities or overflow: the single-pair path
        return _one(pair)
    energy = energies.get(id(pair.reference))
    if energy is None:
        wide_r = r.astype(np.float64)
        energy = energies[id(pair.reference)] = float(np.vdot(wide_r, wide_r).real)
    figures = _figures(pair, r, c, diff, squares, energy)
    if same:
        return Assessed(True, None, figures)
    return Assessed(False, _quick(pair, e, c, diff, squares, energy), figures)


def _quick(
    pair: Pair,
    e: npt.NDArray[Any],
    c: npt.NDArray[Any],
    diff: npt.NDArray[np.float64],
    squares: float,
    energy: float,
) -> bool | None:
    """:func:`._arrays.within` for a pair with a finite difference and different bits.

    The difference is the reference's; where the expected is the reference (nothing was
    rounded into a narrower dtype) it is the expected's too, and its sums are within's sums.
    """
    narrowed = pair.expected is not pair.reference
    if narrowed and not bool(np.isfinite(e).all()):
        return None  # the candidate is finite: its difference from the reference is
    if not (e.all() and c.all()):  # a zero somewhere: do their signs agree?
        zeros = (e == 0) | (c == 0)
        if bool((np.signbit(e[zeros]) != np.signbit(c[zeros])).any()):
            return None
    bound = pair.bound
    if bound.kind == "exact":
        # Finite, with different bits and no zero of another sign: not equal values.
        return False
    if bound.kind == "nmse":
        if narrowed:
            wide_e, wide_c = e.astype(np.float64), c.astype(np.float64)
            d = wide_e - wide_c
            energy, squares = float(np.dot(wide_e, wide_e)), float(np.dot(d, d))
        if energy / e.size < 1e-30 or bound.nmse is None:
            return None
        return squares / e.size / (energy / e.size) < bound.nmse
    if bound.ulps is None or bound.kind not in ("ulp", "reduction"):
        return None
    beyond = ulp_distance(e, c, host_dtype(pair.expected)) > bound.ulps
    if bound.atol is not None and bound.kind == "reduction":
        error = diff if not narrowed else np.abs(e.astype(np.float64) - c.astype(np.float64))
        beyond &= ~(error <= bound.atol)
    return not bool(beyond.any())


def _figures(
    pair: Pair,
    reference: npt.NDArray[Any],
    candidate: npt.NDArray[Any],
    diff: npt.NDArray[np.float64],
    squares: float,
    energy: float,
) -> CallError:
    """:func:`._arrays.error_of` (passed, no reason) for one pair with a finite difference."""
    size = diff.size
    mse, energy = squares / size, energy / size
    nmse = mse if energy < 1e-30 else mse / energy
    worst = int(np.argmax(diff))
    window = slice(max(0, worst - 3), worst + 4)
    return CallError(
        nmse if math.isfinite(nmse) else float("inf"),
        float(diff[worst]),
        _unravel(worst, _plain(pair.candidate).shape),
        True,
        None,
        tuple(reference[window].tolist()),
        tuple(candidate[window].tolist()),
    )


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``np.unravel_index`` of a flat index, in Python (C order)."""
    index = []
    for n in reversed(shape):
        flat, i = divmod(flat, n)
        index.append(i)
    return tuple(reversed(index))
