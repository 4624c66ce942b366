"""Blame for reductions over NaN and infinite terms: the IEEE 754 result and the rule, named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diffcheck.values import blame, compare_values

INF, NAN = math.inf, math.nan

# function, terms, a wrong result, the evidence, the rule and the result it requires.
CASES = [
    ("max", [1.0, NAN, 3.0], [3.0], "special-case", "the standard: NaN values propagate", "nan"),
    ("min", [1.0, NAN, 3.0], [1.0], "special-case", "the standard: NaN values propagate", "nan"),
    ("max", [1.0, 5.0, 3.0], [4.0], "standard-rule", "max/min select a term exactly", "5.0"),
    ("min", [1.0, 5.0, 3.0], [2.0], "standard-rule", "max/min select a term exactly", "1.0"),
    ("sum", [1.0, NAN], [1.0], "special-case", "IEEE 754: a NaN term makes the result NaN", "nan"),
    ("sum", [INF, -INF, 1.0], [INF], "special-case", "IEEE 754: +inf + -inf is NaN", "nan"),
    (
        "sum",
        [2.0, INF, INF],
        [NAN],
        "special-case",
        "IEEE 754: an infinite term dominates the sum",
        "inf",
    ),
    (
        "mean",
        [1.0, -INF],
        [NAN],
        "special-case",
        "IEEE 754: an infinite term dominates the sum",
        "-inf",
    ),
    ("prod", [INF, 0.0], [INF], "special-case", "IEEE 754: inf * 0 is NaN", "nan"),
    ("prod", [INF, 1.0, 2.0], [NAN], "special-case", "IEEE 754: an infinite factor", "inf"),
    # The sign of an infinite product: the parity of the negative factors.
    ("prod", [-INF, 2.0], [INF], "special-case", "IEEE 754: an infinite factor", "-inf"),
    ("prod", [-INF, 2.0, -3.0], [-INF], "special-case", "IEEE 754: an infinite factor", "inf"),
    ("prod", [-INF, -1.0, -2.0], [INF], "special-case", "IEEE 754: an infinite factor", "-inf"),
    (
        "cumulative_sum",
        [1.0, INF, -INF],
        [1.0, INF, INF],
        "special-case",
        "IEEE 754: +inf + -inf is NaN",
        "nan",
    ),
    (
        "cumulative_prod",
        [2.0, -INF, 0.0],
        [2.0, -INF, -INF],
        "special-case",
        "IEEE 754: inf * 0 is NaN",
        "nan",
    ),
    (
        "cumulative_prod",
        [2.0, -INF],
        [2.0, INF],
        "special-case",
        "IEEE 754: an infinite factor",
        "-inf",
    ),
]


@pytest.mark.parametrize(("function", "terms", "wrong", "evidence", "rule", "value"), CASES)
def test_a_reduction_over_nan_or_infinities_blames_the_side_that_breaks_ieee(
    function: str, terms: list[float], wrong: list[float], evidence: str, rule: str, value: str
) -> None:
    x = np.array(terms, np.float32)
    with np.errstate(all="ignore"):
        right = np.asarray(getattr(np, function)(x))
    bad = np.array(wrong, np.float32).reshape(right.shape)
    at = [] if right.ndim == 0 else [len(terms) - 1]
    verdict = compare_values(right, bad, function=function)
    judged = blame(function, [x], {}, right, bad, verdict)
    assert (judged.side, judged.evidence) == ("candidate", evidence)
    assert judged.why == (
        f"{rule}: {function} must be {value} at {at}; reference {float(right.flat[-1])!r}, "
        f"candidate {float(bad.flat[-1])!r}"
    )
    swapped = compare_values(bad, right, function=function)
    assert blame(function, [x], {}, bad, right, swapped).side == "reference"
