"""The inference kernels' MSL through the PyObjC layer over the NumPy stand-in.

The stand-in emulates each kernel as its MSL indexes (RoPE's fixed-point phase included)
and decodes parameter blocks by the field names of the source's struct, binding buffers by
the source's ``[[buffer(N)]]`` slots. So these tests check the launch contract between the
MSL sources, :mod:`diffcheck.gpu_plan` and the adapter; they cannot show that the MSL
compiles or what a real GPU computes (see the package docstring).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from fused_cases import CASES, prepare, run_prepared

import diffcheck_metal._kernels
from diffcheck.adapters import Adapter
from diffcheck.differ import diff
from diffcheck.ops import get_op
from diffcheck_metal import MetalAdapter, MetalCommandDevice, open_runtime
from diffcheck_metal._kernels import kernel_source

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


@pytest.mark.parametrize(("op", "params", "why"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_kernel_matches_float64_numpy(
    fake_metal: ModuleType, op: str, params: dict[str, Any], why: str
) -> None:
    verdict = check(MetalCommandDevice(open_runtime()), op, params)
    assert verdict.passed, f"{why}: {verdict.reason}"


@pytest.mark.parametrize(
    ("name", "entrypoint"),
    [
        ("softmax", "softmax_f32"),
        ("layer-norm", "layer_norm_f32"),
        ("rope", "rope_f32"),
        ("attention", "attention_f32"),
        ("add-rms-norm", "add_rms_norm_f32"),
    ],
)
def test_ops_through_the_adapter(
    fake_metal: ModuleType, reference: Adapter, name: str, entrypoint: str
) -> None:
    op = get_op(name)
    params = op.params()
    inputs = op.inputs(params, 42)
    expected = reference.execute(op, params, inputs, "f32", role="reference")
    actual = MetalAdapter().execute(op, params, inputs, "f32")
    verdict = diff(
        expected.output, actual.output, max_nmse=MAX_NMSE, segments=op.segments(params) or None
    )
    assert verdict.passed, verdict.reason
    assert actual.kernel_entrypoint == entrypoint
    assert actual.execution_path == f"Metal command buffers {entrypoint} on Fake Metal GPU"


def test_split_grids_cover_every_threadgroup(fake_metal: ModuleType) -> None:
    device = MetalCommandDevice(open_runtime(), max_workgroups_per_dimension=2)
    params = {"tokens": 3, "kv_len": 4, "heads": 2, "kv_heads": 1, "head_dim": 8, "causal": True}
    assert prepare("attention", params, limit=2).launch.grid.z > 1
    verdict = check(device, "attention", params, limit=2)
    assert verdict.passed, verdict.reason


# A source that breaks the launch contract in one place: the stand-in binds by the source's
# slots and decodes parameters by its field names, so the result must fail.
CONTRACT_FAULTS = [
    (
        "layer_norm.metal",
        ("[[buffer(1)]]", "[[buffer(2)]]", "[[buffer(9)]]"),
        "layer-norm",
        {"tokens": 4, "dim": 128, "eps": 1e-5},
    ),
    (
        "softmax.metal",
        ("uint causal;\n    float temperature;", "float temperature;\n    uint causal;"),
        "softmax",
        {"tokens": 4, "dim": 256, "causal": True, "temperature": 1.0},
    ),
    (
        "attention.metal",
        ("uint causal;\n    float scale;", "float scale;\n    uint causal;"),
        "attention",
        {"tokens": 4, "kv_len": 8, "heads": 4, "kv_heads": 2, "head_dim": 32, "causal": True},
    ),
]


def _swap_slots(source: str, first: str, second: str, spare: str) -> str:
    return source.replace(first, spare).replace(second, first).replace(spare, second)


@pytest.mark.parametrize(("filename", "edit", "op", "params"), CONTRACT_FAULTS)
def test_a_source_off_the_launch_contract_fails(
    fake_metal: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    filename: str,
    edit: tuple[str, ...],
    op: str,
    params: dict[str, Any],
) -> None:
    source = kernel_source(filename)
    assert source.count(edit[0]) == 1
    # Three strings: two slots swapped (through a spare); two: parameter fields reordered.
    faulty = _swap_slots(source, *edit) if len(edit) == 3 else source.replace(*edit)
    assert faulty != source
    monkeypatch.setattr(
        diffcheck_metal._kernels,
        "kernel_source",
        lambda name: faulty if name == filename else kernel_source(name),
    )
    verdict = check(MetalCommandDevice(open_runtime()), op, params)
    assert not verdict.passed


def test_a_parameter_block_shorter_than_the_struct_is_refused(
    fake_metal: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = kernel_source("softmax.metal")
    old = "float temperature;\n};"
    assert source.count(old) == 1
    faulty = source.replace(old, "float temperature;\n    uint extra;\n};")
    monkeypatch.setattr(
        diffcheck_metal._kernels,
        "kernel_source",
        lambda name: faulty if name == "softmax.metal" else kernel_source(name),
    )
    params = {"tokens": 4, "dim": 256, "causal": False, "temperature": 1.0}
    with pytest.raises(
        AssertionError, match="parameter block of 16 bytes, but its struct needs 20"
    ):
        check(MetalCommandDevice(open_runtime()), "softmax", params)
