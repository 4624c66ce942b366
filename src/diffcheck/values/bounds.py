"""Error bounds per function and dtype, each with the reason it is what it is.

The Array API standard asks for IEEE 754 correct rounding of the basic operations
(``+ - * /`` and ``sqrt``) and leaves the accuracy of other functions to implementations.
The bounds therefore follow what a faithful implementation delivers:

* bool and integer results: exact;
* functions that only move, select or compare values (abs, negative, floor, maximum,
  where, sort...): exact;
* IEEE 754 basic operations: correctly rounded on both sides, so bit-equal (0 ULP);
* other elementwise math: each side within 1 ULP of the true value, so at most 2 ULP apart
  (4 for complex results, whose parts combine several rounded operations);
* reductions over ``n`` elements: summation error grows with the rounding steps and the
  dtype's epsilon (``steps`` ULP, or ``steps * eps * sum |x|`` when cancellation makes the
  result small), ``steps`` being ``log2 n`` plus a block for a robust sum and ``n`` for
  scans, products and dot products (:mod:`diffcheck.values.accuracy`);
* anything else (decompositions, user functions): the NMSE bucket of the storage precision.
"""

from __future__ import annotations

from .accuracy import PAIRWISE, summation_depth
from .dtypes import BOOL, COMPLEX, INTEGER
from .model import Bound
from .ulp import EPSILON

__all__ = ["EXACT_FUNCTIONS", "bound_for", "is_elementwise"]

#: Functions whose results are copies, selections or comparisons of inputs: bit-exact.
EXACT_FUNCTIONS = frozenset(
    [
        "abs",
        "negative",
        "positive",
        "ceil",
        "floor",
        "round",
        "trunc",
        "sign",
        "copysign",
        "maximum",
        "minimum",
        "where",
        "clip",
        "sort",
        "flip",
        "roll",
        "reshape",
        "permute_dims",
        "squeeze",
        "expand_dims",
        "broadcast_to",
        "concat",
        "stack",
        "take",
        "take_along_axis",
        "max",
        "min",
        "cumulative_max",
        "cumulative_min",
        "unique_values",
        "tril",
        "triu",
        "real",
        "imag",
        "conj",
        "nextafter",
        "signbit",
        "isnan",
        "isinf",
        "isfinite",
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "moveaxis",
        "tile",
        "repeat",
        "matrix_transpose",
        "astype",
    ]
)
#: IEEE 754 basic operations: correctly rounded, hence equal on two faithful backends.
CORRECTLY_ROUNDED = frozenset(
    [
        "add",
        "subtract",
        "multiply",
        "divide",
        "sqrt",
        "square",
        "reciprocal",
        "remainder",
        "floor_divide",
        "fmod",
    ]
)
#: Other elementwise math, within 1 ULP of the truth on each side.
TRANSCENDENTAL = frozenset(
    [
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
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "hypot",
        "logaddexp",
        "pow",
    ]
)
#: Reductions and contractions: summation error grows with the number of terms.
REDUCTIONS = frozenset(
    [
        "sum",
        "prod",
        "mean",
        "cumulative_sum",
        "cumulative_prod",
        "vecdot",
        "linalg.vecdot",
        "matmul",
        "linalg.matmul",
        "tensordot",
        "linalg.tensordot",
        "linalg.trace",
        "linalg.vector_norm",
        "linalg.matrix_norm",
        "std",
        "var",
        "logsumexp",
    ]
)
_ELEMENTWISE = (EXACT_FUNCTIONS | CORRECTLY_ROUNDED | TRANSCENDENTAL) - frozenset(
    [
        "sort",
        "flip",
        "roll",
        "reshape",
        "permute_dims",
        "squeeze",
        "expand_dims",
        "broadcast_to",
        "concat",
        "stack",
        "take",
        "take_along_axis",
        "max",
        "min",
        "cumulative_max",
        "cumulative_min",
        "unique_values",
        "tril",
        "triu",
        "moveaxis",
        "tile",
        "repeat",
        "matrix_transpose",
        "astype",
    ]
)
_NMSE = {"float16": 1e-6, "bfloat16": 1e-4, "float32": 1e-7, "float64": 1e-15}


def is_elementwise(function: str | None) -> bool:
    """Whether ``function`` is one of the standard's elementwise functions known here."""
    return function is not None and function.removeprefix("xp.") in _ELEMENTWISE


def _real(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def bound_for(
    function: str | None,
    dtype: str,
    *,
    reduced: int = 1,
    magnitude: float | None = None,
    inputs: tuple[str, ...] = (),
    atol: float | None = None,
) -> Bound:
    """The error bound for ``function``'s result stored in ``dtype``.

    Parameters
    ----------
    function
        The standard's name (``exp``, ``linalg.vecdot``...); None for an arbitrary function.
    dtype
        The output dtype name.
    reduced
        How many elements each output element reduces over (reductions only).
    magnitude
        ``sum |x_i|`` of the reduced terms, when known: it adds an absolute allowance of
        ``n * eps * magnitude`` so cancellation does not turn rounding into a failure.
    atol
        An absolute allowance already worked out from the inputs (``var``/``std``:
        :func:`~diffcheck.values.accuracy.spread_atol`); it replaces the one from
        ``magnitude``.
    inputs
        The input dtypes, where they change the bound: ``abs`` of a complex input is
        ``hypot(real, imag)``, rounded math rather than an exact copy.

    Returns
    -------
    Bound
        The bound with its provenance.
    """
    name = (function or "").removeprefix("xp.")
    if dtype == BOOL or dtype in INTEGER:
        return Bound("exact", None, None, f"{dtype} result: exact equality")
    real = _real(dtype)
    if real not in EPSILON:
        return Bound("exact", None, None, f"{dtype} result: no float model, exact equality")
    if name == "abs" and any(d in COMPLEX for d in inputs):
        return Bound(
            "ulp", 2.0, None, f"abs of a complex input is hypot(real, imag): within 2 ULP of {real}"
        )
    if name == "sign" and any(d in COMPLEX for d in inputs):
        return Bound(
            "ulp",
            4.0,
            None,
            f"sign of a complex input is z / |z|, rounded math: within 4 ULP of {real}, "
            "componentwise or relative to |z|",
        )
    if name in EXACT_FUNCTIONS:
        return Bound("exact", None, None, f"{name} moves, selects or compares values: exact")
    if name in CORRECTLY_ROUNDED and dtype in COMPLEX and name not in ("add", "subtract"):
        return Bound(
            "ulp",
            4.0,
            None,
            f"complex {name} combines several rounded operations: within 4 ULP of {real}, "
            "componentwise or relative to |z|",
        )
    if name in CORRECTLY_ROUNDED:
        return Bound(
            "ulp", 0.0, None, f"IEEE 754 basic operation, correctly rounded in {real}: 0 ULP"
        )
    if name in TRANSCENDENTAL:
        ulps = 4.0 if dtype in COMPLEX else 2.0
        return Bound(
            "ulp",
            ulps,
            None,
            f"elementwise, each side within {ulps / 2:g} ULP of the true value: "
            f"within {ulps:g} ULP of {real}"
            + (", componentwise or relative to |z|" if dtype in COMPLEX else ""),
        )
    if name in REDUCTIONS:
        n = max(int(reduced), 1)
        # Rounding steps a sound evaluation may take: log2(n) plus a block for a robust
        # sum, n for scans, products and dot products (see diffcheck.values.accuracy).
        steps = min(n, summation_depth(name, n) + 1)
        if name in ("var", "std"):
            steps += 3  # the deviations, their squares and the division
        ulps = float(max(2 * steps, 2))
        if atol is None and magnitude is not None:
            atol = ulps * EPSILON[real] * float(magnitude)
            detail = f" or {ulps:g} * eps * sum|x| = {atol:.3g}"
        elif atol is not None:
            detail = f" or {atol:.3g} (two-pass variance bound, the mean's error included)"
        else:
            detail = ""
        robust = "a robust sum's" if name in PAIRWISE else "any order's"
        return Bound(
            "reduction",
            ulps,
            None,
            f"reduction over {n} elements, {robust} bound from n and {real}'s epsilon: "
            f"{ulps:g} ULP{detail}",
            atol,
        )
    nmse = _NMSE[real]
    what = name or "an unnamed function"
    return Bound(
        "nmse", None, nmse, f"{what}: NMSE bucket of the storage precision {real} (< {nmse:g})"
    )
