"""f16 storage through the WebGPU ``shader-f16`` feature: run where offered, not_run where not.

Mesa's llvmpipe through OpenGL lacks the feature, so its not_run path is what CI sees; the
positive branch runs on any adapter that offers it (lavapipe through Vulkan does) and is
skipped elsewhere with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.adapters import resolve
from diffcheck.cli import main
from diffcheck.differ import diff
from diffcheck.ops import get_op
from diffcheck_wgpu import NoAdapterError, WgpuAdapter, WgpuCommandDevice, WgpuRuntime
from diffcheck_wgpu._runtime import BACKEND_TYPES, f16_source


def _f16_adapter() -> WgpuAdapter | None:
    for device in (None, *BACKEND_TYPES):
        adapter = WgpuAdapter(device)
        if not adapter.probe().is_available:
            continue
        try:
            if adapter._runtime().has_f16:
                return adapter
        except NoAdapterError:
            continue
    return None


@pytest.fixture(scope="module")
def f16_adapter() -> WgpuAdapter:
    adapter = _f16_adapter()
    if adapter is None:
        pytest.skip("no wgpu adapter here offers the shader-f16 feature")
    return adapter


def test_without_shader_f16_a_run_is_not_run_and_says_why(
    wgpu_adapter: WgpuAdapter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A device without the feature, whatever this machine's adapter offers.
    monkeypatch.setattr(WgpuRuntime, "has_f16", property(lambda self: False))
    adapter = WgpuAdapter()
    capabilities = adapter.capabilities()
    assert capabilities.precisions == ("f32",)
    name = adapter._runtime().adapter.info["device"]
    why = f"adapter {name!r} lacks the shader-f16 feature"
    assert capabilities.refusals["f16"] == why
    report = tmp_path / "f16.json"
    code = main(
        [
            "run",
            "--require-backend",
            "wgpu",
            "--op",
            "softmax",
            "--precision",
            "f16",
            "--report",
            str(report),
        ]
    )
    assert code != 0
    result = json.loads(report.read_text())["result"]
    assert result["status"] == "not_run"
    assert result["reason"].endswith(why)
    op = get_op("softmax")
    with pytest.raises(ValueError, match="lacks the shader-f16 feature; use --precision f32"):
        adapter.execute(op, op.params(), op.inputs(op.params(), 1), "f16")
    with pytest.raises(ValueError, match="lacks the shader-f16 feature; use f32"):
        WgpuCommandDevice(adapter._runtime(), storage="f16")


def test_the_f16_build_swaps_only_the_storage_type() -> None:
    source = "alias S = f32;\nvar<storage> x: array<S>;\nfn f() -> f32 { return f32(x[0]); }"
    built = f16_source(source, origin="k.wgsl")
    assert built.startswith("enable f16;\n")
    assert built.count("alias S = f16;") == 1
    assert "alias S = f32;" not in built
    assert "fn f() -> f32" in built  # arithmetic stays f32
    with pytest.raises(ValueError, match=r"k\.wgsl has no 'alias S = f32;' line"):
        f16_source("var<storage> x: array<f32>;", origin="k.wgsl")


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("softmax", {"causal": True}),
        ("layer-norm", {"dim": 257}),
        ("rope", {"layout": "interleaved", "offset": 123_456}),
        ("attention", {}),
        ("add-rms-norm", {}),
        ("gemm", {"m": 3, "n": 33, "k": 40}),
        ("context-lifecycle", {"intermediate": 7}),
    ],
)
def test_f16_storage_matches_the_reference_where_offered(
    f16_adapter: WgpuAdapter, name: str, values: dict[str, Any]
) -> None:
    op = get_op(name)
    params = op.params(**values)
    inputs = op.inputs(params, 3)
    expected = resolve("numpy").execute(op, params, inputs, "f32", role="reference").output
    actual = f16_adapter.execute(op, params, inputs, "f16")
    assert (actual.input_storage, actual.output_storage) == ("f16", "f16")
    assert actual.kernel_entrypoint.endswith("[f16 storage, f32 arithmetic]")
    # Every value came out of an f16 buffer.
    out = actual.output
    np.testing.assert_array_equal(out.astype(np.float16).astype(np.float32), out)
    tolerance = op.default_max_nmse("f16")
    verdict = diff(expected, out, max_nmse=tolerance, segments=op.segments(params) or None)
    assert verdict.passed, verdict.reason
    # The same f16 output against a reference that is wrong by f16's own rounding step
    # fails: the f16 tolerance still tells a correct kernel from a wrong one.
    wrong = expected * np.float32(1.0 + 2.0**-7)
    assert not diff(wrong, out, max_nmse=tolerance).passed
