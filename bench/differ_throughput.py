"""Differ throughput and extra memory against the naive NumPy peer, measured in the same run.

The peer is the obvious full-array float64 formula (``mean((r - a)**2) / mean(r**2)``),
which allocates several float64 temporaries the size of the input. diffcheck's differ
streams fixed-size chunks, measures more (max |diff|, its index, max ULP) and checks
finiteness first. Printed: seconds, GB/s of input read, peak traced extra memory, and the
ratios differ/peer. Usage: python bench/differ_throughput.py [ELEMENTS] [REPEATS]
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from diffcheck import diff


def naive_peer(reference: np.ndarray, actual: np.ndarray) -> float:
    r = reference.astype(np.float64)
    a = actual.astype(np.float64)
    return float(np.mean((r - a) ** 2) / np.mean(r**2))


def measure(fn: Callable[[], object], repeats: int) -> tuple[float, int]:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak


def main() -> None:
    elements = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rng = np.random.default_rng(0)
    reference = rng.standard_normal(elements, dtype=np.float32)
    actual = reference + np.float32(1e-4) * rng.standard_normal(elements, dtype=np.float32)
    input_bytes = reference.nbytes + actual.nbytes

    ours, ours_peak = measure(lambda: diff(reference, actual, max_nmse=1.0), repeats)
    peer, peer_peak = measure(lambda: naive_peer(reference, actual), repeats)
    verdict = diff(reference, actual, max_nmse=1.0)
    assert verdict.metrics is not None
    assert abs(verdict.metrics.nmse - naive_peer(reference, actual)) <= 1e-9 * verdict.metrics.nmse

    print(f"elements {elements:,} (inputs {input_bytes / 1e6:.0f} MB), best of {repeats}")
    print(
        f"  diffcheck.diff  {ours * 1e3:8.1f} ms  {input_bytes / ours / 1e9:6.2f} GB/s  peak extra {ours_peak / 1e6:8.1f} MB"
    )
    print(
        f"  naive numpy     {peer * 1e3:8.1f} ms  {input_bytes / peer / 1e9:6.2f} GB/s  peak extra {peer_peak / 1e6:8.1f} MB"
    )
    print(
        f"  ratio time diff/peer {ours / peer:.2f}x   ratio memory diff/peer {ours_peak / max(peer_peak, 1):.3f}x"
    )


if __name__ == "__main__":
    main()
