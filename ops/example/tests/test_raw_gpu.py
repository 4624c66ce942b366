"""The plugin's own WGSL kernel on a real wgpu device, through diffcheck's whole check path.

diffcheck and its wgpu adapter know nothing of ``gelu``: the kernel's source and launch come
from this package (``Gelu.raw_launch`` and ``kernels/gelu.wgsl``). Where wgpu or an adapter
is missing, the tests skip with the probe's reason; a check run there is ``not_run``, never a
pass (the last test shows it with a backend name that has no adapter).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.report.replay import replay
from diffcheck.runner import run_check

wgpu_adapter_module = pytest.importorskip(
    "diffcheck_wgpu", reason="diffcheck-wgpu is not installed (pip install -e adapters/wgpu)"
)
WgpuAdapter = wgpu_adapter_module.WgpuAdapter

SOURCE = Path(__file__).parents[1] / "src" / "diffcheck_example_ops" / "kernels" / "gelu.wgsl"


@pytest.fixture(scope="module")
def wgpu() -> Any:
    adapter = WgpuAdapter()
    probe = adapter.probe()
    if not probe.is_available:
        pytest.skip(f"wgpu backend {probe.status}: {probe.reason}")
    return adapter


def planted(source_edit: tuple[str, str], **options: Any) -> Any:
    """A wgpu adapter whose ``gelu`` kernel is this package's WGSL with one edit."""
    from diffcheck_example_ops.gelu import GELU_KERNEL

    old, new = source_edit
    source = SOURCE.read_text(encoding="utf-8")
    assert source.count(old) == 1, f"the planted fault {old!r} no longer applies"
    adapter = WgpuAdapter(**options)
    runtime = adapter._runtime().with_sources({GELU_KERNEL.name: source.replace(old, new)})
    adapter._runtime = lambda: runtime  # type: ignore[method-assign]
    return adapter


def test_the_plugin_kernel_passes_on_wgpu_and_the_report_replays(wgpu: Any) -> None:
    assert "gelu" in wgpu.capabilities().ops
    document = run_check(make_check("wgpu", "gelu", tokens=3, dim=258), candidate=wgpu)
    assert document.result is not None
    assert document.result.status == "passed", document.result.reason
    assert document.executed_precision is not None
    assert document.executed_precision.kernel_entrypoint == "gelu_f32"
    assert {s.name: s.status for s in document.segments or []} == {
        "gate": "passed",
        "up": "passed",
    }
    assert replay(document).agrees


def test_a_grid_split_over_three_dimensions_covers_every_element(wgpu: Any) -> None:
    # 5 · 258 = 1290 outputs, 6 workgroups of 256 on a 2 x 2 x 2 grid (limit 2 per dimension).
    limited = WgpuAdapter(max_workgroups_per_dimension=2)
    document = run_check(make_check("wgpu", "gelu", tokens=5, dim=258), candidate=limited)
    assert document.result is not None
    assert document.result.status == "passed", document.result.reason


@pytest.mark.parametrize(
    ("edit", "failing"),
    [
        (("if (i < params.half_count) {", "if (i <= params.half_count) {"), {"up"}),
        (("(x + 0.044715 * x * x * x)", "(x - 0.044715 * x * x * x)"), {"gate", "up"}),
        (("if (i >= params.total) {", "if (i + 1u >= params.total) {"), {"up"}),
    ],
    ids=[
        "off by one at the halves' boundary",
        "cubic term's sign flipped",
        "last element unwritten",
    ],
)
def test_a_planted_wrong_kernel_fails_by_segment(
    wgpu: Any, edit: tuple[str, str], failing: set[str]
) -> None:
    document = run_check(make_check("wgpu", "gelu", tokens=4, dim=256), candidate=planted(edit))
    assert document.result is not None
    assert document.result.status == "failed"
    assert {s.name for s in document.segments or [] if s.status == "failed"} == failing
    # The failed report replays as failed (the verdict is recomputed, not trusted).
    assert replay(document).agrees


def test_a_kernel_the_driver_refuses_fails_with_the_driver_message(wgpu: Any) -> None:
    # Reading gate for both halves leaves `up` unbound: the bind group no longer matches.
    edit = ("x = f32(up[i - params.half_count]);", "x = f32(gate[i - params.half_count]);")
    document = run_check(make_check("wgpu", "gelu", tokens=4, dim=256), candidate=planted(edit))
    assert document.result is not None
    assert document.result.status == "failed"
    assert "WgpuExecutionError" in (document.result.reason or "")
    assert "example_gelu_tanh" in (document.result.reason or "")


def test_a_backend_that_is_not_there_is_not_run() -> None:
    document = run_check(make_check("wgpu:d3d12", "gelu", tokens=2, dim=8))
    assert document.result is not None
    if document.result.status != "not_run":  # a Windows machine with a D3D12 adapter
        pytest.skip("this machine has a D3D12 wgpu adapter")
    assert "wgpu found no D3D12 adapter" in (document.result.reason or "")
