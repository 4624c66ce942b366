"""Per-check cost of a GPU sweep after warm-up: warm isolated workers, cold ones, in-process.

For each GPU candidate (default ``torch:cuda``, ``mlx:gpu``, ``wgpu:vulkan``; one that is
unavailable prints its probe's reason and is skipped), the check is a tiny gemm 1x3x5 f32
against NumPy, so the figures are the overhead. One job, so checks run one after another:

- ``in-process``: ``run_check`` with a report file, in this interpreter; the median per-check
  time over the checks after the first (which pays the backend import and device start);
- ``isolated, warm`` / ``isolated, cold``: ``run_sweep`` with the local executor
  (``--isolation warm``: one long-lived worker forked from the fork server runs every check;
  ``cold``: a fresh interpreter per check). The per-check time after warm-up is the marginal
  cost: (wall time of N checks - wall time of 1 check) / (N - 1), medians over REPEATS; the
  1-check sweep's wall time (the first check, with the worker and device start) is printed
  beside it.

Every isolated sweep includes all the parent's work (report settling, reading every report
back, summary.json, junit.xml and index.html). Workers are forked from multiprocessing's fork
server, a fresh interpreter, so none inherits a GPU context from this process (whose probes
import each backend, so the in-process first check does not pay that import).

Usage: python bench/gpu_sweep_overhead.py [CHECKS] [COLD_CHECKS] [REPEATS] [CANDIDATE ...]
(defaults 60, 8, 3, torch:cuda mlx:gpu wgpu:vulkan)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.runner import run_check
from diffcheck.sweep.executors import LocalExecutor
from diffcheck.sweep.matrix import parse_matrix
from diffcheck.sweep.plan import SweepPlan, plan_matrix
from diffcheck.sweep.run import run_sweep

DEFAULT_CANDIDATES = ("torch:cuda", "mlx:gpu", "wgpu:vulkan")


def _plan(candidate: str, checks: int) -> SweepPlan:
    return plan_matrix(
        parse_matrix(
            {
                "schema_version": 1,
                "pairs": [{"candidate": candidate, "precisions": ["f32"]}],
                "defaults": {"seeds": list(range(checks))},
                "ops": {"gemm": {"shapes": [{"m": 1, "n": 3, "k": 5}]}},
            }
        )
    )


def _sweep_wall(root: Path, candidate: str, checks: int, isolation: str) -> float:
    plan = _plan(candidate, checks)
    matrix = root / "matrix.toml"
    matrix.write_text("# the benchmark's matrix is built in code\n")
    out = Path(tempfile.mkdtemp(dir=root))
    started = time.perf_counter()
    summary, _ = run_sweep(
        plan,
        matrix=matrix,
        out=out / "sweep",
        executor=LocalExecutor(1, isolation=isolation),
        timeout_s=300,
    )
    elapsed = time.perf_counter() - started
    if summary.counts.passed != checks:
        raise SystemExit(f"gpu_sweep_overhead: {candidate} {isolation} sweep: {summary.counts}")
    return elapsed


def _isolated(
    root: Path, candidate: str, checks: int, repeats: int, isolation: str
) -> tuple[float, float]:
    """(median wall time of a 1-check sweep, median marginal per-check time after it)."""
    firsts, marginals = [], []
    for _ in range(repeats):
        first = _sweep_wall(root, candidate, 1, isolation)
        whole = _sweep_wall(root, candidate, checks, isolation)
        firsts.append(first)
        marginals.append((whole - first) / (checks - 1))
    return statistics.median(firsts), statistics.median(marginals)


def _in_process(root: Path, candidate: str, checks: int) -> tuple[float, float]:
    """(the first check's time, the median per-check time of the ones after it)."""
    out = Path(tempfile.mkdtemp(dir=root))
    times = []
    for seed in range(checks):
        check = make_check(candidate, "gemm", m=1, n=3, k=5, seed=seed)
        started = time.perf_counter()
        document = run_check(check, out / f"{seed}.json")
        times.append(time.perf_counter() - started)
        if document.result is None or document.result.status != "passed":
            raise SystemExit(f"gpu_sweep_overhead: {candidate} in-process check did not pass")
    return times[0], statistics.median(times[1:])


def main() -> None:
    checks = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    cold_checks = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    candidates = tuple(sys.argv[4:]) or DEFAULT_CANDIDATES
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        runnable = []
        for candidate in candidates:
            probe = resolve(candidate).probe()
            if not probe.is_available:
                print(f"{candidate}: not run: {probe.reason}")
                continue
            runnable.append(candidate)
        if not runnable:
            print("gpu_sweep_overhead: not run: no GPU candidate is available here")
            return
        _sweep_wall(root, "array_api_strict", 2, "warm")  # the fork server starts once
        for candidate in runnable:
            rows[candidate] = {
                "isolated, warm": _isolated(root, candidate, checks, repeats, "warm"),
                "isolated, cold": _isolated(root, candidate, cold_checks, repeats, "cold"),
            }
        for candidate in runnable:
            rows[candidate]["in-process"] = _in_process(root, candidate, checks)
    print(
        f"check: numpy -> CANDIDATE gemm 1x3x5 f32, one job; warm and in-process over {checks} "
        f"checks, cold over {cold_checks}; isolated figures are medians of {repeats} sweeps"
    )
    print("| candidate | mode | first check | per check after it |")
    print("| --- | --- | --- | --- |")
    for candidate, modes in rows.items():
        for mode in ("in-process", "isolated, warm", "isolated, cold"):
            first, after = modes[mode]
            print(f"| {candidate} | {mode} | {first * 1e3:.1f} ms | {after * 1e3:.2f} ms |")
        warm, inline = modes["isolated, warm"][1], modes["in-process"][1]
        cold = modes["isolated, cold"][1]
        print(
            f"{candidate}: warm / in-process {warm / inline:.2f}x, cold / warm {cold / warm:.1f}x"
        )


if __name__ == "__main__":
    main()
