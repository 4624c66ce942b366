"""The differ's measurement core: every figure of a verdict in one pass over both arrays.

One pass reads each element of both arrays once and yields, for the whole range: the sums of
squared differences and of the squared reference (float64 accumulation), max |diff| and its
first index, the max ULP distance in a chosen storage format, and the first non-finite index
of each array. The pass runs in fixed blocks of :data:`BLOCK` elements whose partial figures
are combined in block order (sums with :func:`math.fsum`), so the result does not depend on
the number of threads, and the extra memory is a few small per-block records.

Why numba (measured with ``bench/differ_throughput.py``): NumPy in cache-sized chunks needs a
widening copy, a subtraction, two dot products, an ``abs``, an ``argmax`` and several integer
passes for the ULP keys per chunk, and runs on one core: 0.5 s at 10^7 float32 on a loaded
2-core box, against a 9 ms read floor. A numba kernel does all of it per element in
registers, vectorised, on every core (blocks split over threads that release the GIL), and
reads at the floor or faster: 5.6 ms at 10^7 and 16.7 ms at 10^8 on 16 cores, against
floors of 8.7 and 98 ms. A compiled C extension would do the same but needs a wheel per
platform; numba ships wheels wherever NumPy does and compiles lazily. Its costs are paid
once per process: importing numba and loading the cache (about 0.5 s and 110 MB of memory
here), and once per machine: compiling (about 10 s, more on a loaded machine), cached on disk
(numba's cache: next to the module when writable, else the user cache directory, or
``NUMBA_CACHE_DIR``). Where numba is missing or fails, the NumPy path gives the same figures
(sums to rounding). ``DIFFCHECK_DIFFER=numpy`` forces the NumPy path.

Which path a comparison takes: arrays of at least :data:`KERNEL_MIN` elements always take
the kernel. Smaller ones take it once the process has loaded it; before that, they take the
NumPy path until it has spent :data:`LOAD_AFTER_SECONDS` on them, the kernel's load cost,
and then load it (the ski-rental rule: a process never spends more than about twice what the
better choice in hindsight would have cost). So a one-off check of 10^3 elements starts in
0.3 s rather than 1.3 s, and a long run of small checks (a test session, a search, a warm
sweep worker) gets the kernel's fixed cost: at 10^3 and 10^5 float32 elements the NumPy path
spends about 50 us and 3 ms per call, one kernel call 4 us and 0.1 ms.

ULPs are counted in a storage format (see :func:`ulp_format`): each value is rounded to
nearest-even into that format and mapped to an ordered integer, ``+k`` for the k-th
representable magnitude above zero and ``-k`` below, so ``+0`` and ``-0`` are both 0 and a
pair that straddles zero counts the representable values on both sides (the smallest
positive and the smallest negative subnormal are 2 ulp apart). Values beyond the format's
largest finite value keep counting past it as if the exponent range went on.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "BLOCK",
    "KERNEL_MIN",
    "LOAD_AFTER_SECONDS",
    "Figures",
    "UlpFormat",
    "load_kernel",
    "measure",
    "ulp_format",
]

BLOCK: Final = 1 << 16  # elements per block: float64 scratch of the NumPy path stays in L2
KERNEL_MIN: Final = 1 << 18  # from this size on, always the numba kernel (the docstring says why)
#: NumPy-path time on small inputs after which a process loads the kernel for them too.
LOAD_AFTER_SECONDS: Final = 0.5

# Key modes: how an array's values become ordered ULP keys.
_BITS32, _BITS64, _BF16, _ARITH = 0, 1, 2, 3


@dataclass(frozen=True)
class UlpFormat:
    """A binary floating-point storage format: ``fraction`` bits and normal ``min_exponent``."""

    name: str
    fraction: int
    min_exponent: int


_FORMATS: Final = {
    "float16": UlpFormat("float16", 10, -14),
    "bfloat16": UlpFormat("bfloat16", 7, -126),
    "float32": UlpFormat("float32", 23, -126),
    "float64": UlpFormat("float64", 52, -1022),
}
_ALIASES: Final = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def ulp_format(storage: Any) -> UlpFormat:
    """The ULP format named by ``storage``: ``"f16"``, ``"bf16"``, ``"f32"``, ``"f64"``, the
    long names, or a dtype (NumPy's, ``ml_dtypes.bfloat16``, or any with such a ``name``)."""
    if isinstance(storage, UlpFormat):
        return storage
    name = storage if isinstance(storage, str) else getattr(storage, "name", None)
    if name is None:
        try:
            name = np.dtype(storage).name
        except TypeError:
            name = str(storage)
    name = _ALIASES.get(name, name)
    if name not in _FORMATS:
        raise ValueError(
            f"ulp_dtype {storage!r} is not a floating storage format; "
            "use one of f16, bf16, f32, f64 (or their dtypes)"
        )
    return _FORMATS[name]


#: NumPy's own floating dtypes, looked up by dtype (``dtype.name`` costs microseconds, which
#: is most of a small check's budget).
_FORMAT_OF_DTYPE: Final = {
    np.dtype(name): fmt for name, fmt in _FORMATS.items() if name != "bfloat16"
}


def default_ulp_format(actual: npt.NDArray[Any]) -> UlpFormat:
    """The actual output's own floating format, or float32 for anything else."""
    fmt = _FORMAT_OF_DTYPE.get(actual.dtype)
    if fmt is not None:
        return fmt
    name = actual.dtype.name  # bfloat16 and other extension dtypes
    return _FORMATS[name] if name in _FORMATS else _FORMATS["float32"]


class Figures(NamedTuple):
    """Everything one pass measures over a range (sums, not yet means).

    A named tuple rather than a frozen dataclass: it is built on every comparison, and a
    frozen dataclass's ``__init__`` costs a microsecond more than a small check can spare.
    """

    elements: int
    sum_sq_diff: float
    sum_sq_ref: float
    max_abs: float
    max_abs_index: int
    max_ulp: int
    #: First non-finite index of each array, or None. Finite-only figures skip such pairs.
    first_bad_reference: int | None
    first_bad_actual: int | None


_F32: Final = np.dtype(np.float32)
_F64: Final = np.dtype(np.float64)
#: The (dtype, format) pairs whose keys come from the stored bits; the rest are arithmetic.
_BIT_MODES: Final = {
    (_F32, "float32"): _BITS32,
    (_F64, "float64"): _BITS64,
    (_F32, "bfloat16"): _BF16,
}


def _mode(dtype: np.dtype[Any], fmt: UlpFormat) -> int:
    return _BIT_MODES.get((dtype, fmt.name), _ARITH)


def _keys(values: npt.NDArray[Any], mode: int, fmt: UlpFormat) -> npt.NDArray[Any]:
    """Ordered integer keys (see the module docstring) of finite ``values``, vectorised."""
    if mode in (_BITS32, _BF16):
        bits32 = values.view(np.int32)
        small = bits32 & np.int32(0x7FFFFFFF)
        if mode == _BF16:  # round to nearest even on the upper 16 bits (no int32 overflow)
            small += np.int32(0x7FFF) + ((small >> 16) & np.int32(1))
            small >>= 16
        sign = bits32 >> 31  # 0 or -1: (m ^ s) - s negates where s is -1
        small ^= sign
        small -= sign
        return small  # int32: magnitudes stay below 2**31
    if mode == _BITS64:
        bits = values.view(np.int64)
        magnitude = bits & np.int64(0x7FFFFFFFFFFFFFFF)
    else:
        wide = values.astype(np.float64)
        bits = wide.view(np.int64)  # only the sign bit is read
        a = np.abs(wide)
        mantissa, exponent = np.frexp(a)  # a = mantissa * 2**exponent, mantissa in [0.5, 1)
        normal = (exponent.astype(np.int64) - fmt.min_exponent) * (1 << fmt.fraction) + np.rint(
            (2.0 * mantissa - 1.0) * 2.0**fmt.fraction
        ).astype(np.int64)
        tiny = np.rint(a / 2.0 ** (fmt.min_exponent - fmt.fraction)).astype(np.int64)
        magnitude = np.where(a < 2.0**fmt.min_exponent, tiny, normal)
    np.negative(magnitude, out=magnitude, where=bits < 0)
    return magnitude


def _ulp_max(ref_keys: npt.NDArray[Any], act_keys: npt.NDArray[Any]) -> int:
    # Unsigned wrap-around of (high - low) is exactly |k1 - k2|: the distance always fits the
    # unsigned type of the keys' width, where the signed difference may overflow.
    high = np.maximum(ref_keys, act_keys)
    unsigned = np.uint32 if high.dtype == np.int32 else np.uint64
    low = np.minimum(ref_keys, act_keys).view(unsigned)
    high = high.view(unsigned)
    return int((high - low).max())


def _first_bad(values: npt.NDArray[Any]) -> int | None:
    if values.dtype.kind in "iub":
        return None
    for start in range(0, values.size, BLOCK):
        finite = np.isfinite(values[start : start + BLOCK])
        if not finite.all():
            return start + int(np.argmin(finite))
    return None


def _measure_numpy(
    reference: npt.NDArray[Any], actual: npt.NDArray[Any], fmt: UlpFormat
) -> Figures:
    # inf - inf and float64 overflow are data here (the verdict fails on them), not warnings.
    with np.errstate(all="ignore"):
        return _measure_numpy_quiet(reference, actual, fmt)


def _measure_numpy_quiet(
    reference: npt.NDArray[Any], actual: npt.NDArray[Any], fmt: UlpFormat
) -> Figures:
    count = reference.size
    bad_ref, bad_act = _first_bad(reference), _first_bad(actual)
    size = min(BLOCK, count)
    wide_ref, wide_act, delta = (np.empty(size, np.float64) for _ in range(3))
    partial_diff: list[float] = []
    partial_ref: list[float] = []
    max_abs, max_abs_index, max_ulp = 0.0, 0, 0
    ref_mode, act_mode = _mode(reference.dtype, fmt), _mode(actual.dtype, fmt)
    for start in range(0, count, BLOCK):
        stop = min(start + BLOCK, count)
        n = stop - start
        ref, act, d = wide_ref[:n], wide_act[:n], delta[:n]
        ref_part, act_part = reference[start:stop], actual[start:stop]
        np.copyto(ref, ref_part, casting="unsafe")
        np.copyto(act, act_part, casting="unsafe")
        np.subtract(ref, act, out=d)
        if (bad_ref is not None and bad_ref < stop) or (bad_act is not None and bad_act < stop):
            # A non-finite pair is skipped, as the kernel does: the verdict fails on it anyway.
            keep = np.isfinite(ref) & np.isfinite(act)
            ref, act, d = ref[keep], act[keep], d[keep]
            ref_part, act_part = ref_part[keep], act_part[keep]
            index = np.flatnonzero(keep) + start
        else:
            index = None
        if d.size == 0:
            continue
        # einsum, not dot: BLAS threads fight numba's and each other's on a loaded machine.
        partial_diff.append(float(np.einsum("i,i->", d, d)))
        partial_ref.append(float(np.einsum("i,i->", ref, ref)))
        np.abs(d, out=d)
        worst = int(np.argmax(d))
        if d[worst] > max_abs:
            max_abs = float(d[worst])
            max_abs_index = start + worst if index is None else int(index[worst])
        ulp = _ulp_max(_keys(ref_part, ref_mode, fmt), _keys(act_part, act_mode, fmt))
        max_ulp = max(max_ulp, ulp)
    return Figures(
        count,
        math.fsum(partial_diff),
        math.fsum(partial_ref),
        max_abs,
        max_abs_index,
        max_ulp,
        bad_ref,
        bad_act,
    )


def _kernel_fits(reference: npt.NDArray[Any], actual: npt.NDArray[Any]) -> bool:
    # Spelled out, cheapest test first: this runs on every comparison, and at 10^3 elements
    # a generator and an early environment lookup were a tenth of the differ's fixed cost.
    return (
        reference.dtype in _KERNEL_DTYPES
        and actual.dtype in _KERNEL_DTYPES
        and reference.flags.c_contiguous
        and actual.flags.c_contiguous
        and os.environ.get("DIFFCHECK_DIFFER", "") != "numpy"
    )


#: Native-order float32 and float64 (a byte-swapped dtype compares unequal to these).
_KERNEL_DTYPES: Final = frozenset((_F32, _F64))


_kernel_failure: str | None = None
_KERNEL_MODULE: Final = "diffcheck.differ._kernel"
#: Seconds this process has spent on the NumPy path for inputs the kernel could have taken.
_numpy_seconds = 0.0


def _kernel_due(count: int) -> bool:
    """Whether an input of ``count`` elements takes the kernel now (the docstring's rule)."""
    return (
        count >= KERNEL_MIN or _KERNEL_MODULE in sys.modules or _numpy_seconds >= LOAD_AFTER_SECONDS
    )


def _import_kernel() -> ModuleType:
    from . import _kernel  # imports numba (~0.5 s) and compiles or loads the cache

    return _kernel


def load_kernel() -> str | None:
    """Load the kernel now (import numba, compile or read the cache); None, or why it failed.

    For a process about to run many small comparisons, which would otherwise take the NumPy
    path until :data:`LOAD_AFTER_SECONDS` is spent on it.
    """
    global _kernel_failure
    try:
        from . import _kernel  # noqa: F401  (imports numba: ~0.5 s)
    except Exception as error:  # numba absent or broken: NumPy gives the same figures
        _kernel_failure = f"{type(error).__name__}: {error}"
    return _kernel_failure


def measure(reference: Any, actual: Any, fmt: UlpFormat) -> Figures:
    """Measure two flat arrays of equal, non-zero size in one pass (see the module docstring)."""
    global _kernel_failure, _numpy_seconds
    fits = _kernel_failure is None and _kernel_fits(reference, actual)
    if fits and _kernel_due(reference.size):
        try:
            # Once loaded, the module is taken from sys.modules: an import statement here
            # costs a microsecond on every call.
            kernel = sys.modules.get(_KERNEL_MODULE) or _import_kernel()
            figures: Figures = kernel.measure(
                reference, actual, fmt, _mode(reference.dtype, fmt), _mode(actual.dtype, fmt)
            )
            return figures
        except Exception as error:  # numba absent or broken: NumPy gives the same figures
            _kernel_failure = f"{type(error).__name__}: {error}"
    if not fits:
        return _measure_numpy(reference, actual, fmt)
    start = time.perf_counter()
    figures = _measure_numpy(reference, actual, fmt)
    _numpy_seconds += time.perf_counter() - start
    return figures


def engine(count: int) -> str:
    """Which path :func:`measure` takes now for float32 arrays of ``count`` elements."""
    if os.environ.get("DIFFCHECK_DIFFER", "") == "numpy" or not _kernel_due(count):
        return "numpy"
    return "numba" if _kernel_failure is None else f"numpy ({_kernel_failure})"
