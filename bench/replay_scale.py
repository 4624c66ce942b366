"""Replay of a 10^6-element gemm report against what the original run paid for its reference.

Replay now regenerates the inputs and recomputes the reference before it judges anything,
so its floor is the original run's reference time (inputs plus the NumPy reference) plus
reading the file. This prints, as medians over REPEATS runs:
- ``reference``: generating the inputs and running the reference, as the runner does;
- ``read``: reading and validating the report (bounded read, schema, sizes and digests);
- ``replay``: ``diffcheck replay``'s work: read, recompute, compare, re-derive the verdict;
- ``ratio``: replay / (reference + read); the target is <= 3.

Usage: python bench/replay_scale.py [M] [N] [K] [REPEATS]  (default 1000 1000 32 7)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.report import load_report, replay
from diffcheck.runner import run_check

TARGET = 3.0


def _median_seconds(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    m, n, k, repeats = (int(a) for a in (argv + ["1000", "1000", "32", "7"][len(argv) :]))
    check = make_check("array_api_strict", "gemm", m=m, n=n, k=k)
    reference = resolve(check.reference)

    def reference_run() -> object:
        inputs = check.op.inputs(check.params, check.seed)
        return reference.execute(check.op, check.params, inputs, "f32", role="reference")

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "gemm.json"
        run_check(check, path)
        outcome = replay(load_report(path))
        if not outcome.agrees:
            print(f"replay disagrees: {outcome.disagreements}")
            return 1
        reference_s = _median_seconds(reference_run, repeats)
        read_s = _median_seconds(lambda: load_report(path), repeats)
        replay_s = _median_seconds(lambda: replay(load_report(path)), repeats)
        size = path.stat().st_size
    ratio = replay_s / (reference_s + read_s)
    print(f"gemm m={m} n={n} k={k}: {m * n} output elements, report {size / 1e6:.1f} MB")
    print(f"reference (inputs + NumPy) {reference_s * 1e3:9.1f} ms")
    print(f"read report                {read_s * 1e3:9.1f} ms")
    print(f"replay (read + recompute + verdict) {replay_s * 1e3:9.1f} ms")
    print(f"ratio replay / (reference + read) = {ratio:.2f} (target <= {TARGET:g})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
