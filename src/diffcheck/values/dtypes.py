"""Dtype names and the Array API standard's type promotion and result-dtype rules.

Names are the standard's (``int8``, ``float32``, ``complex64``...) plus ``float16`` and
``bfloat16``, which the standard does not define but backends store. The rules encoded here
are those of the 2023.12 revision: "Type Promotion Rules" and each function's "Returns"
section. Where the standard leaves a result open (mixed signed/unsigned 64-bit integers,
integer inputs to a floating-point function, mixed kinds), :func:`expected_result_dtype`
returns None rather than guessing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "BOOL",
    "COMPLEX",
    "FLOATING",
    "INTEGER",
    "SIGNED",
    "UNSIGNED",
    "dtype_name",
    "expected_result_dtype",
    "expected_result_dtypes",
    "promote",
    "scalars_fit",
]

BOOL = "bool"
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
FLOATING = REAL_FLOATING + COMPLEX

_BITS = {name: int("".join(c for c in name if c.isdigit())) for name in INTEGER}
_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {
    "float16": "complex64",
    "bfloat16": "complex64",
    "float32": "complex64",
    "float64": "complex128",
}
_FLOAT_RANK = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


_NAMES: dict[tuple[type, Any], str] = {}


def dtype_name(dtype: Any) -> str:
    """The standard's name of any library's dtype object (``torch.int32`` -> ``int32``).

    Remembered per dtype object: a located program of 60 calls asks for about 2,000 names.
    """
    # Keyed with the type first: a dict lookup may compare two libraries' dtypes, and some
    # (array_api_strict's) warn when compared with NumPy's; tuples compare types first.
    key = (type(dtype), dtype)
    try:
        return _NAMES[key]
    except KeyError:
        name = _NAMES[key] = _dtype_name(dtype)
        return name
    except TypeError:  # an unhashable dtype object
        return _dtype_name(dtype)


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        return np.dtype(dtype).name
    text = str(dtype).lower().rsplit(".", 1)[-1].strip("'\">) ")
    if text in ("bool_", "boolean"):
        return BOOL
    return text


_KNOWN = frozenset((BOOL, *INTEGER, *FLOATING))


def _promote_pair(a: str, b: str) -> str | None:
    if a not in _KNOWN or b not in _KNOWN:
        return None  # not a dtype the standard (or this model) knows
    if a == b:
        return a
    if BOOL in (a, b):
        return None  # bool mixes with no other kind in the standard
    if a in INTEGER and b in INTEGER:
        if (a in SIGNED) == (b in SIGNED):
            return a if _BITS[a] >= _BITS[b] else b
        signed, unsigned = (a, b) if a in SIGNED else (b, a)
        if _BITS[signed] > _BITS[unsigned]:
            return signed
        wider = 2 * _BITS[unsigned]
        return f"int{wider}" if wider <= 64 else None  # int64 with uint64 is left open
    if a in INTEGER or b in INTEGER:
        return None  # integer with floating: not defined by the standard
    if {a, b} == {"float16", "bfloat16"}:
        return None  # outside the standard; libraries disagree (float32 or refusal)
    if a in COMPLEX or b in COMPLEX:
        parts = [_REAL_OF.get(x, x) for x in (a, b)]
        real = max(parts, key=lambda x: _FLOAT_RANK[x])
        return _COMPLEX_OF[real]
    return a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b


def promote(dtypes: Iterable[str]) -> str | None:
    """The standard's result dtype for mixed array operands, or None where it is undefined."""
    names = list(dtypes)
    if not names:
        return None
    result: str | None = names[0]
    for name in names[1:]:
        if result is None:
            return None
        result = _promote_pair(result, name)
    return result


# -- function families ----------------------------------------------------------------------

#: Elementwise functions whose result has the promoted dtype of their array inputs.
_PROMOTING = frozenset(
    [
        "add",
        "subtract",
        "multiply",
        "pow",
        "maximum",
        "minimum",
        "remainder",
        "floor_divide",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "where",
        "matmul",
        "tensordot",
        "linalg.matmul",
        "linalg.tensordot",
        "vecdot",
        "linalg.vecdot",
        "linalg.cross",
        "concat",
        "stack",
    ]
)
#: Elementwise functions defined for floating inputs only, result in the promoted dtype.
_FLOAT_ONLY = frozenset(
    [
        "divide",
        "atan2",
        "hypot",
        "copysign",
        "logaddexp",
        "nextafter",
        "sqrt",
        "exp",
        "expm1",
        "log",
        "log1p",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "reciprocal",
        "mean",
        "std",
        "var",
        "linalg.inv",
        "linalg.det",
        "linalg.solve",
        "linalg.cholesky",
        "linalg.matrix_power",
        "linalg.pinv",
        "linalg.matrix_norm",
        "linalg.vector_norm",
        "linalg.norm",
    ]
)
#: Functions whose result keeps the input's dtype.
_SAME = frozenset(
    [
        "abs",
        "negative",
        "positive",
        "ceil",
        "floor",
        "round",
        "trunc",
        "sign",
        "square",
        "bitwise_invert",
        "conj",
        "clip",
        "max",
        "min",
        "sort",
        "flip",
        "roll",
        "reshape",
        "permute_dims",
        "squeeze",
        "expand_dims",
        "broadcast_to",
        "moveaxis",
        "tile",
        "repeat",
        "take",
        "take_along_axis",
        "diff",
        "cumulative_max",
        "cumulative_min",
        "matrix_transpose",
        "linalg.matrix_transpose",
        "linalg.diagonal",
        "unique_values",
        "tril",
        "triu",
        # "If dtype is None, the output array data type must be inferred from x."
        "zeros_like",
        # an array given to asarray without dtype= keeps its dtype ("inferred from obj")
        "asarray",
        "ones_like",
        "empty_like",
        "full_like",
    ]
)
#: Functions returning bool.
_BOOLEAN = frozenset(
    [
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "all",
        "any",
        "isin",
    ]
)
#: Functions returning the default index dtype (``default_dtypes()["indexing"]``).
_INDEX = frozenset(["argmax", "argmin", "argsort", "searchsorted", "nonzero", "count_nonzero"])
#: Sums and products: narrow integers accumulate in the default (unsigned) integer dtype.
_ACCUMULATING = frozenset(["sum", "prod", "cumulative_sum", "cumulative_prod", "linalg.trace"])


def _accumulated(first: str, default_int: str) -> str | None:
    """``sum``/``prod``/``cumulative_*``/``trace`` without ``dtype=``: the standard's rule.

    The input's own dtype, unless it is an integer dtype whose range is strictly inside the
    default integer dtype's: then the default (signed input) or the unsigned dtype of the
    default's width (unsigned input). Bool is not numeric: the standard leaves it open.
    """
    if first in FLOATING:
        return first
    if first not in INTEGER or default_int not in INTEGER:
        return None
    own, default = np.iinfo(first), np.iinfo(default_int)
    inside = default.min <= own.min and own.max <= default.max
    if not inside or (own.min, own.max) == (default.min, default.max):
        return first
    return default_int if first in SIGNED else "u" + default_int.removeprefix("u")


def expected_result_dtype(function: str, *input_dtypes: str, **kwargs: Any) -> str | None:
    """The result dtype the Array API standard requires of ``function`` for these inputs.

    Parameters
    ----------
    function
        The standard's name, e.g. ``add``, ``argmax``, ``linalg.vecdot``, ``fft.rfft``.
    *input_dtypes
        The dtype names of the array arguments, in order.
    **kwargs
        ``dtype`` (the function's ``dtype=`` argument, when given), ``default_int`` (the
        namespace's default integer dtype, ``int64`` unless told), ``default_index`` (its
        default index dtype, ``default_int`` unless told) and ``default_float``
        (``float64`` unless told); see :mod:`diffcheck.values.defaults`.

    Returns
    -------
    str or None
        The required dtype name, or None when the standard leaves it open (undefined
        promotion, integer input to a floating-point-only function, an unknown function).
    """
    default_int = str(kwargs.get("default_int") or "int64")
    default_index = str(kwargs.get("default_index") or default_int)
    default_float = str(kwargs.get("default_float") or "float64")
    requested = kwargs.get("dtype")
    if requested is not None:
        return dtype_name(requested)
    name = function.removeprefix("xp.")
    dtypes = [dtype_name(d) for d in input_dtypes]
    first = dtypes[0] if dtypes else None
    if name in _BOOLEAN:
        return BOOL
    if name in _INDEX:
        return default_index
    if name in _ACCUMULATING and first is not None:
        return _accumulated(first, default_int)
    if name in ("real", "imag") or (first in COMPLEX and _complex_returns_real(name)):
        return _REAL_OF.get(first or "", first) if first in FLOATING else None
    if name in _SAME:
        return first
    if name in _PROMOTING:
        return promote(dtypes)
    if name in _FLOAT_ONLY:
        result = promote(dtypes)
        return result if result in FLOATING else None
    if name.startswith("fft."):
        return _fft_dtype(name, first, default_float)
    if name in ("zeros", "ones", "empty", "full", "eye", "linspace", "arange"):
        return default_float if name in ("zeros", "ones", "empty", "eye", "linspace") else None
    if name == "astype":
        return None  # astype always has dtype=, handled above
    return None


def _complex_returns_real(name: str) -> bool:
    """The standard's stubs say a complex input gives a real result (``vector_norm``)."""
    from .signatures import VERSIONS, signature  # the data's loader imports these names

    for version in reversed(VERSIONS):
        found = signature(name, version)
        if found is not None:
            return found.complex_returns_real
    return False


def _fft_dtype(name: str, first: str | None, default_float: str = "float64") -> str | None:
    if name in ("fft.fftfreq", "fft.rfftfreq"):
        # "the default real-valued floating-point data type" unless ``dtype`` is given:
        # each side's own declared default (float32 for MLX, float64 for NumPy).
        return default_float
    if name in ("fft.fftshift", "fft.ifftshift"):
        return first
    if first not in FLOATING:
        return None
    if name in ("fft.irfft", "fft.irfftn", "fft.hfft"):
        return _REAL_OF.get(first, first)
    return _COMPLEX_OF.get(first, first)


#: Functions with several outputs: each output's dtype, as "same" (the input's), "index"
#: (the default index dtype) or "real" (the real counterpart of a complex input).
_MULTI: dict[str, tuple[str, ...]] = {
    "unique_all": ("same", "index", "index", "index"),
    "unique_counts": ("same", "index"),
    "unique_inverse": ("same", "index"),
    "linalg.eigh": ("real", "same"),
    "linalg.qr": ("same", "same"),
    "linalg.svd": ("same", "real", "same"),
    "linalg.slogdet": ("same", "real"),
}


def expected_result_dtypes(
    function: str, *input_dtypes: str, outputs: int = 1, **kwargs: Any
) -> tuple[str | None, ...]:
    """Each output's required dtype (one per output; None where the standard leaves it open).

    ``outputs`` is how many the function returned; it sizes ``nonzero``, ``meshgrid``,
    ``broadcast_arrays`` and ``unstack``, whose count depends on the inputs.
    """
    name = function.removeprefix("xp.")
    dtypes = [dtype_name(d) for d in input_dtypes]
    first = dtypes[0] if dtypes else None
    index = str(kwargs.get("default_index") or kwargs.get("default_int") or "int64")
    if name in _MULTI:
        kinds = _MULTI[name]
        table = {"same": first, "index": index, "real": _REAL_OF.get(first or "", first)}
        return tuple(table[k] for k in kinds)
    if name == "nonzero":
        return (index,) * outputs
    if name == "broadcast_arrays":  # each output keeps its own input's dtype
        return tuple(dtypes[:outputs])
    if name == "meshgrid":  # inputs must share one dtype, which every output keeps
        return (first if len(set(dtypes)) == 1 else None,) * outputs
    if name == "unstack":
        return (first,) * outputs
    single = expected_result_dtype(function, *input_dtypes, **kwargs)
    return (single,) * outputs


def scalars_fit(array_dtype: str | None, args: Any) -> bool:
    """Whether every Python scalar among ``args`` takes ``array_dtype`` by the standard.

    A scalar adopts the array's dtype only within its kind: bool with bool, int with
    integers and floats, float with floats, complex with complex. Any other mix is left
    open by the standard (NumPy and others differ), so no result dtype is required then.
    """
    for arg in args:
        if isinstance(arg, bool):
            ok = array_dtype == BOOL
        elif isinstance(arg, int):
            ok = array_dtype in INTEGER or array_dtype in FLOATING
        elif isinstance(arg, float):
            ok = array_dtype in FLOATING
        elif isinstance(arg, complex):
            ok = array_dtype in COMPLEX
        else:
            continue
        if not ok:
            return False
    return True
