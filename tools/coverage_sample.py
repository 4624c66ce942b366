"""Distinct values of each class that the API search draws per function (no backend runs).

Draws ``--examples`` examples of each function's recipe exactly as the search's first
phase does (Hypothesis, derandomized by ``--seed``) and prints
:func:`diffcheck.search.values.coverage_counts` for one dtype::

    python tools/coverage_sample.py --dtype float32 --examples 100 exp log sin
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, seed, settings

from diffcheck.search.arrays import Space
from diffcheck.search.table import recipes
from diffcheck.search.values import CLASSES, coverage_counts
from diffcheck.values.spec import STANDARD_DTYPES


def sample(function: str, examples: int, at: int) -> list[Any]:
    """``examples`` drawn examples of ``function``'s recipe."""
    drawn: list[Any] = []
    space = replace(Space(STANDARD_DTYPES), function=function)

    @seed(at)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(recipes()[function].draw(space))
    def collect(example: Any) -> None:
        drawn.append(example)

    collect()
    return drawn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("functions", nargs="+")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    print("function".ljust(16) + "".join(c.rjust(10) for c in CLASSES))
    for function in options.functions:
        counts = coverage_counts(sample(function, options.examples, options.seed), options.dtype)
        print(function.ljust(16) + "".join(str(counts[c]).rjust(10) for c in CLASSES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
