"""Host values of a recorded call: finding arrays, digests, casts and the error figures."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..values.dtypes import dtype_name
from ..values.model import Bound, ValueVerdict
from ..values.ulp import round_to_bfloat16, ulp_distance
from ._proxy import LEAVES, is_array
from ._result import CallError

__all__ = [
    "arrays_in",
    "cast",
    "digest",
    "dtype_of",
    "equal_error",
    "error_of",
    "host_dtype",
    "map_arrays",
    "map_call",
    "nbytes",
    "same_bits",
    "shape_of",
    "within",
]


#: :func:`~diffcheck.values.dtypes.dtype_name` (remembered per dtype object), by its local
#: name: a located program asks for about 400 names a run, each through one call less.
dtype_of = dtype_name


def shape_of(value: Any) -> tuple[int, ...]:
    if type(value) is np.ndarray:
        shape: tuple[int, ...] = value.shape  # Python ints already
        return shape
    return tuple([int(n) for n in value.shape])  # a list is built faster than a generator


def reshaped(xp: Any, array: Any, shape: tuple[int, ...]) -> Any:
    """``xp.reshape(array, shape)``, through the array's own ``reshape`` where it has one.

    The namespace's function may be a wrapper of the library's (array-api-compat's, a few
    microseconds of Python each): a window flattens about 116 outputs and views about 70
    prefetched inputs.
    """
    method = getattr(array, "reshape", None)
    return xp.reshape(array, shape) if method is None else method(shape)


def arrays_in(args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
    """The arrays among the arguments: the positional ones, those inside a tuple or list
    argument (positional or keyword, in order), then the keyword ones."""
    found: list[Any] = []
    inside: list[Any] = []
    for value in args:
        if type(value) in LEAVES:
            continue
        if is_array(value):
            found.append(value)
        elif isinstance(value, tuple | list):
            inside.extend([v for v in value if is_array(v)])
    if not kwargs:
        return found + inside if inside else found
    keyword = []
    for value in kwargs.values():
        if is_array(value):
            keyword.append(value)
        elif isinstance(value, tuple | list):
            inside.extend([v for v in value if is_array(v)])
    return found + inside + keyword


def _host_bytes(value: Any) -> Any:
    """The value's bytes in C order, as a buffer (no copy when it is contiguous already)."""
    array = value[0] if isinstance(value, tuple) else value
    if type(array) is np.ndarray and array.flags.c_contiguous and array.dtype.kind in "biufc":
        return array  # its own buffer: its bytes in C order (an empty one has none)
    array = np.ascontiguousarray(array)
    return array.reshape(-1).view(np.uint8) if array.size else b""


def digest(hosts: Sequence[Any]) -> str:
    """The first 16 hex digits of SHA-256 over the bytes.

    SHA-256, not BLAKE2b: on a CPU with the SHA extensions (most x86-64 and ARM64 made since
    about 2017), OpenSSL's SHA-256 is the faster. Measured on the 2-core x86-64 box: 444 KB
    in 0.51 ms against BLAKE2b's 0.81, 4 KB in 2.7 us against 4.6; even at 256 bytes.
    """
    h = hashlib.sha256()
    for host in hosts:
        h.update(_host_bytes(host))
    return h.hexdigest()[:16]


def nbytes(value: Any) -> int:
    array = value[0] if isinstance(value, tuple) else value
    return int(getattr(array, "nbytes", 0))


def map_arrays(value: Any, convert: Callable[[Any], Any]) -> Any:
    """``value`` with each array (and tagged host array) replaced by ``convert(array)``."""
    kind = type(value)
    if kind in LEAVES:
        return value
    if kind is tuple and not (len(value) == 2 and type(value[1]) is str):
        # The common containers, walked without a call per leaf: (args, kwargs), args.
        return tuple([v if type(v) in LEAVES else map_arrays(v, convert) for v in value])
    if kind is dict:
        return {k: v if type(v) in LEAVES else map_arrays(v, convert) for k, v in value.items()}
    if is_array(value) or (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[1], str)
        and is_array(value[0])
    ):
        return convert(value)
    if isinstance(value, tuple):
        return tuple(map_arrays(v, convert) for v in value)
    if isinstance(value, list):
        return [map_arrays(v, convert) for v in value]
    if isinstance(value, dict):
        return {k: map_arrays(v, convert) for k, v in value.items()}
    return value


def map_call(
    args: tuple[Any, ...], kwargs: dict[str, Any], convert: Callable[[Any], Any]
) -> tuple[tuple[Any, ...], dict[str, Any], list[Any]]:
    """``map_arrays((args, kwargs), convert)``, and the converted values, for their sizes.

    The values are what :func:`arrays_in` finds in the result, up to order (a tagged host's
    array for the tagged host: the same bytes). A call's arguments are mostly arrays and
    scalars: those are walked in one pass, without a call per argument. Anything else (a
    list of arrays, an argument pair that map_arrays reads as a tagged host) takes
    map_arrays.
    """
    if _flat(args, kwargs):
        # map_arrays would give an equal tuple of leaves: the same one serves.
        found: list[Any] = []
        out: list[Any] = []
        for v in args:
            if type(v) in LEAVES or type(v) is tuple:
                out.append(v)
            else:
                v = convert(v)
                found.append(v)
                out.append(v)
        if not kwargs:
            return tuple(out), {}, found
        mapped: dict[str, Any] = {}
        for k, v in kwargs.items():
            if type(v) in LEAVES or type(v) is tuple:
                mapped[k] = v
            else:
                mapped[k] = v = convert(v)
                found.append(v)
        return tuple(out), mapped, found
    new_args, new_kwargs = map_arrays((args, kwargs), convert)
    return new_args, new_kwargs, arrays_in(new_args, new_kwargs)


def _flat(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether every argument is a leaf, an array or a tuple of leaves (a shape, axes).

    Asked before anything is converted (``convert`` may count its calls). A pair that
    map_arrays reads as a tagged host is not flat.
    """
    if len(args) == 2 and type(args[1]) is str:
        return False
    for v in (*args, *kwargs.values()):
        kind = type(v)
        if kind in LEAVES or is_array(v):
            continue
        if kind is not tuple or any(type(item) not in LEAVES for item in v):
            return False
    return True


def _wide(host: Any) -> npt.NDArray[Any]:
    array = host[0] if isinstance(host, tuple) else host
    array = np.asarray(array)
    if array.dtype.kind == "c":
        return array.astype(np.complex128)
    return array.astype(np.float64)


def equal_error(reference: Any) -> CallError:
    """:func:`error_of` for a candidate with the reference's very bits: no difference at all."""
    array = np.asarray(reference[0] if isinstance(reference, tuple) else reference)
    if array.size == 0:
        return CallError(0.0, 0.0, None, True, None, (), ())
    around = tuple(np.real(array.reshape(-1)[:4]).astype(np.float64).tolist())
    index = (0,) * array.ndim
    return CallError(0.0, 0.0, index, True, None, around, around)


def error_of(reference: Any, candidate: Any, verdict: ValueVerdict | None) -> CallError:
    """NMSE, max |diff| and where, beside the values model's verdict (None: equal bits)."""
    passed = True if verdict is None else verdict.passed
    reason = None if verdict is None else verdict.reason
    ref, cand = _wide(reference), _wide(candidate)
    if ref.shape != cand.shape:
        return CallError(float("inf"), float("inf"), None, False, reason or "shapes differ", (), ())
    if ref.size == 0:
        return CallError(0.0, 0.0, None, passed, reason, (), ())
    with np.errstate(all="ignore"):
        diff = np.abs(ref - cand).reshape(-1)
        finite = bool(np.isfinite(diff).all())
        if not finite:  # NaN against NaN and an infinity against itself are no difference
            same = (ref == cand) | (np.isnan(ref) & np.isnan(cand))
            diff[same.reshape(-1)] = 0.0
        flat_ref = ref.reshape(-1)
        if finite:
            energy = float(np.vdot(flat_ref, flat_ref).real) / ref.size
        else:
            kept = flat_ref[np.isfinite(flat_ref)]
            energy = float(np.vdot(kept, kept).real) / ref.size
        mse = float(np.vdot(diff, diff).real) / diff.size
    nmse = mse if energy < 1e-30 else mse / energy
    worst = int(np.argmax(np.where(np.isnan(diff), np.inf, diff) if not finite else diff))
    window = slice(max(0, worst - 3), worst + 4)
    index = tuple(int(i) for i in np.unravel_index(worst, ref.shape)) if ref.shape else ()
    return CallError(
        nmse if np.isfinite(nmse) else float("inf"),
        float(diff[worst]) if np.isfinite(diff[worst]) else float("inf"),
        index,
        passed,
        reason,
        tuple(np.real(flat_ref[window]).tolist()),
        tuple(np.real(cand.reshape(-1)[window]).tolist()),
    )


def cast(host: Any, dtype: str) -> Any:
    """A host value rounded into ``dtype`` (bfloat16 as a tagged float32 array)."""
    array = host[0] if isinstance(host, tuple) else np.asarray(host)
    with np.errstate(over="ignore"):  # past the narrow format's range is inf, as it rounds
        if dtype == "bfloat16":
            return (round_to_bfloat16(np.asarray(array, np.float32)), "bfloat16")
        return np.asarray(array).astype(dtype)


def same_bits(a: Any, b: Any) -> bool:
    x = a[0] if isinstance(a, tuple) else np.asarray(a)
    y = b[0] if isinstance(b, tuple) else np.asarray(b)
    return bool(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes())


#: NumPy dtype names by dtype (the judge asks about every host array many times).
_HOST_NAMES: dict[np.dtype[Any], str] = {}


def host_dtype(host: Any) -> str:
    """The dtype name of a host value (a tagged array's tag: ``bfloat16``)."""
    if type(host) is np.ndarray:
        name = _HOST_NAMES.get(host.dtype)
        if name is None:
            name = _HOST_NAMES[host.dtype] = dtype_of(host.dtype)
        return name
    return host[1] if isinstance(host, tuple) else dtype_of(np.asarray(host).dtype)


def within(expected: Any, candidate: Any, bound: Bound) -> bool | None:
    """A quick check that ``candidate`` meets ``bound``: True, False or None.

    It decides only for finite floats of one dtype and shape whose zeros agree in sign;
    anything else (NaN, infinities, signed zeros) is None, left to the values model, which
    gives the verdict and its reason. It follows the model's rules for each kind of bound:
    exact (any difference fails), ULPs, ULPs or an absolute error (a reduction's), and NMSE
    (strictly below). The model costs about 0.4 ms a call on small arrays, and a program has
    many calls.
    """
    if host_dtype(expected) != host_dtype(candidate):
        return None
    e = np.asarray(expected[0] if isinstance(expected, tuple) else expected)
    c = np.asarray(candidate[0] if isinstance(candidate, tuple) else candidate)
    if e.shape != c.shape or e.dtype != c.dtype or e.dtype.kind != "f" or e.size == 0:
        return None
    with np.errstate(all="ignore"):
        if not (np.isfinite(e).all() and np.isfinite(c).all()):
            return None
        zeros = (e == 0) | (c == 0)
        if zeros.any() and bool((np.signbit(e[zeros]) != np.signbit(c[zeros])).any()):
            return None
        if bound.kind == "exact":
            return bool(np.array_equal(e, c))
        if bound.kind == "nmse":
            wide_e, wide_c = e.astype(np.float64).reshape(-1), c.astype(np.float64).reshape(-1)
            d = wide_e - wide_c
            energy = float(np.dot(wide_e, wide_e)) / e.size
            if energy < 1e-30 or bound.nmse is None:
                return None
            return float(np.dot(d, d)) / e.size / energy < bound.nmse
    if bound.ulps is None or bound.kind not in ("ulp", "reduction"):
        return None
    # The model's own distance, so the two cannot disagree on what an ULP is.
    beyond = ulp_distance(e, c, host_dtype(expected)) > bound.ulps
    if bound.atol is not None and bound.kind == "reduction":
        error = np.abs(e.astype(np.float64) - c.astype(np.float64))
        beyond &= ~(error <= bound.atol)
    return not bool(beyond.any())
