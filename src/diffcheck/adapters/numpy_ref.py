"""The NumPy reference adapter, shipped in the core."""

from __future__ import annotations

from typing import Any

from ._protocol import Adapter, Capabilities, Probe

__all__ = ["NumpyAdapter"]


class NumpyAdapter(Adapter):
    """NumPy on the host CPU: the default reference.

    NumPy stores f32 and f16 natively; it has no bfloat16, so it cannot be a bf16 candidate.
    As the reference it always computes from float32 inputs (float64 GEMM accumulation).
    """

    name = "numpy"
    devices = ("cpu",)
    description = "NumPy on the host CPU (the reference)"
    namespace_label = "numpy"

    def _probe(self) -> Probe:
        import numpy

        return Probe.available(f"numpy {numpy.__version__}")

    def namespace(self) -> Any:
        import array_api_compat.numpy

        return array_api_compat.numpy

    def capabilities(self) -> Capabilities:
        return Capabilities(precisions=("f32", "f16"), float64=True)
