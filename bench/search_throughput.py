"""API search throughput: examples per second with calls in a worker process and in-process.

Searches the same functions with the same seed and examples both ways, alternating the two
modes REPEATS times in this one run, and prints per mode the median examples per second
(examples drawn plus shrink runs, over the search's own seconds) and the ratio. Isolation
pays a pickled round trip per example (the inputs there, the verdict back) and one worker
start per run and per crash or hang.

The candidate is mlx:cpu when MLX is installed, else array-api-strict. ``sum`` is left out:
in-process, MLX's ``sum`` of an empty int64 array stalls after ``add`` has run in the same
process (the in-process mode has no timeout), which would measure the stall, not the mode.

Usage: python bench/search_throughput.py [EXAMPLES] [REPEATS]  (default 30, 3)
"""

from __future__ import annotations

import statistics
import sys
import time

FUNCTIONS = ["exp", "add", "multiply", "matmul", "sort", "where", "cumulative_sum", "sin"]


def _candidate() -> str:
    try:
        import mlx.core  # noqa: F401
    except ImportError:
        return "array_api_strict"
    return "mlx:cpu"


def _rate(candidate: str, examples: int, isolate: bool) -> tuple[float, float, int]:
    from diffcheck.search import search_api

    started = time.monotonic()
    result = search_api(candidate, functions=FUNCTIONS, examples=examples, seed=0, isolate=isolate)
    wall = time.monotonic() - started
    runs = result.document.functions_tried
    calls = sum(r.examples + r.shrink_runs for r in runs)
    seconds = sum(r.seconds for r in runs)
    return calls / seconds, wall, len(result.document.findings)


def main(argv: list[str]) -> int:
    numbers = [int(a) for a in argv if a.isdigit()]
    examples = numbers[0] if numbers else 30
    repeats = numbers[1] if len(numbers) > 1 else 3
    candidate = _candidate()
    rates: dict[str, list[float]] = {"worker": [], "in-process": []}
    walls: dict[str, list[float]] = {"worker": [], "in-process": []}
    found: dict[str, set[int]] = {"worker": set(), "in-process": set()}
    for _ in range(repeats):
        for mode in ("worker", "in-process"):
            rate, wall, findings = _rate(candidate, examples, mode == "worker")
            rates[mode].append(rate)
            walls[mode].append(wall)
            found[mode].add(findings)
    print(
        f"api search throughput: numpy vs {candidate}, {len(FUNCTIONS)} functions, "
        f"{examples} examples each, seed 0, median of {repeats}"
    )
    for mode in ("worker", "in-process"):
        print(
            f"  {mode:>10}: {statistics.median(rates[mode]):8.1f} examples/s, "
            f"run {statistics.median(walls[mode]):6.1f} s wall, findings {sorted(found[mode])}"
        )
    ratio = statistics.median(rates["in-process"]) / statistics.median(rates["worker"])
    print(f"  in-process / worker: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
