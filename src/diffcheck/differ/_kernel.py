# mypy: ignore-errors
# (numba types these functions when it compiles them; mypy cannot follow @njit/@intrinsic.)
"""The numba form of :func:`~diffcheck.differ._measure.measure` (imported lazily; compiled on use).

Blocks of :data:`~diffcheck.differ._measure.BLOCK` elements run in parallel: contiguous runs of
blocks on a few Python threads calling a ``nogil`` kernel (numba's ``parallel=True`` took
3-5x longer to compile, 37 s cold on a loaded 2-core box, for no speed gain). Each block is
read in tiles of :data:`_TILE` elements. Where both arrays are float32 and ULPs count in
float32 or bfloat16 (the common case), a tile first goes through a branch-free loop that LLVM
vectorises: the sums, max |diff| (as the integer bits of a non-negative float64, so the max
reduction vectorises), and the max ULP distance in 32-bit lanes. A tile whose sum of squared
differences is not finite holds a NaN or an infinity; it, and every tile of other dtypes, is
measured pair by pair with strict IEEE arithmetic. The block's first tile to reach its max
|diff| is scanned again at the end, from cache, for the first index. So each element is read
from memory once. Loops run over sliced tiles from index 0: numba then proves the indices
non-negative and drops its wrap-around checks, which alone made the vectorised loop 8x
faster (measured). On a 2-core Sapphire Rapids VM the kernel reads 10^8 float32 pairs in
about 80 ms, against 48 ms for NumPy's sum over both (``bench/differ_throughput.py``).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba
import numpy as np
import numpy.typing as npt
from numba.core import types
from numba.extending import intrinsic

from ._measure import _ARITH, _BF16, _BITS32, _BITS64, BLOCK, Figures, UlpFormat

__all__ = ["measure"]

_TILE = 2048
#: Elements per thread at least: a thread per 2M elements (16 MB of float32 input). Smaller
#: inputs take fewer threads, because waking and joining threads costs more than it saves
#: there, and far more on a loaded machine, where a descheduled thread stalls the join.
_PER_THREAD = 1 << 21
#: Read once: ``os.cpu_count()`` costs microseconds per call here, a small check's budget.
_CORES = max(1, os.cpu_count() or 1)
_MAGNITUDE = np.int32(0x7FFFFFFF)
_HALF_BF16 = np.int32(0x7FFF)  # rounds to nearest, with the even bit added
assert _ARITH not in (_BITS32, _BITS64, _BF16)


@intrinsic
def _f64_bits(typingctx: Any, x: Any) -> Any:
    """The int64 bit pattern of a float64 (a bitcast; numba has no scalar ``view``)."""
    if x != types.float64:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen


@intrinsic
def _bits_f64(typingctx: Any, x: Any) -> Any:
    """The float64 whose bit pattern is an int64 (the inverse bitcast)."""
    if x != types.int64:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


@numba.njit(cache=True)
def _key(values: Any, bits: Any, i: int, mode: int, fraction: int, min_exp: int) -> Any:
    if mode == _BITS32 or mode == _BF16:  # noqa: SIM109 (kept plain for numba)
        b = np.int64(bits[i])
        m = b & 0x7FFFFFFF
        if mode == _BF16:
            m = (m + 0x7FFF + ((m >> 16) & 1)) >> 16
        return -m if b < 0 else m
    if mode == _BITS64:
        b = np.int64(bits[i])
        m = b & np.int64(0x7FFFFFFFFFFFFFFF)
        return -m if b < 0 else m
    x = np.float64(values[i])
    a = abs(x)
    if a < 2.0**min_exp:
        # ldexp, not a / 2.0**(min_exp - fraction): numba evaluates 2.0**-1074 (the float64
        # format's subnormal step) as 0 and the division raised ZeroDivisionError.
        m = np.int64(np.rint(math.ldexp(a, fraction - min_exp)))
    else:
        mantissa, exponent = math.frexp(a)  # a = mantissa * 2**exponent, mantissa in [0.5, 1)
        m = np.int64(exponent - min_exp) * (np.int64(1) << fraction) + np.int64(
            np.rint((2.0 * mantissa - 1.0) * 2.0**fraction)
        )
    return -m if x < 0.0 else m


@numba.njit(inline="always", cache=True)
def _order32(x: Any) -> Any:
    # The ordered key of float32 bits: +m above zero, -m below (so +0 and -0 are both 0).
    # Every step is cast back to int32: numba widens int32 arithmetic to int64, and 64-bit
    # lanes halve the vector width (measured: the whole tile ran 1.6x slower that way).
    s = np.int32(x >> 31)
    m = np.int32(x & _MAGNITUDE)
    return np.int32(np.int32(m ^ s) - s)


@numba.njit(inline="always", cache=True)
def _order_bf16(x: Any) -> Any:
    # float32 bits rounded to nearest-even bfloat16, then ordered as in _order32.
    s = np.int32(x >> 31)
    m = np.int32(x & _MAGNITUDE)
    m = np.int32(np.int32(m + _HALF_BF16 + np.int32((m >> 16) & 1)) >> 16)
    return np.int32(np.int32(m ^ s) - s)


@numba.njit(inline="always", cache=True)
def _step(r: Any, a: Any, kx: Any, ky: Any, dd: Any, rr: Any, top: Any, worst: Any) -> Any:
    d = r - a
    # |kx - ky| < 2**32 for finite values, so the uint32 of the wrapped difference is exact.
    return (
        dd + d * d,
        rr + r * r,
        max(top, _f64_bits(abs(d))),
        max(worst, np.uint32(max(kx, ky) - min(kx, ky))),
    )


# The fast tiles. Only reassociation and contraction are allowed (so the sums vectorise):
# no fast-math flag may assume finite values, because a tile says it holds a NaN or an
# infinity through its sum of squared differences. A NaN or an infinity on either side makes
# d = r - a a NaN or an infinity, so d*d too, and the sum of non-negative terms keeps it;
# finite float32 inputs cannot overflow a float64 sum of squares. Such a tile is measured
# again exactly.
# Two tiles rather than one taking its key function: numba did not cache a function with a
# function argument (seen here), and every cold start would then recompile it (~10 s).
@numba.njit(fastmath={"reassoc", "contract"}, cache=True)
def _tile_f32(ref: Any, act: Any, rbits: Any, abits: Any) -> Any:
    dd, rr, top, worst = 0.0, 0.0, np.int64(0), np.uint32(0)
    for i in range(ref.size):
        kx, ky = _order32(rbits[i]), _order32(abits[i])
        r, a = np.float64(ref[i]), np.float64(act[i])
        dd, rr, top, worst = _step(r, a, kx, ky, dd, rr, top, worst)
    return dd, rr, top, np.uint64(worst)


@numba.njit(fastmath={"reassoc", "contract"}, cache=True)
def _tile_bf16(ref: Any, act: Any, rbits: Any, abits: Any) -> Any:
    dd, rr, top, worst = 0.0, 0.0, np.int64(0), np.uint32(0)
    for i in range(ref.size):
        kx, ky = _order_bf16(rbits[i]), _order_bf16(abits[i])
        r, a = np.float64(ref[i]), np.float64(act[i])
        dd, rr, top, worst = _step(r, a, kx, ky, dd, rr, top, worst)
    return dd, rr, top, np.uint64(worst)


@numba.njit(cache=True)
def _exact(ref, act, rbits, abits, t0, rmode, amode, fraction, min_exp, state):
    # Pair by pair in strict IEEE arithmetic; non-finite pairs are skipped and noted.
    dd = 0.0
    rr = 0.0
    top = 0.0
    worst = np.uint64(0)
    for j in range(ref.size):
        r = np.float64(ref[j])
        a = np.float64(act[j])
        if not math.isfinite(r) or not math.isfinite(a):
            if not math.isfinite(r) and state[1] < 0:
                state[1] = t0 + j
            if not math.isfinite(a) and state[2] < 0:
                state[2] = t0 + j
            continue
        d = r - a
        dd += d * d
        rr += r * r
        top = max(top, abs(d))
        k1 = _key(ref, rbits, j, rmode, fraction, min_exp)
        k2 = _key(act, abits, j, amode, fraction, min_exp)
        # uint64 wrap-around is exact where int64 would overflow (float64 across zero).
        worst = max(worst, np.uint64(max(k1, k2)) - np.uint64(min(k1, k2)))
    return dd, rr, top, worst


@numba.njit(cache=True)
def _first_at(ref: Any, act: Any, top: float) -> int:
    for j in range(ref.size):
        r = np.float64(ref[j])
        a = np.float64(act[j])
        if math.isfinite(r) and math.isfinite(a) and abs(r - a) == top:
            return j
    return 0


@numba.njit(nogil=True, cache=True)
def _blocks(ref, act, rbits, abits, rmode, amode, fraction, min_exp, sums, ints, ulps, b0, b1):
    n = ref.size
    fast = (rmode == _BITS32 or rmode == _BF16) and amode == rmode  # noqa: SIM109
    bf16 = rmode == _BF16
    for b in range(b0, b1):
        start = b * BLOCK
        stop = min(start + BLOCK, n)
        state = np.full(3, -1, np.int64)  # first max index, first bad reference, actual
        state[0] = start
        sum_dd = 0.0
        sum_rr = 0.0
        best = 0.0
        best_tile = -1  # the first tile reaching the block's max |diff|, scanned once at the end
        worst = np.uint64(0)
        for t0 in range(start, stop, _TILE):
            t1 = min(t0 + _TILE, stop)
            r, a, rb, ab = ref[t0:t1], act[t0:t1], rbits[t0:t1], abits[t0:t1]
            bad = True
            if fast:
                if bf16:
                    dd, rr, bits, ulp = _tile_bf16(r, a, rb, ab)
                else:
                    dd, rr, bits, ulp = _tile_f32(r, a, rb, ab)
                top = _bits_f64(bits)
                bad = not math.isfinite(dd)
            if bad:
                dd, rr, top, ulp = _exact(r, a, rb, ab, t0, rmode, amode, fraction, min_exp, state)
            sum_dd += dd
            sum_rr += rr
            worst = max(worst, ulp)
            if top > best:
                best = top
                best_tile = t0
        if best_tile >= 0:
            t1 = min(best_tile + _TILE, stop)
            state[0] = best_tile + _first_at(ref[best_tile:t1], act[best_tile:t1], best)
        sums[b, 0] = sum_dd
        sums[b, 1] = sum_rr
        sums[b, 2] = best
        ints[b, 0] = state[0]
        ints[b, 1] = state[1]
        ints[b, 2] = state[2]
        ulps[b] = worst


def _bits(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    return values.view(np.int32 if values.dtype.itemsize == 4 else np.int64)


@numba.njit(cache=True)
def _serial(ref, act, rbits, abits, rmode, amode, fraction, min_exp):
    # Every block on the calling thread, with the per-block records allocated here: for the
    # small inputs that take one thread, one dispatch instead of four allocations and a
    # call (the fixed cost of a 10^3-element check is mostly that overhead).
    n_blocks = (ref.size + BLOCK - 1) // BLOCK
    sums = np.zeros((n_blocks, 3), np.float64)
    ints = np.zeros((n_blocks, 3), np.int64)
    ulps = np.zeros(n_blocks, np.uint64)
    _blocks(ref, act, rbits, abits, rmode, amode, fraction, min_exp, sums, ints, ulps, 0, n_blocks)
    return sums, ints, ulps


def measure(
    reference: npt.NDArray[Any],
    actual: npt.NDArray[Any],
    fmt: UlpFormat,
    ref_mode: int,
    act_mode: int,
) -> Figures:
    """One parallel pass over two C-contiguous float32/float64 arrays of equal size."""
    count = reference.size
    n_blocks = -(-count // BLOCK)
    threads = 1 if count < 2 * _PER_THREAD else min(_CORES, count // _PER_THREAD, n_blocks)
    if threads == 1:
        sums, ints, ulps = _serial(
            reference,
            actual,
            _bits(reference),
            _bits(actual),
            ref_mode,
            act_mode,
            fmt.fraction,
            fmt.min_exponent,
        )
        return _figures(count, sums, ints, ulps)
    sums = np.zeros((n_blocks, 3), np.float64)
    ints = np.zeros((n_blocks, 3), np.int64)
    ulps = np.zeros(n_blocks, np.uint64)
    args = (
        reference,
        actual,
        _bits(reference),
        _bits(actual),
        ref_mode,
        act_mode,
        fmt.fraction,
        fmt.min_exponent,
        sums,
        ints,
        ulps,
    )
    # Each thread takes a contiguous run of blocks; the kernel releases the GIL.
    edges = [n_blocks * t // threads for t in range(threads + 1)]
    with ThreadPoolExecutor(threads) as pool:
        runs = [pool.submit(_blocks, *args, edges[t], edges[t + 1]) for t in range(threads)]
        for run in runs:
            run.result()
    return _figures(count, sums, ints, ulps)


def _figures(
    count: int, sums: npt.NDArray[Any], ints: npt.NDArray[Any], ulps: npt.NDArray[Any]
) -> Figures:
    """The whole range's figures from its per-block records, combined in block order."""
    if sums.shape[0] == 1:  # one block: nothing to combine (the common small check)
        (dd, rr, top), (index, bad_ref, bad_act) = sums[0].tolist(), ints[0].tolist()
        return Figures(
            count,
            dd,
            rr,
            top,
            index,
            int(ulps[0]),
            None if bad_ref < 0 else bad_ref,
            None if bad_act < 0 else bad_act,
        )
    n_blocks = sums.shape[0]
    max_abs, max_abs_index = 0.0, 0
    for b in range(n_blocks):  # block order: the first of equal maxima wins
        if sums[b, 2] > max_abs:
            max_abs, max_abs_index = float(sums[b, 2]), int(ints[b, 0])
    bad_ref = ints[:, 1][ints[:, 1] >= 0]
    bad_act = ints[:, 2][ints[:, 2] >= 0]
    return Figures(
        count,
        math.fsum(sums[:, 0].tolist()),
        math.fsum(sums[:, 1].tolist()),
        max_abs,
        max_abs_index,
        int(ulps.max()),
        int(bad_ref[0]) if bad_ref.size else None,
        int(bad_act[0]) if bad_act.size else None,
    )
