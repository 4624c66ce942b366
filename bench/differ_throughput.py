"""The differ against its peers and the memory-read floor, measured in the same run.

For float32 arrays of 10^3 to 10^8 elements (a reference and a slightly perturbed copy)
this prints the median time of:
- ``diffcheck.diff`` (the one-pass differ; ``numba`` or ``numpy`` says which path ran),
- the memory-read floor: ``reference.sum() + actual.sum()`` (NumPy, reads both arrays once),
  on one core and over every core (NumPy sums of chunks on a thread each),
- ``numpy.testing.assert_allclose`` and ``torch.testing.assert_close`` (CPU) on the same
  arrays, with tolerances that pass,
- the differ's NumPy path (``DIFFCHECK_DIFFER=numpy``) up to 10^7, the fallback's cost,
and the ratios, then checks the targets: at 10^3 at most 30 us and at 10^5 at most 0.25 ms;
from 10^3 to 10^6 at least as fast as assert_allclose; at 10^7 and 10^8 at least half of
either read floor and >= 10x faster than assert_allclose; at 10^8 peak extra memory < 64 MiB.

Peak extra memory is an RSS delta: the kernel's peak resident set (``VmHWM`` after resetting
it through ``/proc/self/clear_refs``) minus the resident set before the call, so numba's and
torch's allocations count too; where that is unavailable, tracemalloc's peak (NumPy only).
Usage: python bench/differ_throughput.py [MAX_ELEMENTS]  (default 10^8)
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from diffcheck import diff
from diffcheck.differ._measure import engine, load_kernel

MiB = 1 << 20


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def peak_extra(fn: Callable[[], object]) -> tuple[float, str]:
    """Peak extra memory of one call, in bytes, and how it was measured."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        before = _status_kib("VmRSS")
        fn()
        return (_status_kib("VmHWM") - before) * 1024.0, "RSS"
    except OSError:
        tracemalloc.start()
        fn()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return float(peak), "tracemalloc"


def median_time(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up (and numba's first compile or cache load)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


_CORES = os.cpu_count() or 1  # read once: a call costs microseconds, a small sum's scale
_POOL = ThreadPoolExecutor(_CORES)


def parallel_sum(values: np.ndarray) -> float:
    """Read ``values`` once on every core: NumPy sums of contiguous chunks on a thread each.

    NumPy releases the GIL inside a reduction, so the chunks run at once; below 2^20
    elements a single sum is faster than waking threads, and that is the floor there.
    """
    if _CORES == 1 or values.size < 1 << 20:
        return float(values.sum())
    edges = [values.size * t // _CORES for t in range(_CORES + 1)]
    parts = _POOL.map(lambda t: float(values[edges[t] : edges[t + 1]].sum()), range(_CORES))
    return sum(parts)


def row(elements: int, rng: np.random.Generator) -> dict[str, float | str]:
    reference = rng.standard_normal(elements, dtype=np.float32)
    actual = reference + np.float32(1e-4) * rng.standard_normal(elements, dtype=np.float32)
    # Small checks are dominated by fixed costs in the microseconds: many repeats, and the
    # median absorbs a loaded machine's stalls.
    repeats = (
        301 if elements <= 10**4 else 31 if elements <= 10**6 else 7 if elements <= 10**7 else 3
    )
    peers = repeats if elements <= 10**6 else 5 if elements <= 10**7 else 1

    def ours() -> object:
        verdict = diff(reference, actual, max_nmse=1.0)
        assert verdict.passed, verdict.reason
        return verdict

    def floor() -> object:
        return float(reference.sum()) + float(actual.sum())

    def parallel_floor() -> object:
        return parallel_sum(reference) + parallel_sum(actual)

    def allclose() -> None:
        np.testing.assert_allclose(actual, reference, rtol=1e-2, atol=1e-3)

    out: dict[str, float | str] = {"n": elements, "engine": engine(elements)}
    out["differ"] = median_time(ours, repeats)
    out["floor"] = median_time(floor, repeats)
    out["pfloor"] = median_time(parallel_floor, repeats)
    out["allclose"] = median_time(allclose, peers)
    try:
        import torch

        tr, ta = torch.from_numpy(reference), torch.from_numpy(actual)
        out["torch"] = median_time(
            lambda: torch.testing.assert_close(ta, tr, rtol=1e-2, atol=1e-3), peers
        )
    except ImportError:
        out["torch"] = float("nan")
    if elements <= 10**7:
        os.environ["DIFFCHECK_DIFFER"] = "numpy"
        out["numpy_path"] = median_time(ours, 1 if elements == 10**7 else 3)
        del os.environ["DIFFCHECK_DIFFER"]
    else:
        out["numpy_path"] = float("nan")
    out["peak"], out["peak_how"] = peak_extra(ours)
    if elements == 10**7:  # the measure sees allocations: the naive formula's temporaries

        def naive() -> float:
            r, a = reference.astype(np.float64), actual.astype(np.float64)
            return float(np.mean((r - a) ** 2) / np.mean(r * r))

        seen, how = peak_extra(naive)
        print(
            f"  (peak-memory check: the naive float64 formula at 1e7 peaks at {seen / MiB:.0f} MiB by {how})"
        )
    return out


def main() -> None:
    largest = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**8
    rng = np.random.default_rng(0)
    sizes = [n for n in (10**3, 10**4, 10**5, 10**6, 10**7, 10**8) if n <= largest]
    # The steady state of a long run of small checks: the kernel loaded (a process loads it
    # by itself after LOAD_AFTER_SECONDS on the NumPy path; np-path shows the time before).
    if (failure := load_kernel()) is not None:
        print(f"the kernel did not load ({failure}): every row is the NumPy path")
    print(f"differ throughput: float32, medians, {os.cpu_count()} cores (time in ms)")
    print("  floor: NumPy sum of both arrays on one core; pfloor: the same sum over every core")
    header = (
        f"{'elements':>11} {'engine':>6} {'differ':>8} {'floor':>8} {'pfloor':>8} {'allclose':>9} "
        f"{'torch':>8} {'np-path':>8} | {'floor/differ':>12} {'pfloor/differ':>13} {'allclose/differ':>15} "
        f"{'torch/differ':>12} {'peak extra':>11}"
    )
    print(header)
    rows = []
    for n in sizes:
        r = row(n, rng)
        rows.append(r)
        d = float(r["differ"])
        print(
            f"{n:>11,} {str(r['engine'])[:6]:>6} {d * 1e3:8.3f} {float(r['floor']) * 1e3:8.3f} "
            f"{float(r['pfloor']) * 1e3:8.3f} "
            f"{float(r['allclose']) * 1e3:9.3f} {float(r['torch']) * 1e3:8.3f} "
            f"{float(r['numpy_path']) * 1e3:8.2f} | {float(r['floor']) / d:12.2f} "
            f"{float(r['pfloor']) / d:13.2f} "
            f"{float(r['allclose']) / d:15.1f} {float(r['torch']) / d:12.1f} "
            f"{float(r['peak']) / MiB:7.1f} MiB ({r['peak_how']})"
        )
    print("targets:")
    fixed_cost = {10**3: 30e-6, 10**5: 0.25e-3}  # seconds, at most
    for r in rows:
        n, d = int(r["n"]), float(r["differ"])
        checks = []
        if n in fixed_cost:
            checks.append(
                (f"differ <= {fixed_cost[n] * 1e6:.0f} us at {n:.0e}", d <= fixed_cost[n])
            )
        if n <= 10**6:
            checks.append((f"allclose/differ >= 1 at {n:.0e}", float(r["allclose"]) / d >= 1))
            for label, ok in checks:
                print(f"  {'MET ' if ok else 'MISS'} {label}")
            continue
        checks += [
            (f"pfloor/differ >= 0.5 at {n:.0e}", float(r["pfloor"]) / d >= 0.5),
            (f"floor/differ >= 0.5 at {n:.0e}", float(r["floor"]) / d >= 0.5),
            (f"allclose/differ >= 10 at {n:.0e}", float(r["allclose"]) / d >= 10),
        ]
        if n == 10**8:
            checks.append(("peak extra < 64 MiB at 1e+08", float(r["peak"]) < 64 * MiB))
        for label, ok in checks:
            print(f"  {'MET ' if ok else 'MISS'} {label}")


if __name__ == "__main__":
    main()
