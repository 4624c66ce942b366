"""The inference kernels (softmax, layer-norm, rope, attention, add-rms-norm) on a real wgpu device.

Each kernel is checked against float64 NumPy formulas of the specification at default, tail
and boundary shapes, on split grids, and in a faulty variant (its WGSL changed in one
place) that must fail the same comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from diffcheck.differ import diff
from diffcheck_wgpu import WgpuAdapter, WgpuCommandDevice
from diffcheck_wgpu._kernels import KERNEL_FILES, kernel_source
from fused_cases import CASES, prepare, run_prepared

MAX_NMSE = 1e-7


def check(device: Any, op: str, params: dict[str, Any], *, limit: int = 65535) -> Any:
    case = prepare(op, params, limit=limit)
    actual = run_prepared(device, case)
    return diff(
        case.expected.reshape(-1),
        actual,
        max_nmse=MAX_NMSE,
        expected_elements=case.expected.size,
        segments=case.segments or None,
    )


@pytest.fixture(scope="module")
def device(wgpu_adapter: WgpuAdapter) -> WgpuCommandDevice:
    return wgpu_adapter.open_device()


@pytest.mark.parametrize(("op", "params", "why"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_kernel_matches_float64_numpy(
    device: WgpuCommandDevice, op: str, params: dict[str, Any], why: str
) -> None:
    verdict = check(device, op, params)
    assert verdict.passed, f"{why}: {verdict.reason}"


@pytest.mark.parametrize(
    ("op", "params"),
    [
        ("softmax", {"tokens": 7, "dim": 33, "causal": True, "temperature": 1.0}),
        (
            "rope",
            {
                "tokens": 9,
                "heads": 16,
                "head_dim": 16,
                "layout": "half",
                "offset": 3,
                "base": 10000.0,
            },
        ),
        (
            "attention",
            {"tokens": 3, "kv_len": 4, "heads": 2, "kv_heads": 1, "head_dim": 8, "causal": False},
        ),
    ],
)
def test_split_grids_cover_every_workgroup(
    wgpu_adapter: WgpuAdapter, op: str, params: dict[str, Any]
) -> None:
    limited = WgpuCommandDevice(wgpu_adapter._runtime(), max_workgroups_per_dimension=2)
    case = prepare(op, params, limit=2)
    assert case.launch.grid.z > 1  # the flat index needs all three dimensions
    verdict = check(limited, op, params, limit=2)
    assert verdict.passed, verdict.reason


# (kernel, the WGSL text replaced, its replacement, op, params, what a wrong answer looks like)
FAULTS = [
    (
        "softmax",
        "visible = params.dim - params.tokens + row + 1u;",
        "visible = params.dim - params.tokens + row + 2u;",
        "softmax",
        {"tokens": 4, "dim": 256, "causal": True, "temperature": 1.0},
        "causal mask off by one",
    ),
    (
        "layer_norm",
        "let variance = reduce_sum(lane, local_squares) / n;",
        "let variance = reduce_sum(lane, local_squares) / (n - 1.0);",
        "layer-norm",
        {"tokens": 4, "dim": 128, "eps": 1e-5},
        "sample instead of population variance",
    ),
    (
        "rope",
        "if (params.interleaved != 0u) {",
        "if (params.interleaved == 0u) {",
        "rope",
        {"tokens": 4, "heads": 2, "head_dim": 64, "layout": "half", "offset": 0, "base": 10000.0},
        "layouts swapped",
    ),
    (
        "add_rms_norm",
        "out[normed_base + j] = S(h * inv * f32(weight[j]));",
        "out[normed_base + j] = S(f32(x[base + j]) * inv * f32(weight[j]));",
        "add-rms-norm",
        {"tokens": 4, "dim": 128, "eps": 1e-6},
        "normalizes x instead of x + residual",
    ),
]


@pytest.mark.parametrize(
    ("kernel", "old", "new", "op", "params", "fault"), FAULTS, ids=[f[5] for f in FAULTS]
)
def test_a_faulty_kernel_fails(
    wgpu_adapter: WgpuAdapter,
    kernel: str,
    old: str,
    new: str,
    op: str,
    params: dict[str, Any],
    fault: str,
) -> None:
    source = kernel_source(KERNEL_FILES[kernel][0])
    assert source.count(old) == 1, f"the fault '{fault}' no longer applies to the kernel"
    faulty = wgpu_adapter._runtime().with_sources({kernel: source.replace(old, new)})
    verdict = check(WgpuCommandDevice(faulty), op, params)
    assert not verdict.passed, fault
    if op == "add-rms-norm":  # the residual output is still right; only the normed one fails
        assert [s.segment.name for s in verdict.segments if s.status != "passed"] == ["normed"]


def test_attention_with_a_wrong_kv_head_names_the_bad_heads(wgpu_adapter: WgpuAdapter) -> None:
    source = kernel_source(KERNEL_FILES["attention"][0])
    old = "let g = h / (params.heads / params.kv_heads);"
    assert source.count(old) == 1
    # h % kv_heads instead of h / group: heads 0 and 3 still read kv heads 0 and 1; 1 and 2 do not.
    faulty = wgpu_adapter._runtime().with_sources(
        {"attention": source.replace(old, "let g = h % params.kv_heads;")}
    )
    params = {"tokens": 4, "kv_len": 8, "heads": 4, "kv_heads": 2, "head_dim": 32, "causal": True}
    verdict = check(WgpuCommandDevice(faulty), "attention", params)
    assert not verdict.passed
    failed = [s.segment.name for s in verdict.segments if s.status != "passed"]
    assert failed == ["head1", "head2"]


def test_masked_softmax_entries_are_exactly_zero(device: WgpuCommandDevice) -> None:
    params = {"tokens": 3, "dim": 6, "causal": True, "temperature": 1.0}
    case = prepare("softmax", params)
    out = run_prepared(device, case).reshape(3, 6)
    visible = np.arange(6)[None, :] <= (3 + np.arange(3))[:, None]
    assert (out[~visible] == 0.0).all()
    assert (np.signbit(out[~visible]) == 0).all()
    assert (out[visible] > 0.0).all()
