"""What ``diffcheck fuzz --require-backend mlx:cpu --api`` finds on MLX, declared as data.

Each entry was measured by the API search against NumPy on MLX 0.32.4 (CPU, Linux x86-64;
docs/api-search.md) and is blamed on MLX by the standard's rules, special cases or the
high-precision oracle. No upstream report is known to diffcheck for any of them, so each
says so. Each says which inputs it covers (shift counts at or past the width, an empty
reduction, a keyword MLX does not take...): a finding outside that class, or these
functions' kinds and dtypes, stays a finding; an entry the search no longer
meets is listed as no longer reproducing.
"""

from __future__ import annotations

from diffcheck.adapters import InputClass, KnownApiDivergence
from diffcheck.adapters.api_inputs import (
    EMPTY_INPUT,
    EMPTY_REDUCTION,
    EVERY_INPUT,
    FLOAT32_PRECISION,
    HUGE_FOR_FLOAT32,
    NAN_INPUT,
    NEGATIVE_ZERO_INPUT,
    SHIFT_PAST_WIDTH,
    ZERO_D_KEEPDIMS,
    ZERO_RESULT,
    fill_above_int64,
    keyword_given,
)

__all__ = ["MLX_API_DIVERGENCES"]

_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_SMALL_INTEGERS = ("int8", "int16", "uint8", "uint16")
_NONE = "none known"


def _each(
    functions: tuple[str, ...],
    kind: str,
    reason: str,
    dtypes: tuple[str, ...] = (),
    covers: InputClass = EVERY_INPUT,
) -> list[KnownApiDivergence]:
    return [
        KnownApiDivergence(
            function=f, kind=kind, dtypes=dtypes, covers=covers, reason=reason, upstream=_NONE
        )
        for f in functions
    ]


MLX_API_DIVERGENCES: tuple[KnownApiDivergence, ...] = (
    *_each(
        (
            "hypot",
            "copysign",
            "signbit",
            "nextafter",
            "nonzero",
            "unique_all",
            "unique_counts",
            "unique_inverse",
            "unique_values",
            "linalg.diagonal",
            "linalg.matmul",
            "linalg.matrix_norm",
            "linalg.matrix_power",
            "linalg.matrix_rank",
            "linalg.matrix_transpose",
            "linalg.outer",
            "linalg.svdvals",
            "linalg.tensordot",
            "linalg.trace",
            "linalg.vecdot",
            "linalg.vector_norm",
            "fft.hfft",
            "fft.ihfft",
        ),
        "missing",
        "mlx.core does not offer this function of the standard under its name",
    ),
    *_each(
        ("astype", "can_cast"),
        "missing",
        "mlx.core names the boolean dtype bool_, not bool as the standard does",
    ),
    *_each(
        ("argmax", "argmin", "argsort", "searchsorted"),
        "dtype",
        "MLX returns uint32 indices; the standard requires the default integer dtype (int64)",
    ),
    KnownApiDivergence(
        function="count_nonzero",
        kind="dtype",
        covers=EVERY_INPUT,
        reason="MLX counts in int32; the standard requires the default integer dtype (int64)",
        upstream=_NONE,
    ),
    *_each(
        ("sum", "prod", "cumulative_sum", "cumulative_prod"),
        "dtype",
        "MLX keeps the input's integer dtype; the standard accumulates small integers in the "
        "default integer dtype (int64, uint64 for unsigned)",
        (*_INTEGERS, "bool"),
    ),
    *_each(
        ("vecdot",),
        "dtype",
        "MLX widens 8- and 16-bit integer dot products to 32 bits; the standard keeps the "
        "input dtype",
        _SMALL_INTEGERS,
    ),
    *_each(
        ("bitwise_left_shift", "bitwise_right_shift"),
        "value",
        "MLX shifts by the count modulo the bit width (the hardware's shift); the standard "
        "shifts all bits out for counts at or past the width (0, or -1 for a negative value "
        "shifted right)",
        _INTEGERS,
        SHIFT_PAST_WIDTH,
    ),
    *_each(
        ("sort", "argsort"),
        "raises",
        "MLX's sort and argsort take no descending= or stable= keywords",
        covers=keyword_given("descending", "stable"),
    ),
    *_each(
        ("std", "var"),
        "raises",
        "MLX's std and var take ddof=, not the standard's correction=",
        covers=keyword_given("correction"),
    ),
    *_each(
        ("cumulative_sum", "cumulative_prod"),
        "raises",
        "MLX's cumulative_sum and cumulative_prod (cumsum and cumprod) take no "
        "include_initial= keyword",
        covers=keyword_given("include_initial"),
    ),
    KnownApiDivergence(
        function="clip",
        kind="raises",
        covers=keyword_given("min", "max"),
        reason="MLX's clip names its bounds a_min and a_max, not the standard's min= and max=",
        upstream=_NONE,
    ),
    *_each(
        ("matmul", "tensordot"),
        "raises",
        "MLX's matmul supports floating-point inputs only; the standard defines integer ones",
        _INTEGERS,
    ),
    KnownApiDivergence(
        function="expm1",
        kind="raises",
        dtypes=("complex64",),
        covers=EVERY_INPUT,
        reason="MLX's expm1 refuses complex input",
        upstream=_NONE,
    ),
    KnownApiDivergence(
        function="full",
        kind="raises",
        dtypes=("uint64",),
        covers=fill_above_int64(),
        reason="MLX's full raises std::bad_cast for a uint64 fill value above the int64 range",
        upstream=_NONE,
    ),
    *_each(
        ("fft.rfft", "fft.rfftn"),
        "dtype",
        "MLX computes FFTs in complex64: a float64 input gives complex64, not complex128",
        ("float64",),
    ),
    *_each(
        ("sign",),
        "nan",
        "MLX's sign(NaN) is 0; the standard's special case requires NaN",
        ("float32", "float64"),
        NAN_INPUT,
    ),
    KnownApiDivergence(
        function="sin",
        kind="signed-zero",
        dtypes=("float32", "float64"),
        covers=NEGATIVE_ZERO_INPUT,
        reason="MLX's sin(-0.0) is +0.0; the standard's special case requires -0.0",
        upstream=_NONE,
    ),
    KnownApiDivergence(
        function="remainder",
        kind="signed-zero",
        dtypes=("float32", "float64"),
        covers=ZERO_RESULT,
        reason="MLX's remainder gives +0.0 where the result's sign must follow the divisor",
        upstream=_NONE,
    ),
    *_each(
        ("exp", "sin", "cos", "logaddexp", "var"),
        "value",
        "MLX computes these float64 functions at float32 precision: exp(1.0) is right to "
        "float32's 7 digits, not float64's 16",
        ("float64",),
        FLOAT32_PRECISION,
    ),
    *_each(
        ("sin", "cos"),
        "nan",
        "MLX computes float64 sin and cos through float32: a huge finite argument overflows "
        "to inf there, and the result is NaN",
        ("float64",),
        HUGE_FOR_FLOAT32,
    ),
    KnownApiDivergence(
        function="linalg.det",
        kind="value",
        dtypes=("float64",),
        covers=FLOAT32_PRECISION,
        reason="MLX's float64 det has float32 precision (6.750000476837158 for 6.75)",
        upstream=_NONE,
    ),
    KnownApiDivergence(
        function="prod",
        kind="value",
        dtypes=("uint64", "complex64"),
        covers=EMPTY_REDUCTION,
        reason="MLX's prod over an empty axis is 0 for these dtypes; the empty product is 1",
        upstream=_NONE,
    ),
    KnownApiDivergence(
        function="all",
        kind="value",
        covers=EMPTY_REDUCTION,
        reason="MLX's all() over an empty array reads memory it never wrote: mostly False, "
        "sometimes True (the standard: True); replays of it may not reproduce",
        upstream=_NONE,
    ),
    KnownApiDivergence(
        function="any",
        kind="value",
        covers=EMPTY_REDUCTION,
        reason="MLX's any() over an empty axis is sometimes True (the standard: False), as "
        "for all(); replays of it may not reproduce",
        upstream=_NONE,
    ),
    *_each(
        ("argmax", "argmin"),
        "raises",
        "MLX's argmax and argmin of a 0-d array with keepdims=True raise 'cannot create "
        "std::vector larger than max_size()'",
        covers=ZERO_D_KEEPDIMS,
    ),
    *_each(
        ("argmax", "argmin"),
        "raises",
        "MLX's argmax and argmin refuse any input with a zero-size dimension ('Cannot argmax "
        "reduce zero size array'), also along an axis of size 1, where the result is an "
        "empty array",
        covers=EMPTY_INPUT,
    ),
)
