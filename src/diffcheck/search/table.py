"""Per function of the standard: how the search draws its arguments, or why it does not.

:data:`RECIPES` covers the 2023.12 functions (and the 2024.12 additions) by name;
:data:`SKIPPED` names every other function of :data:`~diffcheck.values.spec.STANDARD_FUNCTIONS`
with the reason it is not drawn. A test checks that the two together cover the standard, so
no function is ever dropped silently.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from ..values.spec import ADDED_2024_12, STANDARD_FUNCTIONS
from . import coupled
from .recipes import Recipe, binary, custom, reduction, unary

__all__ = ["RECIPES", "SKIPPED", "all_functions", "recipes"]


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def _nonzero(dtype: str) -> Any:
    """Divisors without integer zero (the standard specifies no integer division by 0)."""
    from .arrays import edge_values

    st = _st()
    if "int" not in dtype:
        return None
    values = [v for v in edge_values(dtype) if v != 0]
    return st.sampled_from(values) | st.integers(1, 7)


def _exponent(dtype: str) -> Any:
    """Integer exponents that are not negative (the standard leaves them undefined)."""
    st = _st()
    return st.integers(0, 9) if "int" in dtype else None


def _rhs(maker: Any) -> Any:
    """``rhs`` for :func:`binary`: ``maker(dtype)``, or the default draw where it gives None."""

    def elements(dtype: str) -> Any:
        from .arrays import edge_values

        made = maker(dtype)
        if made is not None:
            return made
        from .arrays import strategies_namespace

        st = _st()
        return st.sampled_from(edge_values(dtype)) | strategies_namespace().from_dtype(dtype)

    return elements


_UNARY = {
    "abs": "numeric",
    "acos": "floating",
    "acosh": "floating",
    "asin": "floating",
    "asinh": "floating",
    "atan": "floating",
    "atanh": "floating",
    "bitwise_invert": "integer_or_bool",
    "ceil": "real",
    "conj": "numeric",
    "cos": "floating",
    "cosh": "floating",
    "exp": "floating",
    "expm1": "floating",
    "floor": "real",
    "imag": "complex",
    "isfinite": "numeric",
    "isinf": "numeric",
    "isnan": "numeric",
    "log": "floating",
    "log1p": "floating",
    "log2": "floating",
    "log10": "floating",
    "logical_not": "bool",
    "negative": "numeric",
    "positive": "numeric",
    "real": "complex",
    "reciprocal": "floating",
    "round": "numeric",
    "sign": "numeric",
    "signbit": "real_floating",
    "sin": "floating",
    "sinh": "floating",
    "square": "numeric",
    "sqrt": "floating",
    "tan": "floating",
    "tanh": "floating",
    "trunc": "real",
    "asarray": "any",
    "matrix_transpose": "any",
}
_BINARY = {
    "add": "numeric",
    "atan2": "real_floating",
    "bitwise_and": "integer_or_bool",
    "bitwise_or": "integer_or_bool",
    "bitwise_xor": "integer_or_bool",
    "copysign": "real_floating",
    "divide": "floating",
    "equal": "any",
    "greater": "real",
    "greater_equal": "real",
    "hypot": "real_floating",
    "less": "real",
    "less_equal": "real",
    "logaddexp": "real_floating",
    "logical_and": "bool",
    "logical_or": "bool",
    "logical_xor": "bool",
    "maximum": "real",
    "minimum": "real",
    "multiply": "numeric",
    "nextafter": "real_floating",
    "not_equal": "any",
    "subtract": "numeric",
}


def _table() -> dict[str, Recipe]:
    st = _st()
    table: dict[str, Recipe] = {name: unary(cat) for name, cat in _UNARY.items()}
    table["matrix_transpose"] = custom("any", partial(coupled.matrix_like, category="any"))
    # asarray(obj, copy=): never (False), always (True) or as needed (None, left out).
    table["asarray"] = replace(
        unary("any", copy=st.none() | st.booleans()), keyword_values=(("copy", (True, False)),)
    )
    table.update({name: binary(cat) for name, cat in _BINARY.items()})
    # Divisors drawn nonzero: a dtype row keeps every value exactly or is all ones, so its
    # divisors stay nonzero (torch refuses uint16 floor_divide: a peer's suite found it).
    table["floor_divide"] = replace(binary("real", rhs=_rhs(_nonzero)), dtype_rows=True)
    table["remainder"] = replace(binary("real", rhs=_rhs(_nonzero)), dtype_rows=True)
    table["pow"] = binary("numeric", rhs=_rhs(_exponent))
    table["bitwise_left_shift"] = binary("integer", shift=True)
    table["bitwise_right_shift"] = binary("integer", shift=True)
    table["clip"] = custom("real", coupled.clip)
    table["where"] = custom("any", coupled.where)
    # creation
    table["arange"] = custom("signed", coupled.arange)
    table["eye"] = custom("numeric", coupled.eye)
    table["full"] = custom("real", coupled.full)
    table["full_like"] = custom("real", partial(coupled.like, fill=True))
    table["linspace"] = custom("real_floating", coupled.linspace)
    table["meshgrid"] = custom("numeric", coupled.meshgrid)
    table["ones"] = custom("numeric", coupled.creation_shape)
    table["zeros"] = custom("numeric", coupled.creation_shape)
    table["ones_like"] = custom("any", coupled.like)
    table["zeros_like"] = custom("any", coupled.like)
    table["tril"] = custom("numeric", partial(coupled.matrix_like, k=3))
    table["triu"] = custom("numeric", partial(coupled.matrix_like, k=3))
    # data types
    table["astype"] = custom("any", coupled.astype)
    table["can_cast"] = custom("any", coupled.can_cast)
    # indexing, linear algebra, manipulation
    table["take"] = custom("any", coupled.take)
    table["take_along_axis"] = custom("any", coupled.take_along_axis)
    table["matmul"] = custom("numeric", coupled.matmul)
    table["tensordot"] = custom("numeric", coupled.tensordot)
    table["vecdot"] = custom("numeric", coupled.vecdot)
    table["broadcast_arrays"] = binary("any")
    table["concat"] = custom("any", coupled.sequence)
    table["stack"] = custom("any", partial(coupled.sequence, stack=True))
    for what in (
        "broadcast_to",
        "expand_dims",
        "flip",
        "moveaxis",
        "permute_dims",
        "repeat",
        "reshape",
        "roll",
        "squeeze",
        "tile",
        "unstack",
        "diff",
    ):
        table[what] = custom("any", partial(coupled.reshape_like, what=what))
    # searching, sorting, sets
    table["argmax"] = reduction("real", many_axes=False)
    table["argmin"] = reduction("real", many_axes=False)
    table["nonzero"] = custom("any", lambda draw, space: _one(draw, space, "any", min_dims=1))
    table["count_nonzero"] = reduction("any")
    table["searchsorted"] = custom("real", coupled.sorted_search)
    for name in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
        table[name] = custom("real", lambda draw, space: _one(draw, space, "real"))
    # Optional keywords are sometimes left out, so a backend that lacks one still has its
    # values searched (the keyword's absence is then its own finding: raises).
    maybe = st.none() | st.booleans()
    sort_options = {"descending": maybe, "stable": st.none() | st.just(True)}
    sort_values = (("descending", (True, False)), ("stable", (True,)))
    for name in ("argsort", "sort"):
        table[name] = replace(
            reduction("real", keepdims=False, many_axes=False, min_dims=1, **sort_options),
            keyword_values=sort_values,
        )
    # statistics and utilities
    for name in ("max", "min"):
        table[name] = reduction("real", min_dims=1)
    # Long arrays (10^4 to 10^6 elements) now and then, where summation error shows.
    table["sum"] = reduction("numeric", large="sums", dtype_keyword=True)
    table["prod"] = reduction("numeric", large="products", dtype_keyword=True)
    table["mean"] = reduction("floating", large="sums")
    # correction is "int | float" (>= 0): whole numbers of either type, and fractions.
    correction = st.sampled_from([None, 0, 1, 0.0, 1.0]) | st.floats(0.0, 2.0)
    for name in ("std", "var"):
        table[name] = replace(
            reduction("real_floating", large="sums", correction=correction),
            keyword_values=(("correction", (0.5,)),),
        )
    for name, large in (("cumulative_sum", "sums"), ("cumulative_prod", "products")):
        table[name] = reduction(
            "numeric",
            keepdims=False,
            many_axes=False,
            min_dims=1,
            large=large,
            dtype_keyword=True,
            include_initial=maybe,
        )
        table[name] = replace(table[name], keyword_values=(("include_initial", (True, False)),))
    table["all"] = reduction("any")
    table["any"] = reduction("any")
    _linalg_and_fft(table)
    return table


def _one(draw: Any, space: Any, category: str, min_dims: int = 0) -> Any:
    from .recipes import Example

    dtype = draw(space.dtype(category))
    return Example((draw(space.array(dtype, space.shape(min_dims=min_dims))),))


def _linalg_and_fft(table: dict[str, Recipe]) -> None:
    st = _st()
    square = coupled.square
    table["linalg.cholesky"] = custom("real_floating", partial(square, kind="spd"))
    table["linalg.cross"] = custom("numeric", coupled.cross)
    table["linalg.det"] = custom("real_floating", partial(square, kind="dominant"))
    table["linalg.diagonal"] = custom("numeric", partial(coupled.matrix_like, offset=2))
    table["linalg.eigvalsh"] = custom("real_floating", partial(square, kind="symmetric"))
    table["linalg.inv"] = custom("real_floating", partial(square, kind="dominant"))
    table["linalg.matmul"] = custom("numeric", coupled.matmul)
    table["linalg.matrix_norm"] = custom("real_floating", coupled.matrix_norm)
    table["linalg.matrix_power"] = custom("real_floating", coupled.matrix_power)
    table["linalg.matrix_rank"] = custom("real_floating", partial(square, kind="dominant"))
    table["linalg.matrix_transpose"] = custom("any", partial(coupled.matrix_like, category="any"))
    table["linalg.outer"] = custom("numeric", coupled.outer)
    table["linalg.pinv"] = custom("real_floating", partial(square, kind="dominant"))
    table["linalg.slogdet"] = custom("real_floating", partial(square, kind="dominant"))
    table["linalg.solve"] = custom("real_floating", coupled.solve)
    table["linalg.svdvals"] = custom("real_floating", partial(square, kind="general"))
    table["linalg.tensordot"] = custom("numeric", coupled.tensordot)
    table["linalg.trace"] = custom("numeric", partial(coupled.matrix_like, offset=2))
    table["linalg.vecdot"] = custom("numeric", coupled.vecdot)
    table["linalg.vector_norm"] = custom("floating", coupled.vector_norm)
    fft = coupled.fft
    for name, category in (("fft", "complex"), ("ifft", "complex"), ("rfft", "real_floating")):
        table[f"fft.{name}"] = custom(category, partial(fft, category=category))
    for name, category in (("irfft", "complex"), ("hfft", "complex")):
        table[f"fft.{name}"] = custom(category, partial(fft, category=category, output_n=True))
    table["fft.ihfft"] = custom("real_floating", partial(fft, category="real_floating"))
    for name, category in (
        ("fftn", "complex"),
        ("ifftn", "complex"),
        ("rfftn", "real_floating"),
    ):
        table[f"fft.{name}"] = custom(category, partial(fft, category=category, nd=True))
    table["fft.irfftn"] = custom("complex", coupled.irfftn)
    table["fft.fftfreq"] = custom("any", coupled.fftfreq)
    table["fft.rfftfreq"] = custom("any", coupled.fftfreq)
    for name in ("fftshift", "ifftshift"):
        table[f"fft.{name}"] = custom(
            "numeric", lambda draw, space: _one(draw, space, "numeric", min_dims=1)
        )
    del st


#: Functions of the standard the search does not draw, each with the reason.
SKIPPED: dict[str, str] = {
    "empty": "its values are unspecified (uninitialized memory): no value to compare",
    "empty_like": "its values are unspecified (uninitialized memory): no value to compare",
    "from_dlpack": "needs a producer array of another library; moving arrays is not a value",
    "finfo": "returns an info object, not an array: outside the value model",
    "iinfo": "returns an info object, not an array: outside the value model",
    "isdtype": "takes and returns no array (a dtype and a kind name): outside the value model",
    "result_type": "returns a dtype, not an array: outside the value model",
    "linalg.eigh": "eigenvectors are defined only up to sign and rotation: compared "
    "through linalg.eigvalsh",
    "linalg.qr": "Q and R are defined only up to the signs of R's diagonal: no unique value",
    "linalg.svd": "singular vectors are defined only up to sign: compared through linalg.svdvals",
}


def all_functions() -> tuple[str, ...]:
    """Every function of the standard (2023.12 and the 2024.12 additions), in its order."""
    names = [name for names in STANDARD_FUNCTIONS.values() for name in names]
    return tuple(dict.fromkeys([*names, *ADDED_2024_12]))


RECIPES: dict[str, Recipe] = {}


def recipes() -> dict[str, Recipe]:
    """The table (built on first use: it needs Hypothesis)."""
    if not RECIPES:
        RECIPES.update(_table())
    return RECIPES
