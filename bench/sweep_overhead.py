"""Per-check cost of a sweep: warm isolated workers, cold isolated workers, and in-process.

Measured in one run, each figure the median over REPEATS whole sweeps of per-check wall time
(sweep wall time / checks):

- ``in-process``: ``run_check`` with a report file, one check after the other, in this warm
  interpreter (no isolation at all: the floor);
- ``isolated, warm``: ``run_sweep`` with the local executor's warm workers (forked from the
  fork server, reused for up to 100 checks of a backend pair), ``JOBS`` at a time;
- ``isolated, cold``: the same sweep with ``--isolation cold`` (a fresh
  ``python -m diffcheck.sweep.worker`` per check), over fewer checks (it is slow; the
  per-check cost does not depend on the count).

Every isolated sweep includes all the parent's work: planning is excluded, but report
settling, reading every report back, summary.json, junit.xml and index.html are included.
The check is deliberately trivial (gemm 1x3x5 on numpy -> array_api_strict) so the figures
are the overhead; real checks add the same fixed cost. Prints the per-check milliseconds
and the ratios warm / in-process, cold / in-process and cold / warm.

Usage: python bench/sweep_overhead.py [CHECKS] [REPEATS] [JOBS]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from diffcheck.config import make_check
from diffcheck.runner import run_check
from diffcheck.sweep.executors import LocalExecutor
from diffcheck.sweep.matrix import parse_matrix
from diffcheck.sweep.plan import SweepPlan, plan_matrix
from diffcheck.sweep.run import run_sweep


def _plan(checks: int) -> SweepPlan:
    return plan_matrix(
        parse_matrix(
            {
                "schema_version": 1,
                "pairs": [{"candidate": "array_api_strict"}],
                "defaults": {"seeds": list(range(checks))},
                "ops": {"gemm": {"shapes": [{"m": 1, "n": 3, "k": 5}]}},
            }
        )
    )


def _sweep_per_check(root: Path, checks: int, jobs: int, isolation: str) -> float:
    plan = _plan(checks)
    matrix = root / "matrix.toml"
    matrix.write_text("# the benchmark's matrix is built in code\n")
    out = Path(tempfile.mkdtemp(dir=root))
    started = time.perf_counter()
    summary, _ = run_sweep(
        plan,
        matrix=matrix,
        out=out / "sweep",
        executor=LocalExecutor(jobs, isolation=isolation),
        timeout_s=120,
    )
    elapsed = time.perf_counter() - started
    if summary.counts.passed != checks:
        raise SystemExit(f"sweep_overhead: {isolation} sweep did not pass: {summary.counts}")
    return elapsed / checks


def _in_process_per_check(root: Path, checks: int) -> float:
    out = Path(tempfile.mkdtemp(dir=root))
    started = time.perf_counter()
    for seed in range(checks):
        check = make_check("array_api_strict", "gemm", m=1, n=3, k=5, seed=seed)
        run_check(check, out / f"{seed}.json")
    return (time.perf_counter() - started) / checks


def main() -> None:
    checks = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else (os.cpu_count() or 1)
    cold_checks = max(10, checks // 4)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        _in_process_per_check(root, 5)  # warm-up: imports, first allocation, page cache
        _sweep_per_check(root, 4, jobs, "warm")  # warm-up: the fork server starts once
        figures = {
            "in-process": [_in_process_per_check(root, checks) for _ in range(repeats)],
            "isolated, warm": [
                _sweep_per_check(root, checks, jobs, "warm") for _ in range(repeats)
            ],
            "isolated, cold": [
                _sweep_per_check(root, cold_checks, jobs, "cold") for _ in range(repeats)
            ],
        }
    median = {label: statistics.median(values) for label, values in figures.items()}
    print(
        f"check: numpy -> array_api_strict gemm 1x3x5 f32; {jobs} jobs; median of {repeats} "
        f"sweeps ({checks} checks; cold: {cold_checks})"
    )
    width = max(map(len, median)) + 2
    for label, seconds in median.items():
        print(f"{label.ljust(width)}{seconds * 1000:8.1f} ms per check")
    warm, cold, inline = median["isolated, warm"], median["isolated, cold"], median["in-process"]
    print(f"{'warm / in-process'.ljust(width)}{warm / inline:8.2f} x")
    print(f"{'cold / in-process'.ljust(width)}{cold / inline:8.2f} x")
    print(f"{'cold / warm'.ljust(width)}{cold / warm:8.2f} x")


if __name__ == "__main__":
    main()
