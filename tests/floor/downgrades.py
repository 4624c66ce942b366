"""Candidates that quietly compute in a lower precision than they claim, on real torch.

Each is torch on the CPU (an independent library, so a pass would count) whose namespace
downgrades one thing the way a kernel would, computed by torch itself, never by the floor's
own twins: matmul operands truncated to TF32 (as tensor cores read float32), float16 or
bfloat16 matmuls (torch's own half-precision GEMM), a fast exp (a cubic polynomial for 2^f,
the classic speed-for-accuracy trade), or inputs stored in float16 while reporting float32;
or TF32 operands at one matmul call of several (``tf32-call-N``: the Nth call alone), as a
library whose kernel choice follows the shape computes an attention.
"""

from __future__ import annotations

import math
from typing import Any

from diffcheck.adapters import Execution
from diffcheck.adapters.array_api import ArrayApiAdapter

DOWNGRADES = (
    "tf32-round",
    "tf32-truncate",
    "f16-matmul",
    "bf16-matmul",
    "fast-exp",
    "f16-storage",
    "tf32-call-1",
    "tf32-call-2",
)


class _Downgraded:
    """torch's Array-API namespace with one function replaced."""

    def __init__(self, base: Any, kind: str) -> None:
        self._base = base
        self._kind = kind
        self._calls = 0  # matmul calls so far (one namespace per op run)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._base, name)
        if name == "matmul" and self._kind.startswith(("tf32", "f16-m", "bf16-m")):
            return self._matmul
        if name == "exp" and self._kind == "fast-exp":
            return self._fast_exp
        return attribute

    def _matmul(self, a: Any, b: Any, /) -> Any:
        import torch

        self._calls += 1
        if self._kind.startswith("tf32-call-") and self._calls != int(self._kind[-1]):
            return self._base.matmul(a, b)
        if self._kind.startswith("tf32"):
            return self._base.matmul(self._tf32(a), self._tf32(b))
        low = torch.float16 if self._kind == "f16-matmul" else torch.bfloat16
        return self._base.matmul(a.to(low), b.to(low)).to(a.dtype)

    def _tf32(self, x: Any) -> Any:
        import torch

        bits = x.contiguous().view(torch.int32).to(torch.int64)
        if self._kind != "tf32-truncate":  # to nearest, ties to even, in the low 13 bits
            bits = bits + 0xFFF + ((bits >> 13) & 1)
        return ((bits & ~0x1FFF) & 0xFFFFFFFF).to(torch.uint32).view(torch.float32)

    def _fast_exp(self, x: Any, /) -> Any:
        import torch

        # 2^(x log2 e) = 2^i * 2^f, f in [0, 1): 2^f from a cubic (relative error ~1e-4).
        t = x * (1.0 / math.log(2.0))
        i = torch.floor(t)
        f = t - i
        p = 1.0 + f * (0.6958 + f * (0.2251 + f * 0.0791))
        return torch.ldexp(p, i.to(torch.int32)).to(x.dtype)


class DowngradedTorch(ArrayApiAdapter):
    """torch on the CPU with one planted downgrade (``kind``, one of :data:`DOWNGRADES`)."""

    def __init__(self, kind: str) -> None:
        assert kind in DOWNGRADES, kind
        super().__init__("torch", "cpu")
        self.kind = kind

    def namespace(self) -> Any:
        return _Downgraded(super().namespace(), self.kind)

    def execute(self, op: Any, params: Any, inputs: Any, precision: Any, **kw: Any) -> Execution:
        if self.kind != "f16-storage":
            return super().execute(op, params, inputs, precision, **kw)
        import numpy as np

        # Stores inputs in float16 behind the check's back; reports float32 storage.
        rounded = {k: v.astype(np.float16).astype(np.float32) for k, v in inputs.items()}
        return super().execute(op, params, rounded, precision, **kw)
