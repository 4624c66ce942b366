"""Long reductions: arrays of 10^4 to 10^6 elements, where summation error shows.

Elementwise draws stay small (each element is drawn by Hypothesis); a long array is drawn
as a few parameters instead (its length, a distribution, a scale and a seed), and its
values are made by NumPy's generator from them. Hypothesis shrinks the parameters: the
length towards 10^4, the distribution towards the first, the seed towards 0.

The distributions are the ones that expose a weak summation:

- ``constant``: one value repeated (a left-to-right float32 sum of a million 0.1s is 1%
  off);
- ``uniform``: same-signed values of one magnitude;
- ``offset``: a large mean and a small spread (``E[x^2] - E[x]^2`` loses every digit),
  the spread drawn too (2^-4 to 2^-16 of the mean), so the variance is not always one size;
- ``normal``: both signs, cancellation;
- ``lognormal``: magnitudes over several decades, both signs;
- ``near_one``: ``1 + small noise``, for products (anything else overflows long before a
  million factors).

How far each side may be from the exact result is :mod:`diffcheck.values.accuracy`'s
business; this module only draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from ..values.dtypes import COMPLEX

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn

__all__ = ["DISTRIBUTIONS", "LARGE_SHARE", "MAX_LENGTH", "MIN_LENGTH", "large_values", "length"]

MIN_LENGTH: Final = 10_000
MAX_LENGTH: Final = 1_000_000
#: One example in this many of a reduction that draws long arrays is long.
LARGE_SHARE: Final = 4
DISTRIBUTIONS: Final = ("constant", "uniform", "offset", "normal", "lognormal")
#: Steps of the log-uniform length between MIN_LENGTH and MAX_LENGTH.
_STEPS: Final = 64


def is_large(draw: DrawFn) -> bool:
    """One draw in :data:`LARGE_SHARE` is long (it shrinks towards a short one)."""
    from hypothesis import strategies as st

    return bool(draw(st.integers(0, LARGE_SHARE - 1)) == LARGE_SHARE - 1)


def length(draw: DrawFn) -> int:
    """A length log-uniform in [MIN_LENGTH, MAX_LENGTH] (it shrinks to MIN_LENGTH)."""
    from hypothesis import strategies as st

    step: int = draw(st.integers(0, _STEPS))
    ratio = MAX_LENGTH / MIN_LENGTH
    exact: float = MIN_LENGTH * ratio ** (step / _STEPS)
    return round(exact)


def _real_values(
    kind: str, size: int, scale: float, rng: np.random.Generator, spread: int = 10
) -> Any:
    if kind == "constant":
        return np.full(size, scale * (0.1 + rng.random()))
    if kind == "uniform":
        return scale * rng.random(size)
    if kind == "offset":
        return scale * (1.0 + 2.0**-spread * rng.random(size))
    if kind == "normal":
        return scale * rng.standard_normal(size)
    if kind == "lognormal":
        return scale * np.exp(2.0 * rng.standard_normal(size)) * rng.choice([-1.0, 1.0], size)
    if kind == "near_one":
        return 1.0 + scale * rng.standard_normal(size)
    raise ValueError(f"unknown distribution {kind!r}")


def large_values(
    draw: DrawFn, dtype: str, shape: tuple[int, ...], *, products: bool = False
) -> np.ndarray[Any, Any]:
    """A long array of ``dtype`` and ``shape`` from drawn parameters (see the module).

    ``products`` draws ``near_one`` values (for ``prod``/``cumulative_prod``).
    """
    from hypothesis import strategies as st

    kind = "near_one" if products else draw(st.sampled_from(DISTRIBUTIONS))
    exponent = draw(st.integers(-24, -8) if products else st.integers(-20, 20))
    seed = draw(st.integers(0, 2**32 - 1))
    spread = draw(st.integers(4, 16)) if kind == "offset" else 10
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    values = _real_values(kind, size, 2.0**exponent, rng, spread).astype(real)
    if dtype in COMPLEX:  # near one: a small imaginary part, or the product overflows
        imag_kind = "normal" if products else kind
        imag = _real_values(imag_kind, size, 2.0**exponent, rng).astype(real)
        values = (values + 1j * imag.astype(np.complex128)).astype(dtype)
    return np.ascontiguousarray(values.reshape(shape))
