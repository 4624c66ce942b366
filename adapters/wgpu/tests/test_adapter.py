"""The wgpu adapter's identity: probe, capabilities, registration, kernel sources, lazy import."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from diffcheck.adapters import resolve
from diffcheck.gpu_plan import check_kernel_source, kernel_named
from diffcheck.ops import OPS, get_op
from diffcheck_wgpu import WgpuAdapter
from diffcheck_wgpu._kernels import KERNEL_FILES, KERNEL_NAMES, kernel_source


def test_probe_detail_is_the_adapter_line(wgpu_adapter: WgpuAdapter) -> None:
    import wgpu

    probe = wgpu_adapter.probe()
    assert probe.status == "available"
    pattern = r".+ via (Vulkan|Metal|D3D12|OpenGL) \(\w+ adapter\), wgpu " + re.escape(
        wgpu.__version__
    )
    assert re.fullmatch(pattern, probe.detail), probe.detail


def test_probe_without_wgpu_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wgpu", None)  # makes `import wgpu` raise ImportError
    probe = WgpuAdapter().probe()
    assert probe.status == "unavailable"
    assert probe.reason is not None
    assert "run 'pip install wgpu'" in probe.reason


@pytest.mark.skipif(sys.platform == "win32", reason="D3D12 exists on Windows")
def test_probe_of_a_missing_backend_type_is_unavailable(wgpu_adapter: WgpuAdapter) -> None:
    probe = WgpuAdapter("d3d12").probe()
    assert probe.status == "unavailable"
    assert probe.reason is not None
    assert probe.reason.startswith("wgpu found no D3D12 adapter (adapters found: ")


def test_the_entry_point_resolves_every_device_variant() -> None:
    assert type(resolve("wgpu")) is WgpuAdapter
    adapter = resolve("wgpu:opengl")
    assert isinstance(adapter, WgpuAdapter)
    assert adapter.spec == "wgpu:opengl"


#: diffcheck's ops with raw-GPU kernels, all shipped in WGSL.
BUILTIN_RAW_OPS = {
    "gemm",
    "rms-norm",
    "silu-mul",
    "context-lifecycle",
    "softmax",
    "layer-norm",
    "rope",
    "attention",
    "add-rms-norm",
}


def test_capabilities_and_refusals(wgpu_adapter: WgpuAdapter) -> None:
    capabilities = wgpu_adapter.capabilities()
    assert capabilities.precisions in (("f32",), ("f32", "f16"))
    assert (capabilities.float64, capabilities.command_contexts) == (False, True)
    # The example op plugin (when installed) brings its own WGSL kernel through Op.raw_launch.
    plugin = {"gelu"} & set(OPS)
    assert capabilities.ops == BUILTIN_RAW_OPS | plugin
    assert any("shader-f16" in note for note in capabilities.notes)
    assert capabilities.refusals["bf16"] == "WGSL has no bf16 type"
    assert wgpu_adapter.has_command_contexts
    with pytest.raises(TypeError, match="no Array API namespace"):
        wgpu_adapter.namespace()
    op = get_op("gemm")
    params = op.params()
    with pytest.raises(ValueError, match="precision 'bf16' on wgpu: WGSL has no bf16 type; use"):
        wgpu_adapter.execute(op, params, op.inputs(params, 1), "bf16")


def test_labels_name_the_kernels_and_the_adapter(wgpu_adapter: WgpuAdapter) -> None:
    gemm = get_op("gemm")
    assert wgpu_adapter.kernel_entrypoint(gemm, gemm.params(m=1, n=3, k=5), "f32") == "gemv_f32"
    lifecycle = get_op("context-lifecycle")
    assert wgpu_adapter.kernel_entrypoint(lifecycle, lifecycle.params(), "f32") == (
        "gemm_f32_tiled -> copy_buffer_to_buffer -> silu_mul_split_f32 (wgpu command encoders, one queue)"
    )
    prefix = f"{gemm.execution_path} as wgpu compute passes on "
    path = wgpu_adapter.execution_path(gemm)
    assert path.startswith(prefix)
    # The path names the adapter of the probe line: "<device> via <backend>".
    assert wgpu_adapter.probe().detail.startswith(path.removeprefix(prefix) + " (")


@pytest.mark.parametrize("kernel", sorted(KERNEL_FILES))
def test_kernel_sources_ship_and_match_the_launch_plan(kernel: str) -> None:
    filename, entry = KERNEL_FILES[kernel]
    source = kernel_source(filename)
    check_kernel_source(kernel_named(kernel), source, origin=filename)
    assert f"fn {entry}(" in source
    assert KERNEL_NAMES[kernel] == entry


def test_importing_the_adapter_does_not_import_wgpu() -> None:
    code = (
        "import sys, diffcheck_wgpu, diffcheck.adapters as a; a.resolve('wgpu'); "
        "assert 'wgpu' not in sys.modules, 'wgpu imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
