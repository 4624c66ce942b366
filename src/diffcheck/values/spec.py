"""The Array API standard's functions and dtypes, by name, as data.

Listed from the standard's stubs (``array_api_stubs/_2023_12``, plus the functions that
``_2024_12`` adds): the names a conforming namespace must have. Blame uses them to tell a side that lacks a standard function (wrong by
the standard) from one that lacks something the standard never asked for (``bfloat16``).
"""

from __future__ import annotations

__all__ = ["ADDED_2024_12", "STANDARD_DTYPES", "STANDARD_FUNCTIONS", "is_standard_name"]

#: Function names by the standard's section; ``linalg.`` and ``fft.`` names are qualified.
STANDARD_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "creation": (
        "arange",
        "asarray",
        "empty",
        "empty_like",
        "eye",
        "from_dlpack",
        "full",
        "full_like",
        "linspace",
        "meshgrid",
        "ones",
        "ones_like",
        "tril",
        "triu",
        "zeros",
        "zeros_like",
    ),
    "data_type": ("astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"),
    "elementwise": (
        "abs",
        "acos",
        "acosh",
        "add",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "bitwise_and",
        "bitwise_left_shift",
        "bitwise_invert",
        "bitwise_or",
        "bitwise_right_shift",
        "bitwise_xor",
        "ceil",
        "clip",
        "conj",
        "copysign",
        "cos",
        "cosh",
        "divide",
        "equal",
        "exp",
        "expm1",
        "floor",
        "floor_divide",
        "greater",
        "greater_equal",
        "hypot",
        "imag",
        "isfinite",
        "isinf",
        "isnan",
        "less",
        "less_equal",
        "log",
        "log1p",
        "log2",
        "log10",
        "logaddexp",
        "logical_and",
        "logical_not",
        "logical_or",
        "logical_xor",
        "maximum",
        "minimum",
        "multiply",
        "negative",
        "not_equal",
        "positive",
        "pow",
        "real",
        "remainder",
        "round",
        "sign",
        "signbit",
        "sin",
        "sinh",
        "square",
        "sqrt",
        "subtract",
        "tan",
        "tanh",
        "trunc",
    ),
    "indexing": ("take",),
    "linear_algebra": ("matmul", "matrix_transpose", "tensordot", "vecdot"),
    "manipulation": (
        "broadcast_arrays",
        "broadcast_to",
        "concat",
        "expand_dims",
        "flip",
        "moveaxis",
        "permute_dims",
        "repeat",
        "reshape",
        "roll",
        "squeeze",
        "stack",
        "tile",
        "unstack",
    ),
    "searching": ("argmax", "argmin", "nonzero", "searchsorted", "where"),
    "set": ("unique_all", "unique_counts", "unique_inverse", "unique_values"),
    "sorting": ("argsort", "sort"),
    "statistical": ("cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"),
    "utility": ("all", "any"),
    "linalg": tuple(
        "linalg." + name
        for name in [
            "cholesky",
            "cross",
            "det",
            "diagonal",
            "eigh",
            "eigvalsh",
            "inv",
            "matmul",
            "matrix_norm",
            "matrix_power",
            "matrix_rank",
            "matrix_transpose",
            "outer",
            "pinv",
            "qr",
            "slogdet",
            "solve",
            "svd",
            "svdvals",
            "tensordot",
            "trace",
            "vecdot",
            "vector_norm",
        ]
    ),
    "fft": tuple(
        "fft." + name
        for name in [
            "fft",
            "ifft",
            "fftn",
            "ifftn",
            "rfft",
            "irfft",
            "rfftn",
            "irfftn",
            "hfft",
            "ihfft",
            "fftfreq",
            "rfftfreq",
            "fftshift",
            "ifftshift",
        ]
    ),
}
#: Functions the 2024.12 revision adds to the 2023.12 ones above.
ADDED_2024_12 = (
    "count_nonzero",
    "cumulative_prod",
    "diff",
    "nextafter",
    "reciprocal",
    "take_along_axis",
)
#: The standard's dtypes (float16 and bfloat16 are not among them).
STANDARD_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_ALL = frozenset(
    [name for names in STANDARD_FUNCTIONS.values() for name in names] + list(ADDED_2024_12)
)
_LEAVES = frozenset(name.rsplit(".", 1)[-1] for name in _ALL)


def is_standard_name(name: str) -> bool:
    """Whether ``name`` (``exp``, ``linalg.vecdot``, ``vecdot``, ``int8``) is in the standard.

    The 2023.12 revision, the 2024.12 additions, or any later version whose signatures
    are generated from the standard's stubs (2025.12 adds ``isin``).
    """
    if name in _ALL or name in _LEAVES or name in STANDARD_DTYPES or name in ("linalg", "fft"):
        return True
    from .signatures import VERSIONS, functions_of  # signatures imports this module's kin

    later = {n for version in VERSIONS for n in functions_of(version)}
    return name in later or name in {n.rsplit(".", 1)[-1] for n in later}
