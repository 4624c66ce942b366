"""Float elements drawn where backends break, with stated shares, and counted.

Each element of a floating-point array is drawn from one of five classes, chosen by a
Hypothesis draw with these shares (:data:`SHARES`, out of 100):

- **ordinary** (45): log-uniform across the dtype's whole finite normal range, both signs,
  so small, moderate and huge magnitudes are equally likely; for a function with a
  domain of its own (:func:`domain_of`: exp's inputs whose result is finite and normal,
  asin's [-1, 1]) half of them uniform over that domain instead, where a log-uniform
  draw seldom lands (float32 ``exp`` was 45.6 ULP off at -79.3, inside a range a
  log-uniform draw reaches about once in 170);
- **interesting** (20): the function's own points (near zeros and poles, overflow and
  underflow thresholds such as exp's, integer and half-integer boundaries for rounding,
  multiples of pi/2 for trig functions), each moved a few ULPs either way;
- **subnormal** (5): uniform over the dtype's subnormals, both signs;
- **special** (20): the values the standard's special cases name for the function (NaN,
  infinities, signed zeros, +-1, ...) and the dtype's edges, signed zeros, infinities and
  NaN weighing double (most special cases turn on them);
- **hypothesis** (10): Hypothesis' own draws for the dtype.

:func:`coverage_counts` counts, per function, the distinct values of each class an
iterable of drawn examples holds, so a run can show what it covered.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from ..values.dtypes import COMPLEX

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "CLASSES",
    "SHARES",
    "SWEEP_LENGTH",
    "classify",
    "coverage_counts",
    "domain_of",
    "float_elements",
    "points_of",
    "sweep",
]

#: Elements of a sweep row (:func:`sweep`).
SWEEP_LENGTH: Final = 48

#: Each class's share of float elements, out of 100.
SHARES: Final = {"ordinary": 45, "interesting": 20, "subnormal": 5, "special": 20, "hypothesis": 10}
#: The classes :func:`coverage_counts` reports (a drawn value's class, by its value alone).
CLASSES: Final = ("ordinary", "subnormal", "zero", "infinite", "nan")

_HALF_PI = math.pi / 2


def _real(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def _thresholds(real: str) -> dict[str, float]:
    info = np.finfo(real)
    big, tiny = float(info.max), float(info.smallest_normal)
    return {
        "log_max": math.log(big),
        "log_tiny": math.log(tiny),
        "log_sub": math.log(float(info.smallest_subnormal)),
        "sqrt_max": math.sqrt(big),
        "int_limit": 2.0 ** (info.nmant + 1),  # above it every float is an integer
        "cosh_max": math.log(big) + math.log(2.0),
        "eps": float(info.eps),
        "max": big,
        "tiny": tiny,
    }


def points_of(function: str, dtype: str) -> list[float]:
    """The function's interesting points for ``dtype`` (before moving them a few ULPs)."""
    t = _thresholds(_real(dtype))
    name = function.rsplit(".", 1)[-1]
    points = [0.0, 1.0, -1.0]
    halves = [k + 0.5 for k in range(-4, 4)] + [float(k) for k in range(-3, 4)]
    trig = [k * _HALF_PI for k in range(-8, 9)] + [1e4, 1e6, t["int_limit"], 0.5 * t["max"]]
    table: dict[str, list[float]] = {
        "exp": [t["log_max"], t["log_tiny"], t["log_sub"], -t["log_max"]],
        "expm1": [t["log_max"], t["eps"], -t["eps"], 1e-8, -40.0],
        "log": [t["max"], t["tiny"], 1.0 + t["eps"], 1.0 - t["eps"] / 2],
        "log1p": [-1.0 + t["eps"] / 2, t["eps"], -t["eps"], t["max"]],
        "sqrt": [t["max"], t["tiny"], 4.0, 2.0],
        "sin": trig,
        "cos": trig,
        "tan": trig,
        "asin": [0.5, -0.5, 1.0 - t["eps"]],
        "atanh": [0.5, -0.5, 1.0 - t["eps"], -1.0 + t["eps"]],
        "acosh": [1.0 + t["eps"], 2.0, t["max"]],
        "sinh": [t["cosh_max"], -t["cosh_max"], 1e-8],
        "cosh": [t["cosh_max"], -t["cosh_max"]],
        "tanh": [9.0, -9.0, 20.0, 1e-8],
        "round": [*halves, t["int_limit"], -t["int_limit"], t["int_limit"] / 2 + 0.5],
        "floor": [*halves, t["int_limit"], -t["int_limit"]],
        "ceil": [*halves, t["int_limit"], -t["int_limit"]],
        "trunc": [*halves, t["int_limit"], -t["int_limit"]],
        "square": [t["sqrt_max"], -t["sqrt_max"], math.sqrt(t["tiny"])],
        "multiply": [t["sqrt_max"], math.sqrt(t["tiny"])],
        "reciprocal": [t["tiny"], t["max"], 1.0 / t["max"]],
        "divide": [t["tiny"], t["max"], 0.5],
        "pow": [2.0, 0.5, -0.5, 3.0, t["sqrt_max"], 10.0],
        "hypot": [t["sqrt_max"], t["max"] / 2, t["tiny"]],
        "logaddexp": [t["log_max"], -t["log_max"], 100.0, -100.0],
        "remainder": [0.5, -0.5, 2.0, 3.0, t["int_limit"]],
        "floor_divide": [0.5, -0.5, 2.0, 3.0, t["int_limit"]],
        "atan2": [t["tiny"], t["max"]],
        "nextafter": [t["max"], t["tiny"]],
    }
    for alias, same in (("log2", "log"), ("log10", "log"), ("acos", "asin"), ("atan", "tanh")):
        table.setdefault(alias, table[same])
    return points + table.get(name, [])


def domain_of(function: str, dtype: str) -> tuple[float, float] | None:
    """The interval a function's ordinary inputs are drawn uniformly from, or None.

    The inputs whose result is finite and normal, or the range where its accuracy is
    usually tested: uniform over it, the ordinary range is reached, not only its ends.
    """
    t = _thresholds(_real(dtype))
    name = function.rsplit(".", 1)[-1]
    table: dict[str, tuple[float, float]] = {
        "exp": (t["log_tiny"], t["log_max"]),
        "expm1": (t["log_tiny"], t["log_max"]),
        "sinh": (-t["cosh_max"], t["cosh_max"]),
        "cosh": (-t["cosh_max"], t["cosh_max"]),
        "tanh": (-20.0, 20.0),
        "atan": (-20.0, 20.0),
        "sin": (-1024.0, 1024.0),
        "cos": (-1024.0, 1024.0),
        "tan": (-1024.0, 1024.0),
        "asin": (-1.0, 1.0),
        "acos": (-1.0, 1.0),
        "atanh": (-1.0, 1.0),
        "acosh": (1.0, 1024.0),
        "log": (0.0, 1024.0),
        "log2": (0.0, 1024.0),
        "log10": (0.0, 1024.0),
        "log1p": (-1.0, 1024.0),
        "sqrt": (0.0, 1024.0),
        "pow": (-32.0, 32.0),
        "logaddexp": (-128.0, 128.0),
        "atan2": (-1024.0, 1024.0),
        "hypot": (-1024.0, 1024.0),
    }
    return table.get(name)


def _special(function: str, dtype: str) -> list[float]:
    """The values the standard's special cases for ``function`` name, and the dtype's edges."""
    from ..values.special_cases import RULES
    from .arrays import edge_values

    named = {
        "nan": [math.nan],
        "+inf": [math.inf],
        "-inf": [-math.inf],
        "inf": [math.inf, -math.inf],
        "+0": [0.0],
        "-0": [-0.0],
        "0": [0.0, -0.0],
        "1": [1.0],
        "-1": [-1.0],
        ">1": [2.0],
        "<1": [0.5],
        "<-1": [-2.0],
        "abs<1": [0.5, -0.5],
        "abs>1": [2.0, -2.0],
        "abs=1": [1.0, -1.0],
        "odd": [3.0, -3.0],
        "nonint": [2.5, -0.5],
    }
    common = [0.0, -0.0, math.inf, -math.inf, math.nan]
    values = [*common, *(v for v in edge_values(_real(dtype)) if isinstance(v, float))]
    for conditions, _ in RULES.get(function.rsplit(".", 1)[-1], []):
        for condition in conditions:
            values.extend(named.get(condition, []))
    return values


def float_elements(dtype: str, function: str = "") -> SearchStrategy[Any]:
    """Elements of a float (or complex) array of ``dtype`` in the shares of :data:`SHARES`."""
    from hypothesis import strategies as st

    from .arrays import strategies_namespace

    real = _real(dtype)
    info = np.finfo(real)
    low, high = math.log2(float(info.smallest_normal)), math.log2(float(info.max))
    cast = np.dtype(real).type

    def fit(value: float) -> float:
        return float(cast(value)) if math.isfinite(value) or math.isnan(value) else value

    # Log-uniform from one wide integer (Hypothesis' float draws favour round numbers
    # and the ends of a range, which would repeat a few values): its low bits choose the
    # binary exponent uniformly, its high bits the mantissa and the sign.
    span = int(high - low)
    ordinary = st.integers(0, 2**62 - 1).map(
        lambda u: fit(
            (-1.0 if (u >> 61) & 1 else 1.0)
            * math.ldexp(1.0 + ((u // span) % 2**52) / 2**52, int(low) + u % span)
        )
    )
    domain = domain_of(function, dtype)
    if domain is not None:  # half over the function's own domain (uniform: its middle too)
        lo, width = domain[0], domain[1] - domain[0]
        # Hypothesis favours small integers: a multiplicative hash spreads them over [0, 1).
        inside = st.integers(0, 2**62 - 1).map(
            lambda u: fit(lo + width * (((u * 0x9E3779B97F4A7C15) % 2**64) / 2**64))
        )
        ordinary = st.one_of(ordinary, inside)
    points = points_of(function, dtype)

    def near(point: float, steps: int) -> float:
        value = cast(point)
        toward = cast(math.inf if steps > 0 else -math.inf)
        with np.errstate(over="ignore"):  # a step past the largest float is infinity
            for _ in range(abs(steps)):
                value = np.nextafter(value, toward)
        return float(value)

    interesting = st.builds(near, st.sampled_from(points), st.integers(-4, 4)).map(fit)
    count = round(float(info.smallest_normal) / float(info.smallest_subnormal))
    subnormal = st.builds(
        lambda negative, k: fit((-1.0 if negative else 1.0) * k * float(info.smallest_subnormal)),
        st.booleans(),
        st.integers(1, count - 1),
    )
    special = st.sampled_from(_special(function, dtype)).map(fit)
    own = strategies_namespace().from_dtype(real)
    by_class = {
        "ordinary": ordinary,
        "interesting": interesting,
        "subnormal": subnormal,
        "special": special,
        "hypothesis": own,
    }
    weighted = [name for name, share in SHARES.items() for _ in range(share // 5)]
    classes = st.sampled_from(weighted).flatmap(lambda name: by_class[name])
    reals = classes
    if dtype in COMPLEX:
        return st.builds(complex, reals, reals)
    return reals


def classify(value: float, dtype: str) -> str:
    """A drawn value's class by its value alone: ordinary, subnormal, zero, infinite, nan."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "infinite"
    if value == 0:
        return "zero"
    if abs(value) < float(np.finfo(_real(dtype)).smallest_normal):
        return "subnormal"
    return "ordinary"


def coverage_counts(examples: Iterable[Any], dtype: str | None = None) -> dict[str, int]:
    """Distinct drawn values of each class of :data:`CLASSES`, over ``examples``' arrays.

    ``examples`` are :class:`~diffcheck.search.recipes.Example` (anything with ``args``);
    ``dtype`` counts only arrays of that dtype. Float arrays count by value (complex ones
    per component); integer and bool arrays count as ``ordinary``/``zero`` by value.
    """
    seen: dict[str, set[Any]] = {name: set() for name in CLASSES}
    for example in examples:
        for arg in getattr(example, "args", ()):
            if not isinstance(arg, np.ndarray) or arg.size == 0:
                continue
            if dtype is not None and str(arg.dtype) != dtype:
                continue
            name = str(arg.dtype)
            flat = arg.reshape(-1)
            if arg.dtype.kind == "c":
                flat = np.concatenate([flat.real, flat.imag])
            for value in np.unique(flat).tolist():
                if arg.dtype.kind in "fc":
                    kind = classify(float(value), name)
                    key: Any = (name, "nan" if kind == "nan" else float(value))
                else:
                    kind = "zero" if value == 0 else "ordinary"
                    key = (name, int(value))
                seen[kind].add(key)
    return {name: len(values) for name, values in seen.items()}


def sweep(seed: int, dtype: str, function: str = "") -> np.ndarray[Any, Any]:
    """A row of :data:`SWEEP_LENGTH` float elements in the shares of :data:`SHARES`, from a seed.

    Hypothesis' first draws of an array are small (one to three elements) and it draws
    few examples per function, so a function would see a handful of values in a run. A
    sweep takes the same classes (ordinary log-uniform over the whole finite range with
    both signs, the function's points a few ULPs off, subnormals, special values; the
    ``hypothesis`` share goes to ordinary values) from NumPy's generator seeded by one
    drawn integer, so each sweep adds dozens of distinct values.
    """
    real = _real(dtype)
    info = np.finfo(real)
    rng = np.random.default_rng(seed)
    cast = np.dtype(real).type
    low, high = math.log2(float(info.smallest_normal)), math.log2(float(info.max))
    points = points_of(function, dtype)
    specials = _special(function, dtype)
    domain = domain_of(function, dtype)
    count = round(float(info.smallest_normal) / float(info.smallest_subnormal))
    names = [name for name, share in SHARES.items() for _ in range(share // 5)]
    values: list[float] = []
    for _ in range(SWEEP_LENGTH * (2 if dtype in COMPLEX else 1)):
        name = names[int(rng.integers(len(names)))]
        if name == "interesting":
            value = cast(points[int(rng.integers(len(points)))])
            toward = cast(math.inf if rng.integers(2) else -math.inf)
            with np.errstate(over="ignore"):
                for _ in range(int(rng.integers(0, 5))):
                    value = np.nextafter(value, toward)
            values.append(float(value))
        elif name == "subnormal":
            k = int(rng.integers(1, count))
            values.append(
                float(cast((-1.0 if rng.integers(2) else 1.0) * k * float(info.smallest_subnormal)))
            )
        elif name == "special":
            values.append(float(cast(specials[int(rng.integers(len(specials)))])))
        elif domain is not None and rng.integers(2):  # half over the function's domain
            values.append(float(cast(rng.uniform(domain[0], domain[1]))))
        else:
            exponent = rng.uniform(low, high)
            values.append(float(cast((-1.0 if rng.integers(2) else 1.0) * 2.0**exponent)))
    row = np.asarray(values, dtype=real)
    if dtype in COMPLEX:
        pairs = np.empty(SWEEP_LENGTH, dtype)  # parts set apart: inf * 1j would be NaN
        pairs.real, pairs.imag = row[:SWEEP_LENGTH], row[SWEEP_LENGTH:]
        return pairs
    return row
