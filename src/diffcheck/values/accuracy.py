"""How far a long reduction may be from its true value: bounds that grow with its length.

The standard sets no accuracy for statistical functions or linear algebra, but "expects a
conforming implementation [...] to make a best-effort attempt to ensure that its
implementations are theoretically sound and numerically robust" (design topics,
Accuracy). Read as bounds on the error of one side against the exact result:

* ``sum``, ``mean`` (and the sums inside ``var``/``std``): a numerically robust sum is a
  blocked pairwise (or compensated) one, within ``depth(n) * u * sum|x_i|`` (each side
  is allowed twice that, ``depth(n) * eps * sum|x_i|``) with
  ``depth(n) = min(n - 1, ceil(log2 n) + 32)`` (``u`` the unit roundoff, half of epsilon).
  NumPy's pairwise sum (8 lanes over blocks of 128, then halves) has depth at most
  ``ceil(log2 n) + 25``; a plain left-to-right sum has depth ``n - 1`` and breaks it
  by orders of magnitude on long runs of same-signed terms (ten thousand float32 terms of
  0.1 sum to about 999.9 instead of 1000).
* ``cumulative_sum``/``cumulative_prod``, ``prod``, ``vecdot``, ``matmul``, ``tensordot``:
  a scan is sequential, a product's error is relative whatever the order, and BLAS dot
  products accumulate in a few lanes, so the bound is the one every order of summation
  meets, ``(n - 1) * u``. A side beyond it does not compute in its dtype at all (float64
  computed at float32 precision).
* ``var``/``std``: the two-pass algorithm with robust sums is within
  ``(depth + 3) * u * V + n * delta**2 / (n - correction)`` of the true variance ``V``,
  ``delta = depth * u * mean|x|`` being the mean's error (a mean off by ``delta`` adds
  ``n * delta**2`` to the sum of squares). The one-pass formula ``E[x^2] - E[x]^2``
  loses every digit when the mean is large against the spread, far past this bound.

:func:`true_variance` is the oracle's variance: mean and squares summed with
:func:`math.fsum` on the float64 inputs, accurate to a few float64 ULPs, far below any
bound above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "PAIRWISE",
    "SEQUENTIAL",
    "spread_atol",
    "std_allowance",
    "summation_depth",
    "true_variance",
    "variance_allowance",
]

#: Reductions held to a robust (pairwise-class) summation.
PAIRWISE = frozenset(
    [
        "sum",
        "mean",
        "var",
        "std",
        "linalg.vector_norm",
        "linalg.matrix_norm",
        "logsumexp",
    ]
)
#: Reductions held to the bound every order of evaluation meets.
SEQUENTIAL = frozenset(
    [
        "prod",
        "cumulative_sum",
        "cumulative_prod",
        "vecdot",
        "linalg.vecdot",
        "matmul",
        "linalg.matmul",
        "tensordot",
        "linalg.tensordot",
        "linalg.trace",
    ]
)
#: Rounding steps a robust sum may spend above ``ceil(log2 n)``: NumPy's leaf blocks
#: (15 additions per lane, 3 to join the 8 lanes, up to 7 for a remainder) with room.
_BLOCK_STEPS = 32


def summation_depth(function: str, n: int) -> int:
    """The rounding steps one result of ``function`` over ``n`` terms may accumulate."""
    n = max(int(n), 1)
    name = function.removeprefix("xp.")
    if name in PAIRWISE:
        return max(min(n - 1, math.ceil(math.log2(n)) + _BLOCK_STEPS), 1)
    return max(n - 1, 1)


def true_variance(terms: Sequence[float], correction: float = 0.0) -> float | None:
    """The variance of finite real ``terms`` (float64, within a few ULPs), or None.

    None when a term is not finite or ``n - correction`` is not positive.
    """
    n = len(terms)
    if n == 0 or n - correction <= 0 or not all(math.isfinite(t) for t in terms):
        return None
    mean = math.fsum(terms) / n
    # A mean off by d changes the sum of squares by n * d**2 only: negligible here.
    return math.fsum((t - mean) ** 2 for t in terms) / (n - correction)


def variance_allowance(
    terms: Sequence[float], truth: float, eps: float, correction: float = 0.0
) -> float:
    """One side's allowed error on the variance of ``terms`` (see the module's text)."""
    n = len(terms)
    depth = summation_depth("var", n)
    mean_abs = math.fsum(abs(t) for t in terms) / max(n, 1)
    delta = depth * eps * mean_abs
    spread = (depth + 3) * eps * abs(truth)
    return spread + n * delta * delta / max(n - correction, 1e-300)


def std_allowance(variance: float, allowed: float, eps: float) -> float:
    """A standard deviation's allowed error from its variance's (the square root's own)."""
    root = math.sqrt(max(variance, 0.0))
    down = root - math.sqrt(max(variance - allowed, 0.0))
    up = math.sqrt(max(variance, 0.0) + allowed) - root
    return max(down, up) + eps * root


def spread_atol(
    function: str, x: np.ndarray[Any, Any], axis: Any, correction: float, eps: float
) -> float | None:
    """How far two sides' ``var``/``std`` may part: twice one side's largest allowance.

    Computed in float64 from the inputs (not from either side's result), vectorized over
    all outputs.
    """
    name = function.removeprefix("xp.")
    if name not in ("var", "std") or x.dtype.kind != "f" or x.size == 0:
        return None
    wide = x.astype(np.float64)
    axes = tuple(range(wide.ndim)) if axis is None else axis
    with np.errstate(all="ignore"):
        n = int(np.prod([wide.shape[a] for a in (axes if isinstance(axes, tuple) else (axes,))]))
        if n - correction <= 0:
            return None
        variance = np.var(wide, axis=axes, ddof=correction)
        mean_abs = np.mean(np.abs(wide), axis=axes)
    depth = summation_depth("var", n)
    delta = depth * eps * mean_abs
    allowed = (depth + 3) * eps * np.abs(variance) + n * delta * delta / (n - correction)
    if name == "std":
        root = np.sqrt(np.maximum(variance, 0.0))
        down = root - np.sqrt(np.maximum(variance - allowed, 0.0))
        up = np.sqrt(np.maximum(variance, 0.0) + allowed) - root
        allowed = np.maximum(down, up) + eps * root
    finite = np.asarray(allowed)[np.isfinite(np.asarray(allowed))]
    return 2.0 * float(finite.max()) if finite.size else None
