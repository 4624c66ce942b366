"""Launch grids split under a small per-dimension limit still cover every workgroup exactly once."""

from __future__ import annotations

from typing import Any

import pytest

from diffcheck.adapters import Adapter
from diffcheck.differ import diff
from diffcheck.gpu_plan import Grid, plan_gemm, plan_rms_norm, plan_silu_mul
from diffcheck.ops import get_op
from diffcheck_wgpu import WgpuAdapter

# Each case needs a grid with y > 1 (and most z > 1) under its limit, and most launch
# surplus workgroups that must return without writing.
CASES = [
    (
        "gemm",
        {"m": 130, "n": 70, "k": 257},
        3,
        plan_gemm(130, 70, 257, limit=3).grid,
        Grid(3, 3, 1),
    ),
    ("gemm", {"m": 1, "n": 100, "k": 40}, 3, plan_gemm(1, 100, 40, limit=3).grid, Grid(3, 3, 2)),
    (
        "silu-mul",
        {"tokens": 5, "intermediate": 257},
        2,
        plan_silu_mul(5, 257, limit=2).grid,
        Grid(2, 2, 2),
    ),
    (
        "rms-norm",
        {"tokens": 7, "dim": 33, "eps": 1e-5},
        2,
        plan_rms_norm(7, 33, 1e-5, limit=2).grid,
        Grid(2, 2, 2),
    ),
    (
        "context-lifecycle",
        {"tokens": 65, "intermediate": 20, "k": 9},
        2,
        plan_silu_mul(65, 20, limit=2).grid,
        Grid(2, 2, 2),
    ),
]


@pytest.mark.parametrize(("name", "values", "limit", "planned", "grid"), CASES)
def test_split_grid_gives_the_reference_result(
    wgpu_adapter: WgpuAdapter,
    reference: Adapter,
    name: str,
    values: dict[str, Any],
    limit: int,
    planned: Grid,
    grid: Grid,
) -> None:
    assert planned == grid
    limited = WgpuAdapter(max_workgroups_per_dimension=limit)
    op = get_op(name)
    params = op.params(**values)
    inputs = op.inputs(params, 5)
    expected = reference.execute(op, params, inputs, "f32", role="reference")
    actual = limited.execute(op, params, inputs, "f32")
    verdict = diff(
        expected.output, actual.output, max_nmse=1e-7, segments=op.segments(params) or None
    )
    assert verdict.passed, verdict.reason


def test_a_launch_beyond_the_limit_cubed_is_refused(wgpu_adapter: WgpuAdapter) -> None:
    op = get_op("gemm")
    params = op.params(m=130, n=70, k=8)  # 9 tiles; a limit of 2 holds 8
    limited = WgpuAdapter(max_workgroups_per_dimension=2)
    with pytest.raises(
        ValueError, match="9 workgroups do not fit a grid of at most 2 per dimension"
    ):
        limited.execute(op, params, op.inputs(params, 1), "f32")


@pytest.mark.parametrize("limit", [0, 10**9])
def test_the_limit_must_lie_within_the_device_limit(wgpu_adapter: WgpuAdapter, limit: int) -> None:
    with pytest.raises(ValueError, match=f"max_workgroups_per_dimension={limit}"):
        WgpuAdapter(max_workgroups_per_dimension=limit).command_device("f32")
