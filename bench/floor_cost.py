"""What the precision floor costs: ``compare`` and one sweep check, with and without it.

Prints medians, measured in one run, of:
- ``compare(fn, x, candidate=...)`` at ELEMENTS (default 10^6) float32 elements for a few
  functions (elementwise, a reduction, a matmul), with the floor and with it switched off
  (the floor's measurement replaced by None, which is what a verdict without one is);
- ``run_check`` of each default-matrix gemm and rms-norm shape (a sweep worker's work), the
  same two ways.
The targets (issue 31): compare at most 1.5x, a sweep check at most 2x.

Usage: python bench/floor_cost.py [ELEMENTS] [--candidate mlx:cpu]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import diffcheck
from diffcheck import api
from diffcheck.config import make_check
from diffcheck.runner import run as runner_run
from diffcheck.runner import run_check


@contextlib.contextmanager
def no_floor() -> Iterator[None]:
    """The floor switched off: compare's and the runner's measurements give None, and
    compare starts no float64 truth on its second thread."""
    saved = api._floor_of, runner_run.check_floor, api.TRUTH_OVERLAP_ELEMENTS
    api._floor_of = lambda *args: lambda flat, failed: None  # type: ignore[assignment]
    runner_run.check_floor = lambda *args, **kwargs: None  # type: ignore[assignment]
    api.TRUTH_OVERLAP_ELEMENTS = 1 << 62
    try:
        yield
    finally:
        api._floor_of, runner_run.check_floor, api.TRUTH_OVERLAP_ELEMENTS = saved


def timed(call: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of every thread of this process) of one call, after a
    warm-up call."""
    call()
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def both(call: Callable[[], object], repeats: int) -> tuple[float, float, float, float]:
    """Medians of (wall with the floor, wall without, CPU with, CPU without), alternating so
    load changes hit both alike. compare computes the truth on a second thread, so its
    wall-clock cost (what a user waits) is below its CPU cost where a core is free."""
    on, off = [], []
    for _ in range(repeats):
        on.append(timed(call))
        with no_floor():
            off.append(timed(call))
    return (
        statistics.median(t[0] for t in on),
        statistics.median(t[0] for t in off),
        statistics.median(t[1] for t in on),
        statistics.median(t[1] for t in off),
    )


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "exp(x) * 2": lambda xp, x: xp.exp(x) * 2.0,
    "softmax rows": lambda xp, x: (
        xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        / xp.sum(xp.exp(x - xp.max(x, axis=-1, keepdims=True)), axis=-1, keepdims=True)
    ),
    "x @ x.T (1000 x 1000)": lambda xp, x: xp.matmul(x, xp.matrix_transpose(x)),
}

CHECKS = [
    ("gemm", {"m": 64, "n": 33, "k": 35}),
    ("gemm", {"m": 128, "n": 256, "k": 512}),
    ("rms-norm", {"tokens": 64, "dim": 4096}),
    ("softmax", {"tokens": 4, "dim": 256}),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("elements", nargs="?", type=int, default=10**6)
    parser.add_argument("--candidate", default="mlx:cpu")
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    side = round(options.elements**0.5)
    x = rng.standard_normal((side, side)).astype(np.float32)
    print(
        f"compare on {options.candidate}, {x.size} float32 elements, medians of {options.repeats}"
    )
    print("| function | with floor | without | ratio | CPU time ratio |")
    print("|---|---|---|---|---|")
    for name, fn in FUNCTIONS.items():
        on, off, cpu_on, cpu_off = both(
            lambda fn=fn: diffcheck.compare(fn, x, candidate=options.candidate), options.repeats
        )
        print(
            f"| {name} | {on * 1e3:.1f} ms | {off * 1e3:.1f} ms | {on / off:.2f}x "
            f"| {cpu_on / cpu_off:.2f}x |"
        )
    print()
    print(
        f"run_check on {options.candidate} (one sweep worker's check), medians of {options.repeats}"
    )
    print("| check | with floor | without | ratio | CPU time ratio |")
    print("|---|---|---|---|---|")
    for op, params in CHECKS:
        check = make_check(options.candidate, op, seed=42, **params)
        on, off, cpu_on, cpu_off = both(lambda check=check: run_check(check), options.repeats)
        print(
            f"| {op} {params} | {on * 1e3:.1f} ms | {off * 1e3:.1f} ms | {on / off:.2f}x "
            f"| {cpu_on / cpu_off:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
