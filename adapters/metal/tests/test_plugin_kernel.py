"""An op plugin's own MSL kernel through the Metal adapter, over the NumPy stand-in.

The example op plugin (ops/example, ``gelu``) registers a kernel carrying its WGSL and MSL
sources; the Metal adapter compiles the MSL without knowing the plugin. The stand-in binds
buffers by the source's ``[[buffer(N)]]`` slots, decodes the parameter block by its struct
and checks the threadgroup size against its constants, so these tests show that the
plugin's MSL, its launch and the adapter agree; they cannot show that it compiles on a Mac.
An op whose kernel has no MSL source is not run on Metal, with the reason.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.launch import Kernel, register_kernel
from diffcheck.ops import OPS
from diffcheck.runner import run_check
from diffcheck_metal import MetalAdapter


@pytest.fixture
def gelu_module() -> Any:
    if "gelu" not in OPS:
        pytest.skip("the example op plugin is not installed (pip install -e ops/example)")
    import diffcheck_example_ops.gelu as module

    return module


def test_the_plugin_kernel_runs_on_metal_and_passes(
    fake_metal: ModuleType, gelu_module: Any
) -> None:
    assert "gelu" in MetalAdapter().capabilities().ops
    document = run_check(make_check("metal", "gelu", tokens=5, dim=258))
    assert document.result is not None
    assert document.result.status == "passed", document.result.reason
    assert document.executed_precision is not None
    assert document.executed_precision.kernel_entrypoint == "gelu_f32"


def test_a_plugin_source_with_swapped_slots_fails(
    fake_metal: ModuleType, gelu_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel: Kernel = gelu_module.GELU_KERNEL
    msl = kernel.sources["msl"]
    swapped = (
        msl.text.replace("[[buffer(0)]]", "[[buffer(9)]]")
        .replace("[[buffer(1)]]", "[[buffer(0)]]")
        .replace("[[buffer(9)]]", "[[buffer(1)]]")
    )
    assert swapped != msl.text
    # A kernel of its own name (the registry keeps one kernel per name).
    faulty = register_kernel(
        Kernel(
            "example_gelu_tanh_swapped",
            kernel.constants,
            {**kernel.sources, "msl": replace(msl, text=swapped)},
        )
    )
    monkeypatch.setattr(gelu_module, "GELU_KERNEL", faulty)
    document = run_check(make_check("metal", "gelu", tokens=4, dim=256))
    assert document.result is not None
    assert document.result.status == "failed"
    # gate and up swapped: both halves wrong.
    assert {s.name for s in document.segments or [] if s.status == "failed"} == {"gate", "up"}


def test_an_op_whose_kernel_has_no_msl_is_not_run_with_the_reason(
    fake_metal: ModuleType, gelu_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel: Kernel = gelu_module.GELU_KERNEL
    wgsl_only = register_kernel(
        Kernel("example_gelu_tanh_wgsl_only", kernel.constants, {"wgsl": kernel.sources["wgsl"]})
    )
    monkeypatch.setattr(gelu_module, "GELU_KERNEL", wgsl_only)
    capabilities = MetalAdapter().capabilities()
    assert "gelu" not in capabilities.ops
    why = "kernel 'example_gelu_tanh_wgsl_only' has no MSL source: its op gives none and metal ships none"
    assert capabilities.refusals["gelu"] == why
    document = run_check(make_check("metal", "gelu", tokens=4, dim=256))
    assert document.result is not None
    assert document.result.status == "not_run"
    assert document.result.reason == f"candidate backend metal does not implement op gelu: {why}"


def test_a_raw_launch_that_raises_is_a_refusal_not_a_broken_probe(
    fake_metal: ModuleType, gelu_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Any, params: Any, limit: int) -> None:
        raise ValueError("half_count overflows")

    monkeypatch.setattr(gelu_module.Gelu, "raw_launch", broken)
    capabilities = MetalAdapter().capabilities()
    assert "gelu" not in capabilities.ops
    assert "gemm" in capabilities.ops  # the other ops are unaffected
    assert capabilities.refusals["gelu"] == (
        "its raw_launch failed at default params: half_count overflows"
    )
