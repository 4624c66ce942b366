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
error-free transformations instead (:mod:`diffcheck.differ.device_mlx`): max |diff|, its
index, the first non-finite indices and ``max_ulp`` exact, the sums to ~1e-13 relative.
Where a verdict would print those sums (an NMSE failure) or NMSE lies within 1e-9 of the
tolerance, the host differ measures the exact host copy and decides, so verdicts and
reasons are the host's.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._measure import Figures, UlpFormat, _first_bad, ulp_format
from .device_mlx import MLX_BLOCK, diff_mlx, is_mlx
from .judge import _check_sizes, _check_tolerance, _judge, around, compare_outputs, host_array
from .verdict import DeviceDiff, Verdict, _Failure

__all__ = ["CHUNK", "MLX_BLOCK", "DeviceDiff", "diff_on_device", "on_device"]

#: Elements per on-device chunk: about a dozen float64 temporaries of this size are alive.
CHUNK: Final = 1 << 24


def on_device(array: Any) -> bool:
    """Whether ``array`` lives off the host (a GPU tensor), so measuring it there pays."""
    if is_mlx(array):
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

        side = torch.cuda.Stream(device=actual.device)  # type: ignore[no-untyped-call,unused-ignore]
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
    if is_mlx(actual):
        return diff_mlx(reference, actual, max_nmse, fmt, chunk, host_copy)
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
        _check_sizes(ref, int(flat.shape[0]), lambda: _first_bad(ref))
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
