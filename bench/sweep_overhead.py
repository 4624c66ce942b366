"""Per-check cost of isolation: a check in its own worker process against the same check in process.

Measured in one run, each the median of REPEATS:

- ``in-process``: ``run_check`` with a report file, in this (warm) interpreter;
- ``isolated``: ``run_isolated`` (spawn ``python -m diffcheck.sweep.worker``, run the same
  check, settle the report), as every sweep check pays it;
- the parts of the difference: a bare ``python -c pass`` start and a start that imports
  ``diffcheck.runner`` and the worker (what every worker imports before it runs anything).

The check is deliberately trivial (gemm 1x3x5 on numpy -> array_api_strict), so the ratio is
the overhead's upper bound; real checks add the same fixed cost. Prints the ratio
isolated / in-process and the overhead in milliseconds.
Usage: python bench/sweep_overhead.py [REPEATS] [BACKEND]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from diffcheck.config import make_check
from diffcheck.runner import run_check
from diffcheck.sweep.isolate import run_isolated
from diffcheck.sweep.spec import WorkerSpec


def median_seconds(step: Callable[[int], object], repeats: int) -> float:
    step(-1)  # warm-up (imports, first allocation, page cache)
    times = []
    for index in range(repeats):
        started = time.perf_counter()
        step(index)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    backend = sys.argv[2] if len(sys.argv) > 2 else "array_api_strict"
    check = make_check(backend, "gemm", m=1, n=3, k=5)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        # Measure a check that really executes: a not_run one skips the backend entirely.
        probe = run_check(check, root / "probe.json").result
        if probe is None or probe.status != "passed":
            reason = probe.reason if probe else "no result"
            raise SystemExit(f"sweep_overhead: {backend} gemm 1x3x5 did not pass here: {reason}")

        def in_process(index: int) -> None:
            run_check(check, root / f"in-{index}.json")

        def isolated(index: int) -> None:
            spec = WorkerSpec.of(f"iso-{index}", check, str(root / f"iso-{index}.json"))
            outcome = run_isolated(spec.model_dump_json(), 120.0)
            assert outcome.exit == "exit 0", outcome

        def bare_start(_: int) -> None:
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        def import_start(_: int) -> None:
            code = "import diffcheck.runner, diffcheck.sweep.worker, diffcheck.sweep.spec"
            subprocess.run([sys.executable, "-c", code], check=True)

        results = {
            "in-process run_check": median_seconds(in_process, repeats),
            "isolated worker (run_isolated)": median_seconds(isolated, repeats),
            "  of which: python start": median_seconds(bare_start, repeats),
            "  of which: start + worker imports": median_seconds(import_start, repeats),
        }
    width = max(map(len, results))
    print(f"check: {backend} gemm 1x3x5 f32, median of {repeats}")
    for label, seconds in results.items():
        print(f"{label.ljust(width)}  {seconds * 1000:8.1f} ms")
    inline = results["in-process run_check"]
    worker = results["isolated worker (run_isolated)"]
    print(f"{'per-check overhead'.ljust(width)}  {(worker - inline) * 1000:8.1f} ms")
    print(f"{'ratio isolated / in-process'.ljust(width)}  {worker / inline:8.1f} x")


if __name__ == "__main__":
    main()
