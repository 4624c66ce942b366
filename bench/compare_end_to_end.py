"""``diffcheck.compare`` end to end on a GPU against the sum of its unavoidable parts.

For ``fn = x * 2`` on float32 input of ELEMENTS (default 10^8) this prints the median time of
``compare(fn, x, candidate=...)`` on ``torch:cuda``, ``cupy`` and ``mlx:gpu`` (where MLX has
a GPU; its device-to-host copy is a plain copy out of its managed memory), and of the parts any such comparison must pay, measured in the same run:
- the host reference: ``fn`` on NumPy;
- one host-to-device copy of the input;
- the candidate call on the device;
- one device-to-host copy of the output into pinned memory.
The target is compare <= 1.5x the sum of the parts. ``--profile`` also prints where one
compare call spends its time (cProfile, cumulative). On a machine without CUDA it says why it
did not run and exits 0.
Usage: python bench/compare_end_to_end.py [ELEMENTS] [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import diffcheck


def median_time(fn: Callable[[], object], sync: Callable[[], None], repeats: int = 5) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def double(xp: Any, x: Any) -> Any:
    return x * 2


def parts_torch(host: np.ndarray) -> tuple[dict[str, float], Callable[[], None]]:
    import torch

    def sync() -> None:
        torch.cuda.synchronize()

    device_x = torch.from_numpy(host).cuda()
    out = device_x * 2
    pinned = torch.empty(out.shape, dtype=out.dtype, pin_memory=True)
    return {
        "host reference": median_time(lambda: host * 2, sync),
        "H2D input": median_time(lambda: torch.from_numpy(host).cuda(), sync),
        "candidate call": median_time(lambda: device_x * 2, sync),
        "D2H pinned": median_time(lambda: pinned.copy_(out), sync),
    }, sync


def parts_cupy(host: np.ndarray) -> tuple[dict[str, float], Callable[[], None]]:
    import cupy

    def sync() -> None:
        cupy.cuda.runtime.deviceSynchronize()

    device_x = cupy.asarray(host)
    out = device_x * 2
    pinned_mem = cupy.cuda.alloc_pinned_memory(out.nbytes)
    pinned = np.frombuffer(pinned_mem, out.dtype, out.size)
    return {
        "host reference": median_time(lambda: host * 2, sync),
        "H2D input": median_time(lambda: cupy.asarray(host), sync),
        "candidate call": median_time(lambda: device_x * 2, sync),
        "D2H pinned": median_time(lambda: out.get(out=pinned), sync),
    }, sync


def parts_mlx(host: np.ndarray) -> tuple[dict[str, float], Callable[[], None]]:
    import mlx.core as mx

    if not mx.is_available(mx.gpu):
        raise ImportError("MLX has no GPU device here")
    mx.set_default_device(mx.gpu)

    def sync() -> None:
        mx.synchronize()

    device_x = mx.array(host)
    out = device_x * 2
    mx.eval(out)
    return {
        "host reference": median_time(lambda: host * 2, sync),
        "H2D input": median_time(lambda: mx.eval(mx.array(host)), sync),
        "candidate call": median_time(lambda: mx.eval(device_x * 2), sync),
        "D2H": median_time(lambda: np.array(out, copy=True), sync),
    }, sync


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    profile = "--profile" in sys.argv
    elements = int(float(args[0])) if args else 10**8
    try:
        import torch

        if not torch.cuda.is_available():
            raise ImportError("torch sees no CUDA device")
    except ImportError as error:
        print(f"compare end to end: not run ({error})")
        return
    host = np.random.default_rng(0).standard_normal(elements, dtype=np.float32)
    print(f"compare end to end: fn = x * 2, float32, {elements:.0e} elements, medians (ms)")
    rows = []
    for name, candidate, measure_parts in (
        ("torch", "torch:cuda", parts_torch),
        ("cupy", "cupy", parts_cupy),
        ("mlx", "mlx:gpu", parts_mlx),
    ):
        try:
            parts, sync = measure_parts(host)
        except ImportError as error:
            print(f"  {name}: not run ({error})")
            continue

        def ours(candidate: str = candidate) -> object:
            verdict = diffcheck.compare(double, host, candidate=candidate)
            assert verdict.passed, verdict.reason
            return verdict

        total = median_time(ours, sync)
        floor = sum(parts.values())
        rows.append((name, total, floor))
        detail = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in parts.items())
        print(f"  {name}: compare {total * 1e3:.1f}; parts {floor * 1e3:.1f} ({detail})")
        print(f"    compare / parts = {total / floor:.2f} (target <= 1.5)")
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            ours()
            sync()
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    for name, total, floor in rows:
        print(f"  {'MET ' if total <= 1.5 * floor else 'MISS'} {name}: compare <= 1.5x its parts")


if __name__ == "__main__":
    main()
