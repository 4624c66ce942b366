"""On-device comparison: the differ's verdict computed where the candidate's output lives.

When an output lives on a GPU (torch CUDA, CuPy, any array-api-compat namespace with
float64), copying it to the host and measuring it there costs far more than the comparison.
:func:`diff_on_device` instead moves the (host) reference over once, measures with the
array's own namespace in chunks of :data:`CHUNK` elements (float64 accumulation, so the
figures equal the host differ's to ~1e-12 relative), and brings back a few numbers per chunk
in one transfer. The report still needs the exact bits of the output, so the output is
copied to the host once as well, on a side stream in a worker thread (torch CUDA, CuPy), so
the copy overlaps the on-device reduction.

The verdict follows the host differ's rules and messages exactly (:func:`diffcheck.differ.
compare_outputs`). ULP keys are computed arithmetically (``floor(log2 |x|)`` with an exact
correction, then round-half-even of the scaled fraction), which equals the host's bit-level
keys for every finite value; for float64 storage a pair straddling zero whose distance
exceeds 2**53 ulp is counted in float64 (relative error below 1e-15). A device without
float64 (``array_api_strict:no_float64``) is not measured in rounded float32: the output is
brought to the host once and the host differ decides, and ``where`` says so.

MLX arrays (no float64 on Metal or CUDA) are measured on MLX's default device with float32
error-free transformations instead (see the MLX section below): max |diff|, its index, the
first non-finite indices and ``max_ulp`` exact, the sums to ~1e-13 relative. Where a verdict
would print those sums (an NMSE failure) or NMSE lies within 1e-9 of the tolerance, the host
differ measures the exact host copy and decides, so verdicts and reasons are the host's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._measure import Figures, UlpFormat, ulp_format
from .differ import (
    Verdict,
    _check_sizes,
    _check_tolerance,
    _Failure,
    _judge,
    around,
    compare_outputs,
    host_array,
)

__all__ = ["CHUNK", "MLX_BLOCK", "DeviceDiff", "diff_on_device", "on_device"]

#: Elements per on-device chunk: about a dozen float64 temporaries of this size are alive.
CHUNK: Final = 1 << 24


@dataclass(frozen=True)
class DeviceDiff:
    """The verdict, the output's exact host copy (flat float32, or None when not asked for),
    and where it was measured."""

    verdict: Verdict
    actual: npt.NDArray[np.float32] | None
    where: str


def on_device(array: Any) -> bool:
    """Whether ``array`` lives off the host (a GPU tensor), so measuring it there pays."""
    if _is_mlx(array):
        # MLX's memory is host-visible (unified on Apple silicon, managed on CUDA): the host
        # differ reads it with no transfer of the reference, which measured faster on an
        # H200 (136 against 241 ms at 1e8 float32). diff_on_device still takes MLX arrays.
        return False
    device = getattr(array, "device", None)
    if device is None or isinstance(array, np.ndarray):
        return False
    kind = getattr(device, "type", None)  # torch
    if kind is not None:
        return str(kind) != "cpu"
    if type(array).__module__.startswith("cupy"):
        return True
    return "gpu" in str(device).lower() or "cuda" in str(device).lower()


def _namespace(array: Any) -> Any:
    from array_api_compat import array_namespace

    return array_namespace(array)


def _device(array: Any) -> Any:
    from array_api_compat import device

    return device(array)


def _to_numpy(array: Any) -> npt.NDArray[Any]:
    from array_api_compat import to_device

    try:
        return host_array(array)
    except (TypeError, RuntimeError, ValueError, BufferError):
        return host_array(to_device(array, "cpu"))


def _host_copy(xp: Any, actual: Any) -> Future[npt.NDArray[np.float32]]:
    """Start the float32 host copy of ``actual`` (exact widening on the device first)."""
    pool = ThreadPoolExecutor(max_workers=1)
    module = type(actual).__module__
    if module.startswith("torch") and actual.device.type == "cuda":
        import torch

        side = torch.cuda.Stream(device=actual.device)  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream(actual.device))

        def copy_torch() -> npt.NDArray[np.float32]:
            # Into page-locked memory from torch's caching host allocator: measured on an
            # H200 at 1e8 float32, 7 ms against 226 ms for .cpu() into fresh pageable memory.
            # The array keeps its tensor alive; the block returns to the cache after it.
            host = torch.empty(actual.shape, dtype=torch.float32, pin_memory=True)
            with torch.cuda.stream(side):
                host.copy_(actual, non_blocking=True)
            side.synchronize()
            return np.asarray(host.numpy(), np.float32).reshape(-1)

        future = pool.submit(copy_torch)
    elif module.startswith("cupy"):
        import cupy
        import cupyx

        side = cupy.cuda.Stream(non_blocking=True)
        side.wait_event(cupy.cuda.get_current_stream().record())

        def copy_cupy() -> npt.NDArray[np.float32]:
            host = cupyx.empty_pinned(actual.shape, dtype=np.float32)  # cupy's pinned pool
            with side:
                actual.astype(cupy.float32, copy=False).get(stream=side, out=host)
            side.synchronize()
            return np.asarray(host, np.float32).reshape(-1)

        future = pool.submit(copy_cupy)
    else:
        future = pool.submit(
            lambda: np.asarray(_to_numpy(xp.astype(actual, xp.float32)), np.float32).reshape(-1)
        )
    pool.shutdown(wait=False)
    return future


def _has_float64(xp: Any, device: Any) -> bool:
    try:
        xp.asarray([1.0], dtype=xp.float64, device=device)
    except Exception:  # any refusal means no float64 on this device
        return False
    return True


def _keys(xp: Any, x: Any, fmt: UlpFormat) -> Any:
    """Ordered ULP keys (int64) of finite float64 ``x`` in ``fmt``: see the module docstring."""
    f64 = xp.float64
    one = xp.asarray(1.0, dtype=f64, device=_device(x))
    two = one + one
    a = xp.abs(x)
    positive = xp.where(a > 0, a, one)
    e = xp.floor(xp.log2(positive))
    scale = xp.pow(two, e)  # exact: a power of two
    e = xp.where(positive < scale, e - 1, e)  # log2 may round across a power of two
    scale = xp.pow(two, e)
    e = xp.where(positive >= scale * 2, e + 1, e)
    scale = xp.pow(two, e)
    fraction = xp.round((positive / scale - 1) * float(2**fmt.fraction))
    normal = xp.astype(e - float(fmt.min_exponent - 1), xp.int64) * (1 << fmt.fraction)
    normal = normal + xp.astype(fraction, xp.int64)
    small = a < 2.0**fmt.min_exponent
    tiny_values = xp.where(small, a, xp.zeros_like(a))  # no overflow for the float64 format
    tiny = xp.astype(xp.round(tiny_values / 2.0 ** (fmt.min_exponent - fmt.fraction)), xp.int64)
    magnitude = xp.where(small, tiny, normal)
    return xp.where(x < 0, -magnitude, magnitude)


def _chunk_figures(xp: Any, r: Any, a: Any, fmt: UlpFormat, offset: int) -> tuple[Any, Any]:
    """Device arrays of one chunk's figures: floats [dd, rr, max, cross-ulp], ints [...]."""
    f64 = xp.float64
    zero = xp.asarray(0.0, dtype=f64, device=_device(r))
    rw, aw = xp.astype(r, f64), xp.astype(a, f64)
    good_r, good_a = xp.isfinite(rw), xp.isfinite(aw)
    rw, aw = xp.where(good_r, rw, zero), xp.where(good_a, aw, zero)
    d = rw - aw
    gap = xp.abs(d)
    k1, k2 = _keys(xp, rw, fmt), _keys(xp, aw, fmt)
    same = (k1 >= 0) == (k2 >= 0)
    within = xp.where(same, xp.abs(k1 - k2), xp.zeros_like(k1))
    cross = xp.where(same, zero, xp.astype(xp.abs(k1), f64) + xp.astype(xp.abs(k2), f64))
    floats = xp.stack([xp.sum(d * d), xp.sum(rw * rw), xp.max(gap), xp.max(cross)])
    first = xp.argmax(gap)
    bad_r = xp.astype(xp.logical_not(good_r), xp.int8)
    bad_a = xp.astype(xp.logical_not(good_a), xp.int8)
    ints = xp.stack(
        [
            xp.astype(first, xp.int64) + offset,
            xp.max(within),
            xp.astype(xp.max(bad_r), xp.int64),
            xp.astype(xp.argmax(bad_r), xp.int64) + offset,
            xp.astype(xp.max(bad_a), xp.int64),
            xp.astype(xp.argmax(bad_a), xp.int64) + offset,
        ]
    )
    return floats, ints


def _measure(xp: Any, reference: Any, actual: Any, fmt: UlpFormat, chunk: int) -> Figures:
    count = int(reference.shape[0])
    floats, ints = [], []
    for start in range(0, count, chunk):
        stop = min(start + chunk, count)
        f, i = _chunk_figures(xp, reference[start:stop], actual[start:stop], fmt, start)
        floats.append(f)
        ints.append(i)
    # One transfer brings every chunk's figures back.
    host_f = _to_numpy(xp.stack(floats)).astype(np.float64).reshape(-1, 4)
    host_i = _to_numpy(xp.stack(ints)).astype(np.int64).reshape(-1, 6)
    max_abs, max_abs_index = 0.0, 0
    for row_f, row_i in zip(host_f, host_i, strict=True):  # chunk order: first maximum wins
        if row_f[2] > max_abs:
            max_abs, max_abs_index = float(row_f[2]), int(row_i[0])
    cross = float(host_f[:, 3].max())
    bad_r = [int(row[3]) for row in host_i if row[2]]
    bad_a = [int(row[5]) for row in host_i if row[4]]
    return Figures(
        count,
        math.fsum(host_f[:, 0].tolist()),
        math.fsum(host_f[:, 1].tolist()),
        max_abs,
        max_abs_index,
        max(int(host_i[:, 1].max()), int(cross)),
        bad_r[0] if bad_r else None,
        bad_a[0] if bad_a else None,
    )


def diff_on_device(
    reference: Any,
    actual: Any,
    *,
    max_nmse: float,
    ulp_dtype: Any = None,
    chunk: int = CHUNK,
    host_copy: bool = True,
) -> DeviceDiff:
    """Compare a device output with a host reference on the output's device.

    Parameters
    ----------
    reference
        The trusted output on the host (any array :func:`~diffcheck.differ.host_array`
        accepts); compared flat.
    actual
        The candidate's output, an array of an array-api-compat namespace on its device.
    max_nmse
        The tolerance; the verdict passes only when NMSE is strictly below it.
    ulp_dtype
        The storage format ``max_ulp`` counts in; None means the output's own dtype.
    chunk
        Elements measured per on-device step (bounds the device's extra memory).
    host_copy
        Whether to bring the output's exact values to the host (a report needs them; a
        verdict alone does not). The copy overlaps the on-device measurement.

    Returns
    -------
    DeviceDiff
        The verdict (equal to :func:`~diffcheck.differ.compare_outputs` on the same values),
        the exact float32 host copy of ``actual`` for the report, and ``where``.
    """
    dtype_name = str(actual.dtype).rsplit(".", 1)[-1]
    fmt = ulp_format(ulp_dtype if ulp_dtype is not None else _default_name(dtype_name))
    if _is_mlx(actual):
        return _diff_mlx(reference, actual, max_nmse, fmt, chunk, host_copy)
    xp = _namespace(actual)
    device = _device(actual)
    if not _has_float64(xp, device):
        host = _host_copy(xp, actual).result()
        verdict = compare_outputs(reference, host, max_nmse, ulp_dtype=fmt)
        return DeviceDiff(verdict, host, "host (no float64 on the device)")
    copying = _host_copy(xp, actual) if host_copy else None
    ref = host_array(reference).reshape(-1)
    flat = xp.reshape(actual, (-1,))

    def read(part: slice) -> npt.NDArray[Any]:
        # Widened on the device first: NumPy cannot take a bfloat16 tensor (exact for halves).
        return _to_numpy(xp.astype(flat[part], xp.float32))

    try:
        _check_tolerance(max_nmse)
        _check_sizes(ref, int(flat.shape[0]), lambda: _first_bad_host(ref))
        on_dev = xp.asarray(np.ascontiguousarray(ref), device=device)  # the one copy over
        figures = _measure(xp, on_dev, flat, fmt, chunk)
        metrics = _judge(figures, max_nmse)
        shown = around(metrics, None, ref.size, ref.__getitem__, read)
        verdict = Verdict("passed", None, metrics, max_nmse, around=shown)
    except _Failure as failure:
        shown = around(failure.metrics, failure.at, ref.size, ref.__getitem__, read)
        verdict = Verdict("failed", failure.reason, failure.metrics, max_nmse, around=shown)
    return DeviceDiff(verdict, copying.result() if copying else None, f"device ({device})")


def _default_name(dtype_name: str) -> str:
    return dtype_name if dtype_name in ("float16", "bfloat16", "float32", "float64") else "f32"


def _first_bad_host(values: npt.NDArray[Any]) -> int | None:
    from ._measure import _first_bad

    return _first_bad(values)


# --- MLX: no float64 on the GPU, so the figures are computed exactly in float32 -------------
#
# Every figure is computed from error-free transformations, never from rounded float32 sums:
# - the difference r - a is exactly s + e (TwoSum: s = fl(r - a), e its rounding error);
#   ordering pairs by (|s|, e) is the order of |r - a|, so max |diff| and its first index are
#   exact, and s + e read in float64 on the host is the host's float64 difference;
# - squares are split by bit masks (12 high significand bits and the rest), so each partial
#   product is exact in float32; after one power-of-two scaling of the whole chunk (exact),
#   the squares are summed as float32 pairs (double-word arithmetic, ~48 bits) in blocks of
#   MLX_BLOCK elements, level by level. Only the block partials (~2.5e4 pairs at 1e8
#   elements) come to the host, where they are summed in float64 with math.fsum: relative
#   error below about 1e-13 (12 levels of ~2**-47 each; the tests hold it to 1e-12);
# - ULP keys are integer operations on the float32 bits (float32, bfloat16 and float16
#   formats, the host differ's rounding exactly); first non-finite indices are integer minima.
# The figures are exact where no float32 difference overflows and either the device keeps
# subnormal numbers (probed once per device) or no nonzero input lies below 2**-102;
# otherwise, or for a float64 ULP format, the host differ measures the exact host copy, and
# ``where`` says so.

#: Elements per block of the double-word tree sum on MLX (partials coming back: n / block).
MLX_BLOCK: Final = 1 << 12
_MLX_FORMATS: Final = ("float32", "bfloat16", "float16")
_ftz_probed: dict[str, bool] = {}


def _is_mlx(array: Any) -> bool:
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


def _diff_mlx(
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
        _check_sizes(ref, int(flat.shape[0]), lambda: _first_bad_host(ref))
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
