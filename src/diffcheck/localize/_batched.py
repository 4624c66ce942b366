"""Error figures and the quick bound check of a window's output pairs, sharing their work.

A window of a program's calls gives about two pairs per call (the candidate's own output and
its local re-run's, each against the reference's). Judged with :func:`._arrays.same_bits`,
:func:`._arrays.within` and :func:`._arrays.error_of` one after the other, a pair costs
about forty elementwise passes: each function widens, subtracts and checks finiteness anew,
and on a transformer block of 58 calls that cost more than running the program. Here one
float64 difference serves both questions, a finite sum of its squares stands for the
finiteness checks, and the reference's sum of squares is taken once for both its pairs;
every figure and answer is still theirs, bit for bit (a property test holds it to them).
The block's arrays hold a few thousand elements, so a pair's cost is mostly the count of
NumPy calls, each about a microsecond: bit equality compares the bytes, zeros and
finiteness are counted, and a ULP bound is checked on the bit patterns' largest difference
where no element changes sign. (Joining the pairs of a window end to end into one array
per dtype was measured twice, the second time with every elementwise question asked once
for all of them: 6.5 ms against 3.9 for the block's window of 111,040 elements, whose
float64 copies leave the cache, and about even in chunks of 4,096-8,192 elements.)

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


# Plain slotted dataclasses: a window makes about 116 of each, and a frozen one's __init__
# (object.__setattr__ per field) costs about a microsecond more.
@dataclass(slots=True)
class Pair:
    """One output of one call: the reference's, as expected, and the candidate's (host)."""

    reference: Any  # in the reference's own dtype
    expected: Any  # the reference rounded into the candidate's dtype (or the reference)
    candidate: Any
    bound: Bound


@dataclass(slots=True)
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
    widened: dict[int, npt.NDArray[np.float64]] = {}
    with np.errstate(all="ignore"):
        return [_lean(pair, energies, widened) for pair in pairs]


def _lean(
    pair: Pair, energies: dict[int, float], widened: dict[int, npt.NDArray[np.float64]]
) -> Assessed:
    """:func:`_one`, with each elementwise pass made once and shared by both questions.

    ``energies`` holds the reference's sum of squares by the identity of its host array: the
    carried and the local output of a call are both measured against it. ``widened`` holds
    the last reference's flat float64 copy (only the last: a window's copies together would
    take twice its references' memory), which a one-output call's two pairs share.
    """
    expected, candidate, reference = pair.expected, pair.candidate, pair.reference
    r = reference if type(reference) is np.ndarray else _plain(reference)
    c = candidate if type(candidate) is np.ndarray else _plain(candidate)
    narrowed = expected is not reference
    e = _plain(expected) if narrowed else r
    if not (
        e.dtype == c.dtype
        and e.dtype.kind == "f"
        and e.dtype.itemsize in _WIDTHS
        and r.dtype.kind == "f"
        and e.shape == c.shape == r.shape
        and c.size > 0
        # Two plain arrays of one dtype have one dtype name; a tagged host has its own.
        and (
            not (isinstance(expected, tuple) or isinstance(candidate, tuple))
            or host_dtype(expected) == host_dtype(candidate)
        )
    ):
        return _one(pair)
    shape = c.shape
    same = e.tobytes() == c.tobytes()  # one dtype and shape: the same bits (in C order)
    # Flat in C order, as error_of reads them (a transposed reference output is copied so).
    r = r.reshape(-1)
    if same and not narrowed:
        # equal_error's figures: no difference, the reference's first values around index 0.
        around = tuple(r[:4].tolist())
        return Assessed(
            True, None, CallError(0.0, 0.0, (0,) * len(shape), True, None, around, around)
        )
    c = c.reshape(-1)
    e = e.reshape(-1) if narrowed else r
    wide = widened.get(id(reference))
    if wide is None:
        widened.clear()
        wide = widened[id(reference)] = r.astype(np.float64)
    # The float64 difference, as error_of takes it (the candidate's values widen exactly).
    diff = np.subtract(wide, c)
    np.abs(diff, out=diff)
    squares = float(np.vdot(diff, diff).real)
    if not math.isfinite(squares):  # NaN, infinities or overflow: the single-pair path
        return _one(pair)
    energy = energies.get(id(reference))
    if energy is None:
        energy = energies[id(reference)] = float(np.vdot(wide, wide).real)
    figures = _figures(shape, r, c, diff, squares, energy)
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
    size = e.size
    if narrowed and np.count_nonzero(np.isfinite(e)) != size:
        return None  # the candidate is finite: its difference from the reference is
    if np.count_nonzero(e) != size or np.count_nonzero(c) != size:
        # A zero somewhere: do their signs agree?
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
        if energy / size < 1e-30 or bound.nmse is None:
            return None
        return squares / size / (energy / size) < bound.nmse
    if bound.ulps is None or bound.kind not in ("ulp", "reduction"):
        return None
    name = host_dtype(pair.expected)
    if bound.atol is None or bound.kind != "reduction":
        return _within_ulps(e, c, name, bound.ulps)
    beyond = ulp_distance(e, c, name) > bound.ulps
    error = diff if not narrowed else np.abs(e.astype(np.float64) - c.astype(np.float64))
    beyond &= ~(error <= bound.atol)
    return not bool(beyond.any())


#: Signed integer views of the narrow floats, whose bit patterns count ULPs within a sign.
_SIGNED = {"float16": np.int16, "float32": np.int32, "bfloat16": np.int32}
_STORAGE = {"float16": np.float16, "float32": np.float32, "bfloat16": np.float32}
_WIDTHS = (2, 4, 8)  # float widths whose bytes are all value (no padding to compare)


def _within_ulps(e: npt.NDArray[Any], c: npt.NDArray[Any], name: str, ulps: float) -> bool:
    """``not (ulp_distance(e, c, name) > ulps).any()``, for finite values, in fewer passes.

    Where every element has one sign on both sides (the common case), the distance is the
    difference of the bit patterns, which cannot overflow their own width; its largest
    magnitude decides. Elements of opposite signs, and float64, take ulp_distance.
    """
    view = _SIGNED.get(name)
    if view is None or e.dtype != _STORAGE[name]:
        return not bool((ulp_distance(e, c, name) > ulps).any())
    a, b = e.view(view), c.view(view)
    if name == "bfloat16":
        a, b = a >> 16, b >> 16  # bfloat16's bits, sign extended
    signs = np.bitwise_xor(a, b)
    if signs[signs.argmin()] < 0:  # some element changes sign
        return not bool((ulp_distance(e, c, name) > ulps).any())
    d = np.subtract(a, b)
    return not max(int(d[d.argmax()]), -int(d[d.argmin()])) > ulps


def _figures(
    shape: tuple[int, ...],
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
    worst = int(diff.argmax())
    window = slice(max(0, worst - 3), worst + 4)
    return CallError(
        nmse if math.isfinite(nmse) else float("inf"),
        float(diff[worst]),
        _unravel(worst, shape),
        True,
        None,
        tuple(reference[window].tolist()),
        tuple(candidate[window].tolist()),
    )


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``np.unravel_index`` of a flat index, in Python (C order)."""
    if len(shape) == 1:
        return (flat,)
    if len(shape) == 2:
        return divmod(flat, shape[1])
    index = []
    for n in reversed(shape):
        flat, i = divmod(flat, n)
        index.append(i)
    return tuple(reversed(index))
