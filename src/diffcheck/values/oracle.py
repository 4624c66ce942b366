"""A high-precision oracle: the true value of elementwise math and reductions.

Values are computed with ``mpmath`` from the exact inputs (every float is a dyadic
rational, so the inputs themselves are exact), at 256 bits and then at twice as many until
two answers agree (:func:`_stable`): a fixed precision can lose a part entirely
(``acos(1 + 2.2e-308j)`` needs ``1 - z**2``, whose real part ``-eps**2`` is below 256
bits of 1). Each side's distance from the truth is measured in ULPs of the output dtype at
the true value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

__all__ = [
    "ORACLE_FUNCTIONS",
    "complex_ulps_from_truth",
    "correctly_rounded",
    "true_complex",
    "true_reduction",
    "true_value",
    "ulps_from_truth",
]

_PRECISION = 256
#: The most bits :func:`_stable` tries: past it the answer is taken as unknown (None).
_MAX_PRECISION = 16384


def _agree(first: Any, second: Any, bits: int) -> bool:
    """Whether two answers agree in every component to ``bits`` bits, relative to it."""
    import mpmath

    for a, b in ((mpmath.re(first), mpmath.re(second)), (mpmath.im(first), mpmath.im(second))):
        if a == b:
            continue
        if abs(a - b) > abs(b) * mpmath.ldexp(1, -bits):
            return False
    return True


def _span(values: Sequence[float]) -> int:
    """Bits between the largest and the smallest nonzero input component: a cancellation
    between them (``1 - z**2`` of ``z = 1 + 1.5e-323j``) needs twice as many to show."""
    exponents = [math.frexp(v)[1] for v in values if v != 0 and math.isfinite(v)]
    return max(exponents) - min(exponents) if exponents else 0


def _stable(evaluate: Callable[[], Any], span: int = 0) -> Any:
    """``evaluate()`` at 256 bits, then at twice as many until two answers agree to 128 bits
    in every component (a component lost to cancellation differs from its next answer in
    every bit); None when they never agree below :data:`_MAX_PRECISION` bits. Errors of
    ``evaluate`` (a domain error, a pole) propagate."""
    import mpmath

    # Two answers lost alike agree: start where a cancellation across the inputs' span shows.
    bits = _PRECISION + 2 * span
    with mpmath.workprec(bits):
        answer = evaluate()
    while bits < _MAX_PRECISION + 2 * span:
        bits *= 2
        with mpmath.workprec(bits):
            again = evaluate()
            if _agree(answer, again, _PRECISION // 2):
                return again
        answer = again
    return None


def _logaddexp(a: Any, b: Any) -> Any:
    import mpmath

    top = max(a, b)
    return top + mpmath.log(mpmath.exp(a - top) + mpmath.exp(b - top))


@cache
def _evaluators() -> dict[str, Callable[..., Any]]:
    """The oracle's functions by the standard's name (mpmath loads on first use)."""
    import mpmath

    _mp = mpmath.mp
    return {
        "exp": _mp.exp,
        "expm1": _mp.expm1,
        "log": _mp.log,
        "log1p": _mp.log1p,
        "log2": lambda x: _mp.log(x, 2),
        "log10": _mp.log10,
        "sin": _mp.sin,
        "cos": _mp.cos,
        "tan": _mp.tan,
        "asin": _mp.asin,
        "acos": _mp.acos,
        "atan": _mp.atan,
        "sinh": _mp.sinh,
        "cosh": _mp.cosh,
        "tanh": _mp.tanh,
        "asinh": _mp.asinh,
        "acosh": _mp.acosh,
        "atanh": _mp.atanh,
        "sqrt": _mp.sqrt,
        "square": lambda x: x * x,
        "reciprocal": lambda x: 1 / x,
        "add": lambda a, b: a + b,
        "subtract": lambda a, b: a - b,
        "multiply": lambda a, b: a * b,
        "divide": lambda a, b: a / b,
        "pow": _mp.power,
        "atan2": _mp.atan2,
        "hypot": _mp.hypot,
        "logaddexp": _logaddexp,
        # The standard's definition: 0 at zero, x / |x| otherwise (complex values too).
        "sign": lambda x: x / abs(x) if x != 0 else 0 * x,
    }


#: Functions the oracle evaluates, by the standard's name.
ORACLE_FUNCTIONS = frozenset(
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
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "sqrt",
        "square",
        "reciprocal",
        "add",
        "subtract",
        "multiply",
        "divide",
        "pow",
        "atan2",
        "hypot",
        "logaddexp",
    ]
)


def true_value(function: str, args: Sequence[float]) -> Any:
    """The true result of ``function`` at finite real ``args`` (an ``mpmath.mpf``).

    None when the oracle has no such function, an argument is not finite (but for the
    finite limits of :func:`_true_at_infinity`), or the true result is not a finite real
    number (a pole, a complex value, a domain error).
    """
    import mpmath

    if function.removeprefix("xp.") == "remainder" and len(args) == 2:
        return _true_remainder(*args) if all(math.isfinite(a) for a in args) else None
    evaluate = _evaluators().get(function.removeprefix("xp."))
    if evaluate is not None and not all(math.isfinite(a) for a in args):
        return _true_at_infinity(function.removeprefix("xp."), args)
    if evaluate is None:
        return None
    try:
        result = _stable(lambda: evaluate(*(mpmath.mpf(a) for a in args)), _span(args))
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):  # TypeError: arity
        return None
    if not isinstance(result, mpmath.mpf) or not mpmath.isfinite(result):
        return None
    return result


def _true_at_infinity(function: str, args: Sequence[float]) -> Any:
    """The exact limit at an infinite argument where it is finite and no special case of
    the standard names it (those are judged before the oracle): ``logaddexp(-inf, x)`` is
    ``log(0 + exp(x)) = x`` exactly. None elsewhere."""
    import mpmath

    if function == "logaddexp" and len(args) == 2 and not any(math.isnan(a) for a in args):
        finite = [a for a in args if math.isfinite(a)]
        if len(finite) == 1 and -math.inf in args:
            return mpmath.mpf(finite[0])
    return None


def _true_remainder(x: float, y: float) -> Any:
    """``remainder`` as the standard requires it ("must match that of the Python ``%``
    operator"): ``fmod(x, y)``, which is exact, moved into the divisor's sign by adding
    ``y`` once (exactly here; the caller rounds). None for a zero divisor."""
    import mpmath

    if y == 0:
        return None
    mod = math.fmod(x, y)
    if mod == 0 or (mod < 0) == (y < 0):
        return mpmath.mpf(mod)
    with mpmath.workprec(4400):  # two doubles' sum is exact within 2,200 bits of span
        return mpmath.mpf(mod) + mpmath.mpf(y)


def correctly_rounded(truth: Any, dtype: str) -> float:
    """The value of ``dtype`` nearest ``truth`` (ties to even): the one result a correctly
    rounded operation may give. Overflow gives the infinity of the truth's sign."""
    import mpmath

    kind = np.dtype(dtype).type
    with np.errstate(over="ignore"):
        guess = kind(float(truth))
    if not np.isfinite(guess):
        return float(guess)
    with np.errstate(over="ignore"):  # the largest value's neighbour is an infinity
        candidates = [np.nextafter(guess, kind(-np.inf)), guess, np.nextafter(guess, kind(np.inf))]
    with mpmath.workprec(4400):
        exact = mpmath.mpf(truth)
        distances = [
            abs(mpmath.mpf(float(v)) - exact) if np.isfinite(v) else mpmath.inf for v in candidates
        ]
    best = min(distances)
    nearest = [v for v, d in zip(candidates, distances, strict=True) if d == best]
    bits = np.dtype(dtype).itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    even = [v for v in nearest if int(np.asarray(v).view(unsigned)) % 2 == 0]
    return float((even or nearest)[0])


_SUMS = frozenset(["sum", "cumulative_sum", "vecdot", "linalg.vecdot", "matmul", "mean"])


def true_reduction(function: str, terms: Sequence[float]) -> Any:
    """The true ``sum``/``mean``/``prod`` of real terms (an ``mpmath.mpf``).

    Float terms are exact rationals, so at 2048 bits their sum is exact (``vecdot`` passes
    the exact products of its pairs); ``prod`` and ``mean`` are rounded far below any ULP.
    """
    import mpmath

    if not all(math.isfinite(t) for t in terms):
        return None
    name = function.removeprefix("xp.")
    if name in _SUMS and all(isinstance(t, float) for t in terms):
        # math.fsum is the exactly rounded float64 sum of exact float terms: as good as the
        # exact sum for judging float32 and float64 results, and fast for a million terms.
        total = math.fsum(terms)
        return mpmath.mpf(total / len(terms) if name == "mean" and terms else total)
    with mpmath.workprec(_PRECISION * 8):  # wide enough that sums of floats are exact
        if name in ("sum", "cumulative_sum", "vecdot", "linalg.vecdot", "matmul"):
            return +mpmath.fsum(mpmath.mpf(t) for t in terms)
        if name == "mean":
            return mpmath.fsum(mpmath.mpf(t) for t in terms) / max(len(terms), 1)
        if name in ("prod", "cumulative_prod"):
            product = mpmath.mpf(1)
            for t in terms:
                product *= mpmath.mpf(t)
            return product
    return None


def ulps_from_truth(value: float, truth: Any, dtype: str) -> float:
    """How many ULPs of ``dtype`` (at the true value) separate ``value`` from ``truth``.

    The ULP is the spacing of ``dtype`` at ``truth``'s magnitude (subnormal spacing below
    the normal range), so a correctly rounded result is at most 0.5 away.
    """
    import mpmath

    if math.isnan(value):
        return math.inf
    info = np.finfo(np.float32 if dtype == "bfloat16" else np.dtype(dtype))
    bits = {"bfloat16": 8, "float16": 11, "float32": 24, "float64": 53}[dtype]
    tiny = {"bfloat16": float(info.tiny), "float16": 2.0**-14}.get(dtype, float(info.tiny))
    largest = {"bfloat16": (2 - 2.0**-7) * 2.0**127}.get(dtype, float(info.max))
    top_spacing = 2.0 ** (math.frexp(largest)[1] - 1 - (bits - 1))
    with mpmath.workprec(_PRECISION):
        truth = mpmath.mpf(truth)
        if abs(truth) >= mpmath.mpf(largest) + top_spacing / 2:
            # The correctly rounded result overflows: the right answer is that infinity.
            if math.isinf(value):
                return 0.0 if (value > 0) == (truth > 0) else math.inf
            return float((abs(truth) - abs(mpmath.mpf(value))) / top_spacing)
        if math.isinf(value):
            return math.inf  # the truth rounds to a finite value: an infinity is far off
        exponent = math.frexp(max(float(abs(truth)), tiny))[1] - 1
        spacing = 2.0 ** (exponent - (bits - 1))
        return float(abs(mpmath.mpf(value) - truth) / spacing)


#: Complex functions the oracle evaluates (principal branches, as the standard specifies).
_COMPLEX = frozenset(
    [
        "exp",
        "expm1",
        "log",
        "log1p",
        "log2",
        "log10",
        "sqrt",
        "sin",
        "cos",
        "tan",
        "sinh",
        "cosh",
        "tanh",
        "asin",
        "acos",
        "atan",
        "asinh",
        "acosh",
        "atanh",
        "square",
        "reciprocal",
        "add",
        "subtract",
        "multiply",
        "divide",
        "sign",
        "pow",  # mpmath's principal value, exp(x2*log(x1)) as the standard specifies
    ]
)


def true_complex(function: str, args: Sequence[complex]) -> Any:
    """The true complex result (an ``mpmath.mpc``) at finite ``args``, or None."""
    import mpmath

    name = function.removeprefix("xp.")
    evaluate = _evaluators().get(name)
    if name not in _COMPLEX or evaluate is None:
        return None
    if not all(math.isfinite(a.real) and math.isfinite(a.imag) for a in args):
        return None
    try:
        result = _stable(
            lambda: mpmath.mpc(evaluate(*(mpmath.mpc(a.real, a.imag) for a in args))),
            _span([part for a in args for part in (a.real, a.imag)]),
        )
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):  # TypeError: arity
        return None
    if result is None or not (mpmath.isfinite(result.real) and mpmath.isfinite(result.imag)):
        return None
    return result


def complex_ulps_from_truth(value: complex, truth: Any, dtype: str) -> float:
    """A complex value's distance from the truth, in ULPs of its component dtype.

    Each component is measured in its own ULPs, or relative to ``|truth|`` where that is
    kinder (a component far smaller than the magnitude carries no relative accuracy).
    """
    import mpmath

    part = "float32" if dtype == "complex64" else "float64"
    own = max(
        ulps_from_truth(value.real, truth.real, part),
        ulps_from_truth(value.imag, truth.imag, part),
    )
    with mpmath.workprec(_PRECISION):
        magnitude = float(abs(truth))
        error = max(
            float(abs(mpmath.mpf(value.real) - truth.real)),
            float(abs(mpmath.mpf(value.imag) - truth.imag)),
        )
    if not math.isfinite(error):
        # An infinite component: only the componentwise measure can say whether it is the
        # rounded truth (a product whose true components overflow rounds to infinities).
        return own
    relative = ulps_from_truth(magnitude + error, mpmath.mpf(magnitude), part)
    return min(own, relative)
