"""On-device comparison against its floor, measured in the same run on a CUDA GPU.

The floor is what any on-device comparison must pay: one host-to-device copy of the
(host) reference plus a naive float64 NMSE on the device. MLX has no float64 on the GPU:
its floor is the copy plus a naive float32 NMSE in MLX (``mx.mean`` of the squares), which
is cheaper than any float64 floor. Against them, median times of:
- ``diff_on_device`` (the verdict with every metric, plus the overlapped exact host copy of
  the output that the report needs), on torch CUDA, on CuPy and on MLX's GPU;
- the host path: copy the output to the host, then the host differ (what ``compare`` does
  for MLX, whose managed memory the host reads without moving the reference over);
- ``diffcheck.compare(fn, x, candidate=...)`` end to end with a one-op ``fn`` on
  ``torch:cuda`` and ``mlx:gpu`` (it also runs the NumPy reference and moves the input
  over), for context; on ``mlx:gpu`` also through ``diff_on_device``.
Each on-device verdict is checked against the host differ's on the same values.
On a machine without CUDA it prints why it did not run and exits 0; MLX is measured when
it is installed with a GPU device.
Usage: python bench/device_compare.py [ELEMENTS]  (default 10^8)
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from diffcheck.differ import compare_outputs, diff_on_device


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


def check_equal(label: str, device: object, host: object) -> None:
    dm, hm = getattr(device, "metrics", None), getattr(host, "metrics", None)
    assert dm is not None, label
    assert hm is not None, label
    assert getattr(device, "status", None) == getattr(host, "status", None), label
    for name in ("nmse", "reference_mse", "max_abs"):
        assert math.isclose(getattr(dm, name), getattr(hm, name), rel_tol=1e-12), (label, name)
    assert (dm.max_abs_index, dm.max_ulp) == (hm.max_abs_index, hm.max_ulp), label


def main() -> None:
    elements = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**8
    try:
        import torch
    except ImportError:
        print("device_compare: not run: torch is not installed")
        return
    if not torch.cuda.is_available():
        print("device_compare: not run: no CUDA device (torch.cuda.is_available() is False)")
        return
    rng = np.random.default_rng(0)
    reference = rng.standard_normal(elements, dtype=np.float32)
    actual_host = reference + np.float32(1e-4) * rng.standard_normal(elements, dtype=np.float32)
    host_verdict = compare_outputs(reference, actual_host, 1.0)
    print(f"device_compare: {elements:,} float32 elements on {torch.cuda.get_device_name()}")

    def cuda_sync() -> None:
        torch.cuda.synchronize()

    actual = torch.from_numpy(actual_host).cuda()

    def floor_torch() -> float:
        r = torch.from_numpy(reference).to("cuda").double()
        a = actual.double()
        return float(((r - a) ** 2).mean() / (r * r).mean())

    def ours_torch() -> object:
        return diff_on_device(reference, actual, max_nmse=1.0, host_copy=False)

    def ours_torch_copy() -> object:
        return diff_on_device(reference, actual, max_nmse=1.0)

    def host_path() -> object:
        return compare_outputs(reference, actual.cpu().numpy(), 1.0)

    prefaulted = np.ones(elements, np.float32)

    def copy_pinned() -> object:
        buffer = torch.empty(elements, dtype=torch.float32, pin_memory=True)
        return buffer.copy_(actual)

    measured = diff_on_device(reference, actual, max_nmse=1.0)
    check_equal("torch:cuda", measured.verdict, host_verdict)
    assert measured.actual is not None
    assert np.array_equal(measured.actual, actual_host)
    rows = [
        ("floor: H2D copy + naive f64 NMSE (torch)", median_time(floor_torch, cuda_sync)),
        ("diff_on_device, torch:cuda (verdict)", median_time(ours_torch, cuda_sync)),
        (
            "diff_on_device, torch:cuda (verdict + host copy)",
            median_time(ours_torch_copy, cuda_sync),
        ),
        (
            "  H2D copy of the reference alone",
            median_time(lambda: torch.from_numpy(reference).to("cuda"), cuda_sync),
        ),
        (
            "  D2H copy: .cpu() (fresh pageable memory)",
            median_time(lambda: actual.cpu(), cuda_sync),
        ),
        ("  D2H copy: into fresh pinned memory", median_time(copy_pinned, cuda_sync)),
        (
            "  D2H copy: into touched pageable memory",
            median_time(lambda: torch.from_numpy(prefaulted).copy_(actual), cuda_sync),
        ),
        ("host path: D2H copy + host differ", median_time(host_path, cuda_sync, 3)),
    ]

    import diffcheck

    x = reference.reshape(1000, -1)
    rows.append(
        (
            "diffcheck.compare(x * 2, torch:cuda), end to end",
            median_time(
                lambda: diffcheck.compare(lambda xp, v: v * 2, x, candidate="torch:cuda"),
                cuda_sync,
                3,
            ),
        )
    )
    try:
        import cupy

        actual_cp = cupy.asarray(actual_host)

        def cupy_sync() -> None:
            cupy.cuda.get_current_stream().synchronize()

        def floor_cupy() -> float:
            r = cupy.asarray(reference).astype(cupy.float64)
            a = actual_cp.astype(cupy.float64)
            return float(((r - a) ** 2).mean() / (r * r).mean())

        measured_cp = diff_on_device(reference, actual_cp, max_nmse=1.0)
        check_equal("cupy", measured_cp.verdict, host_verdict)
        assert measured_cp.actual is not None
        assert np.array_equal(measured_cp.actual, actual_host)
        rows.append(("floor: H2D copy + naive f64 NMSE (cupy)", median_time(floor_cupy, cupy_sync)))
        rows.append(
            (
                "diff_on_device, cupy (verdict + host copy)",
                median_time(lambda: diff_on_device(reference, actual_cp, max_nmse=1.0), cupy_sync),
            )
        )
        rows.append(
            (
                "diff_on_device, cupy",
                median_time(
                    lambda: diff_on_device(reference, actual_cp, max_nmse=1.0, host_copy=False),
                    cupy_sync,
                ),
            )
        )
    except ImportError:
        print("  cupy: not run: cupy is not installed")
    try:
        rows.extend(_mlx_rows(reference, actual_host, host_verdict))
    except Exception:  # report it, keep the other rows
        import traceback

        print("  mlx:gpu: failed:")
        traceback.print_exc()
    for label, seconds in rows:
        print(f"  {label:<52} {seconds * 1e3:9.1f} ms")
    times = dict(rows)
    ours = times["diff_on_device, torch:cuda (verdict)"]
    ratio = ours / times["floor: H2D copy + naive f64 NMSE (torch)"]
    print(f"  torch:cuda diff_on_device / floor = {ratio:.2f} (target <= 3)")
    if "diff_on_device, cupy" in times:
        ratio_cp = times["diff_on_device, cupy"] / times["floor: H2D copy + naive f64 NMSE (cupy)"]
        print(f"  cupy diff_on_device / floor = {ratio_cp:.2f} (target <= 3)")
    if MLX_OURS in times:
        ratio_mlx = times[MLX_OURS] / times[MLX_FLOOR]
        print(f"  mlx:gpu diff_on_device / floor (f32 floor) = {ratio_mlx:.2f} (target <= 3)")
        end_to_end = times[MLX_COMPARE] / times[MLX_FLOOR]
        print(f"  mlx:gpu compare end to end / floor = {end_to_end:.2f}")
        host_path = times["host path, mlx: D2H copy + host differ"] / times[MLX_OURS]
        print(f"  mlx:gpu host path / diff_on_device = {host_path:.2f}")
    speedup = times["host path: D2H copy + host differ"] / ours
    print(f"  host path / diff_on_device = {speedup:.1f}x; verdicts equal the host differ's")
    for dtype, storage in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        half = actual[: 10**6].to(dtype)
        on_gpu = diff_on_device(reference[: 10**6], half, max_nmse=1.0)
        assert on_gpu.actual is not None
        assert np.array_equal(on_gpu.actual, half.float().cpu().numpy())
        on_host = compare_outputs(
            reference[: 10**6], half.float().cpu().numpy(), 1.0, ulp_dtype=storage
        )
        check_equal(storage, on_gpu.verdict, on_host)
        assert on_gpu.verdict.metrics is not None
        print(
            f"  {storage} output on cuda: max_ulp {on_gpu.verdict.metrics.max_ulp} equals the host's"
        )


MLX_FLOOR = "floor: H2D copy + naive f32 NMSE (mlx:gpu)"
MLX_OURS = "diff_on_device, mlx:gpu (verdict)"
MLX_COMPARE = "diffcheck.compare(x * 2, mlx:gpu), end to end"
MLX_COMPARE_DEVICE = "  the same, measured by diff_on_device instead"


def _mlx_rows(
    reference: np.ndarray, actual_host: np.ndarray, host_verdict: object
) -> list[tuple[str, float]]:
    """The MLX GPU rows (none, with the reason printed, without an MLX GPU)."""
    try:
        import mlx.core as mx
    except ImportError:
        print("  mlx:gpu: not run: mlx is not installed")
        return []
    if not mx.is_available(mx.gpu):
        print("  mlx:gpu: not run: MLX has no GPU device here (mx.is_available(mx.gpu))")
        return []
    import diffcheck

    mx.set_default_device(mx.gpu)

    def mlx_sync() -> None:
        mx.synchronize()

    actual = mx.array(actual_host)
    mx.eval(actual)

    def floor_mlx() -> float:
        r = mx.array(reference)
        return float(mx.mean(mx.square(r - actual)) / mx.mean(r * r))

    def ours(copy: bool) -> Callable[[], object]:
        return lambda: diff_on_device(reference, actual, max_nmse=1.0, host_copy=copy)

    measured = diff_on_device(reference, actual, max_nmse=1.0)
    print(f"  mlx:gpu: measured {measured.where}")
    check_equal("mlx:gpu", measured.verdict, host_verdict)
    assert measured.actual is not None
    assert np.array_equal(measured.actual, actual_host)
    x = reference.reshape(1000, -1)
    end_to_end = diffcheck.compare(lambda xp, v: v * 2, x, candidate="mlx:gpu")
    assert end_to_end.passed, end_to_end.reason

    def naive_f32_mlx() -> float:
        return float(mx.mean(mx.square(on_gpu - actual)) / mx.mean(on_gpu * on_gpu))

    on_gpu = mx.array(reference)
    mx.eval(on_gpu)

    def compare_mlx() -> object:
        return diffcheck.compare(lambda xp, v: v * 2, x, candidate="mlx:gpu")

    def compare_mlx_on_device() -> object:
        # compare reads MLX outputs on the host (see on_device); here through diff_on_device.
        import diffcheck.api

        saved = diffcheck.api.on_device
        diffcheck.api.on_device = lambda array: True
        try:
            return compare_mlx()
        finally:
            diffcheck.api.on_device = saved

    rows = [
        (MLX_FLOOR, median_time(floor_mlx, mlx_sync)),
        (MLX_OURS, median_time(ours(False), mlx_sync)),
        ("diff_on_device, mlx:gpu (verdict + host copy)", median_time(ours(True), mlx_sync)),
        (
            "  H2D copy of the reference alone (mlx)",
            median_time(lambda: mx.eval(mx.array(reference)), mlx_sync),
        ),
        ("  naive f32 NMSE on the GPU alone (mlx)", median_time(naive_f32_mlx, mlx_sync)),
        ("  D2H copy: np.array (mlx)", median_time(lambda: np.array(actual), mlx_sync)),
        (
            "host path, mlx: D2H copy + host differ",
            median_time(lambda: compare_outputs(reference, np.array(actual), 1.0), mlx_sync, 3),
        ),
        (MLX_COMPARE, median_time(compare_mlx, mlx_sync, 3)),
        (MLX_COMPARE_DEVICE, median_time(compare_mlx_on_device, mlx_sync, 3)),
    ]
    for dtype, storage in ((mx.float16, "f16"), (mx.bfloat16, "bf16")):
        half = actual[: 10**6].astype(dtype)
        widened = np.array(half.astype(mx.float32))
        on_dev = diff_on_device(reference[: 10**6], half, max_nmse=1.0)
        assert on_dev.actual is not None
        assert np.array_equal(on_dev.actual, widened)
        on_host = compare_outputs(reference[: 10**6], widened, 1.0, ulp_dtype=storage)
        check_equal(f"mlx {storage}", on_dev.verdict, on_host)
        assert on_dev.verdict.metrics is not None
        print(
            f"  {storage} output on mlx:gpu: max_ulp {on_dev.verdict.metrics.max_ulp} equals "
            "the host's"
        )
    return rows


if __name__ == "__main__":
    main()
