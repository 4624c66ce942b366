"""diffcheck-example: a third-party backend adapter in one folder.

The backend is :mod:`diffcheck_example.xp`, a deliberately minimal array namespace that
array-api-compat does not know: NumPy arrays for storage, and hand-written functions for
exactly what diffcheck's ops call (a naive GEMM loop, reductions, elementwise math). The
adapter below is everything diffcheck needs to run every op on it.
"""

from __future__ import annotations

import os
from typing import Any

from diffcheck.adapters import Adapter, Capabilities, Probe

__all__ = ["DISABLE_VARIABLE", "ExampleAdapter"]

__version__ = "0.1.0"

#: Set this environment variable to make the backend report itself unavailable (to see how
#: diffcheck reports a backend that cannot run: not_run in reports, a skip in tests).
DISABLE_VARIABLE = "DIFFCHECK_EXAMPLE_UNAVAILABLE"


class ExampleAdapter(Adapter):
    """The ``example`` backend: :mod:`diffcheck_example.xp` on the host CPU.

    It stores f32 and f16 (NumPy has no bfloat16, so it does not claim bf16) and accumulates
    GEMM in a sequential loop over k, in the dtype the op asks for.
    """

    name = "example"
    devices = ("cpu",)
    description = "example third-party adapter: a minimal namespace with a naive GEMM loop"
    namespace_label = "diffcheck_example.xp"

    def _probe(self) -> Probe:
        # Import lazily, as every adapter must: listing backends imports no backend library.
        import numpy

        if os.environ.get(DISABLE_VARIABLE):
            return Probe.unavailable(f"disabled by the environment variable {DISABLE_VARIABLE}")
        return Probe.available(f"diffcheck-example {__version__} (NumPy {numpy.__version__})")

    def namespace(self) -> Any:
        from . import xp

        return xp

    def capabilities(self) -> Capabilities:
        return Capabilities(
            precisions=("f32", "f16"),
            float64=True,
            notes=("naive k-loop GEMM; no bfloat16",),
        )
