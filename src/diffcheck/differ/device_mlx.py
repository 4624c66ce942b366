"""On-device comparison of MLX arrays: no float64 on the GPU, so exact float32 arithmetic.

The MLX path of :func:`diffcheck.differ.diff_on_device` (whose module says when it is taken).

Every figure is computed from error-free transformations, never from rounded float32 sums:
- the difference r - a is exactly s + e (TwoSum: s = fl(r - a), e its rounding error);
  ordering pairs by (|s|, e) is the order of |r - a|, so max |diff| and its first index are
  exact, and s + e read in float64 on the host is the host's float64 difference;
- squares are split by bit masks (12 high significand bits and the rest), so each partial
  product is exact in float32; after one power-of-two scaling of the whole chunk (exact),
  the squares are summed as float32 pairs (double-word arithmetic, ~48 bits) in blocks of
  MLX_BLOCK elements, level by level. Only the block partials (~2.5e4 pairs at 1e8
  elements) come to the host, where they are summed in float64 with math.fsum: relative
  error below about 1e-13 (12 levels of ~2**-47 each; the tests hold it to 1e-12);
- ULP keys are integer operations on the float32 bits (float32, bfloat16 and float16
  formats, the host differ's rounding exactly); first non-finite indices are integer minima.
The figures are exact where no float32 difference overflows and either the device keeps
subnormal numbers (probed once per device) or no nonzero input lies below 2**-102;
otherwise, or for a float64 ULP format, the host differ measures the exact host copy, and
``where`` says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._measure import Figures, UlpFormat, _first_bad
from .judge import _check_sizes, _check_tolerance, _judge, around, compare_outputs, host_array
from .verdict import DeviceDiff, Verdict, _Failure

__all__ = ["MLX_BLOCK", "diff_mlx", "is_mlx"]

#: Elements per block of the double-word tree sum on MLX (partials coming back: n / block).
MLX_BLOCK: Final = 1 << 12
_MLX_FORMATS: Final = ("float32", "bfloat16", "float16")
_ftz_probed: dict[str, bool] = {}


def is_mlx(array: Any) -> bool:
    return type(array).__module__.startswith("mlx")


def _mlx_keeps_subnormals(mx: Any) -> bool:
    """Whether MLX's default device computes with subnormal float32 values (no flush to zero)."""
    key = str(mx.default_device())
    if key not in _ftz_probed:
        tiny = mx.array(np.array([2.0**-140, 2.0**-125], np.float32))
        half = mx.array(np.array([0.5, 1.5 * 2.0**-126], np.float32))
        got = np.array(mx.stack([tiny[0] * half[0], tiny[1] - half[1]]), np.float32)
        want = np.array([2.0**-141, 2.0**-125 - 1.5 * 2.0**-126], np.float32)
        _ftz_probed[key] = bool(np.array_equal(got.view(np.uint32), want.view(np.uint32)))
    return _ftz_probed[key]


def _mlx_two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


def _mlx_power(mx: Any, k: Any) -> Any:
    """2**k as float32 for an int32 ``k`` in [-126, 127] (built from its bits)."""
    return mx.view(mx.left_shift(k + 127, 23).astype(mx.int32), mx.float32)


def _mlx_scaled(mx: Any, x: Any, top: Any) -> tuple[Any, Any, Any]:
    """Multipliers taking ``top`` (>= 0, the chunk's largest |x|) into [1, 2): two exact
    powers of two, and the exponent k of their product (x * f1 * f2 = x * 2**k)."""
    biased = mx.right_shift(mx.view(top, mx.int32), 23) & 0xFF
    k = mx.array(127, mx.int32) - biased  # a zero top gives 127: harmless, nothing to scale
    k1 = mx.right_shift(k, 1)
    k2 = k - k1
    return _mlx_power(mx, k1), _mlx_power(mx, k2), k


def _mlx_square_pair(mx: Any, x: Any, e: Any) -> tuple[Any, Any]:
    """(x + e)**2 as a float32 pair hi + lo, for 0 <= x < 2 and |e| <= ulp(x) / 2."""
    high = mx.view(mx.view(x, mx.uint32) & 0xFFFFF000, mx.float32)
    low = x - high  # exact: the bits the mask removed
    p1 = high * high  # exact: 12 x 12 significand bits
    p2 = (high * low) * 2.0  # exact
    hi, lo = _mlx_two_sum(p1, p2)
    return hi, lo + (low * low + (x * e) * 2.0)


def _mlx_tree_sum(mx: Any, hi: Any, lo: Any, block: int) -> tuple[Any, Any]:
    """Double-word sums of consecutive blocks of ``block`` (a power of two) elements."""
    count = int(hi.shape[0])
    pad = (-count) % block
    if pad:
        zeros = mx.zeros((pad,), dtype=mx.float32)
        hi, lo = mx.concatenate([hi, zeros]), mx.concatenate([lo, zeros])
    hi, lo = hi.reshape(-1, block), lo.reshape(-1, block)
    width = block
    while width > 1:
        width //= 2
        s, t = _mlx_two_sum(hi[:, :width], hi[:, width:])
        t = t + (lo[:, :width] + lo[:, width:])
        hi = s + t
        lo = t - (hi - s)
    return hi.reshape(-1), lo.reshape(-1)


def _mlx_keys(mx: Any, x: Any, fmt: UlpFormat) -> Any:
    """The host differ's ordered ULP keys (int32) of finite float32 ``x`` in ``fmt``."""
    bits = mx.view(x, mx.int32)
    small = bits & 0x7FFFFFFF
    if fmt.name == "bfloat16":  # round to nearest even on the upper 16 bits
        small = mx.right_shift(small + 0x7FFF + (mx.right_shift(small, 16) & 1), 16)
    elif fmt.name == "float16":
        normal = small - (112 << 23)  # rebias: 2**-14 (float16's smallest normal) -> 1 << 23
        normal = mx.right_shift(normal + 0xFFF + (mx.right_shift(normal, 13) & 1), 13)
        scaled = mx.abs(x) * float(2.0**24)  # exact; below 2**10, so the magic sum rounds
        magic = float(2.0**23)
        tiny = ((scaled + magic) - magic).astype(mx.int32)  # round half to even
        small = mx.where(small < (113 << 23), tiny, normal)
    return mx.where(bits < 0, -small, small)


def _mlx_chunk(mx: Any, r: Any, a: Any, fmt: UlpFormat, block: int, flushes: bool) -> list[Any]:
    """One chunk's device figures: [s_max, e_max], the integers, the block pairs, max ULP.

    On a device that ``flushes`` subnormal results to zero, the integers also say whether any
    nonzero input lies below 2**-102: above it, every difference and rounding error is a
    multiple of 2**-125, so nothing exact is ever subnormal (tiny scaled squares may flush,
    but they weigh below 2**-200 of the largest)."""
    count = int(r.shape[0])
    good_r, good_a = mx.isfinite(r), mx.isfinite(a)
    good = good_r & good_a
    zero = mx.array(0.0, mx.float32)
    r0, a0 = mx.where(good, r, zero), mx.where(good, a, zero)
    s, e = _mlx_two_sum(r0, -a0)
    negative = s < 0
    s, e = mx.where(negative, -s, s), mx.where(negative, -e, e)
    s_max = mx.max(s)
    top = s == s_max
    e_max = mx.max(mx.where(top, e, mx.array(-np.inf, mx.float32)))
    index = mx.arange(count, dtype=mx.int32)
    missing = mx.array(count, mx.int32)
    first_max = mx.min(mx.where(top & (e == e_max), index, missing))
    bad_r = mx.min(mx.where(good_r, missing, index))
    bad_a = mx.min(mx.where(good_a, missing, index))
    overflow = mx.any(mx.isinf(s)).astype(mx.int32)  # finite pairs whose difference overflows
    k1, k2 = _mlx_keys(mx, r0, fmt), _mlx_keys(mx, a0, fmt)
    high = mx.view(mx.maximum(k1, k2), mx.uint32)
    low = mx.view(mx.minimum(k1, k2), mx.uint32)
    max_ulp = mx.max(high - low)  # unsigned wrap-around: exactly |k1 - k2|
    f1, f2, k_d = _mlx_scaled(mx, s, s_max)
    d_hi, d_lo = _mlx_square_pair(mx, (s * f1) * f2, (e * f1) * f2)
    abs_r = mx.abs(r0)
    g1, g2, k_r = _mlx_scaled(mx, abs_r, mx.max(abs_r))
    r_hi, r_lo = _mlx_square_pair(mx, (abs_r * g1) * g2, mx.zeros_like(abs_r))
    d_hi, d_lo = _mlx_tree_sum(mx, d_hi, d_lo, block)
    r_hi, r_lo = _mlx_tree_sum(mx, r_hi, r_lo, block)
    if flushes:
        magnitudes = mx.concatenate([mx.view(r0, mx.int32), mx.view(a0, mx.int32)]) & 0x7FFFFFFF
        tiny = mx.any((magnitudes != 0) & (magnitudes < (25 << 23))).astype(mx.int32)
    else:
        tiny = mx.array(0, mx.int32)
    ints = mx.stack([first_max, bad_r, bad_a, overflow, k_d, k_r, tiny])
    return [mx.stack([s_max, e_max]), ints, mx.stack([d_hi, d_lo, r_hi, r_lo]), max_ulp]


def _mlx_measure(
    mx: Any,
    reference: Any,
    actual: Any,
    fmt: UlpFormat,
    chunk: int,
    block: int,
    during: Callable[[], object],
) -> tuple[Figures | None, str]:
    """Figures measured on MLX's default device, or None (and why) where they are not exact.

    ``during`` runs while the device computes (the host copy of the output)."""
    if fmt.name not in _MLX_FORMATS:
        return None, f"ULPs in {fmt.name} need integers wider than the device's int32 keys"
    flushes = not _mlx_keeps_subnormals(mx)
    count = int(reference.shape[0])
    chunk = max(block, chunk - chunk % block)
    results: list[tuple[int, list[Any]]] = []
    for start in range(0, count, chunk):
        stop = min(start + chunk, count)
        parts = _mlx_chunk(mx, reference[start:stop], actual[start:stop], fmt, block, flushes)
        results.append((start, parts))
    graph = [parts for _, parts in results]
    mx.async_eval(graph)  # the device works while ``during`` copies the output to the host
    during()
    mx.eval(graph)
    sum_d: list[float] = []
    sum_r: list[float] = []
    best: tuple[float, float] = (-1.0, 0.0)
    max_abs, max_abs_index, max_ulp_all = 0.0, 0, 0
    first_bad_r: int | None = None
    first_bad_a: int | None = None
    for start, (extremes, ints, pairs, ulp) in results:
        s_max, e_max = (float(v) for v in np.array(extremes, np.float32).astype(np.float64))
        first, bad_r, bad_a, overflow, k_d, k_r, tiny = (int(v) for v in np.array(ints, np.int64))
        size = min(chunk, count - start)
        if overflow:
            return None, "a float32 difference overflows"
        if tiny:
            return None, "the device flushes subnormals and an input lies below 2**-102"
        if (s_max, e_max) > best:  # chunk order, strictly greater: the first maximum wins
            best = (s_max, e_max)
            max_abs, max_abs_index = s_max + e_max, start + first
        if first_bad_r is None and bad_r < size:
            first_bad_r = start + bad_r
        if first_bad_a is None and bad_a < size:
            first_bad_a = start + bad_a
        max_ulp_all = max(max_ulp_all, int(np.array(ulp, np.uint32)))
        host = np.array(pairs, np.float32).astype(np.float64)
        sum_d.append(math.ldexp(math.fsum(host[0].tolist() + host[1].tolist()), -2 * k_d))
        sum_r.append(math.ldexp(math.fsum(host[2].tolist() + host[3].tolist()), -2 * k_r))
    figures = Figures(
        count,
        math.fsum(sum_d),
        math.fsum(sum_r),
        max_abs,
        max_abs_index,
        max_ulp_all,
        first_bad_r,
        first_bad_a,
    )
    return figures, ""


def diff_mlx(
    reference: Any, actual: Any, max_nmse: float, fmt: UlpFormat, chunk: int, host_copy: bool
) -> DeviceDiff:
    """:func:`diff_on_device` for an MLX array, on MLX's default device (see above)."""
    import mlx.core as mx

    device = mx.default_device()
    ref = host_array(reference).reshape(-1)
    flat = actual.reshape(-1).astype(mx.float32)  # exact widening of float16 and bfloat16

    def read(part: slice) -> npt.NDArray[Any]:
        return np.array(flat[part], np.float32)

    copied: list[npt.NDArray[np.float32]] = []

    def copy() -> None:
        if not copied:
            copied.append(np.array(flat, np.float32, copy=True).reshape(-1))

    why = ""
    try:
        _check_tolerance(max_nmse)
        _check_sizes(ref, int(flat.shape[0]), lambda: _first_bad(ref))
        if ref.dtype != np.float32:
            why = f"a {ref.dtype} reference is not exact in float32"
            figures = None
        else:
            on_dev = mx.array(np.ascontiguousarray(ref))  # the one copy over
            during = copy if host_copy else (lambda: None)
            figures, why = _mlx_measure(mx, on_dev, flat, fmt, chunk, MLX_BLOCK, during)
        if figures is None:
            copy()
            verdict = compare_outputs(reference, copied[0], max_nmse, ulp_dtype=fmt)
            return DeviceDiff(verdict, copied[0], f"host (MLX on {device}: {why})")
        metrics = _judge(figures, max_nmse)
        if metrics.nmse >= max_nmse * (1 - _UNDECIDED):
            copy()  # too close to the tolerance for sums exact to ~1e-13: the host decides
            verdict = compare_outputs(reference, copied[0], max_nmse, ulp_dtype=fmt)
            where = f"device ({device}, float32 error-free sums); {_NEAR}"
            return DeviceDiff(verdict, copied[0], where)
        shown = around(metrics, None, ref.size, ref.__getitem__, read)
        verdict = Verdict("passed", None, metrics, max_nmse, around=shown)
    except _Failure as failure:
        if failure.metrics is not None:
            # The reason prints the figures: the host differ's own, to the last digit.
            copy()
            verdict = compare_outputs(reference, copied[0], max_nmse, ulp_dtype=fmt)
            where = f"device ({device}, float32 error-free sums); {_FIGURES}"
            return DeviceDiff(verdict, copied[0], where)
        shown = around(failure.metrics, failure.at, ref.size, ref.__getitem__, read)
        verdict = Verdict("failed", failure.reason, failure.metrics, max_nmse, around=shown)
    if host_copy:
        copy()
    where = f"device ({device}, float32 error-free sums)"
    return DeviceDiff(verdict, copied[0] if host_copy else None, where)


#: Relative distance from the tolerance within which the host differ decides an MLX verdict.
_UNDECIDED: Final = 1e-9
_NEAR: Final = "NMSE within 1e-9 of the tolerance: decided by the host differ on the host copy"
_FIGURES: Final = "failed: its figures printed by the host differ from the host copy"
