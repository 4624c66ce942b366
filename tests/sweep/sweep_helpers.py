"""Matrices, expected ids and the run record shared by the sweep tests (see conftest.py).

array_api_strict needs no adapter code and runs f32 only, so these tests need neither mlx
nor wgpu.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STRICT = "numpy-vs-array_api_strict"

#: Six checks on array_api_strict (four of them faulted below) plus a pair with no adapter.
FAULT_MATRIX = """
schema_version = 1
description = "fault injection"

[[pairs]]
candidate = "array_api_strict"

[[pairs]]
candidate = "no_such_backend"

[ops.gemm]
shapes = [
    { m = 64, n = 32, k = 32 },
    { m = 64, n = 33, k = 35, seeds = [7] },
    { m = 1, n = 3, k = 5 },
]

[ops.rms-norm]
shapes = [{ tokens = 3, dim = 33, eps = 1e-5, seeds = [9] }]

[ops.silu-mul]
shapes = [{ tokens = 3, intermediate = 257, seeds = [7] }]

[ops.context-lifecycle]
shapes = [{ tokens = 3, intermediate = 33, k = 35 }]
"""

FAULTS = {
    f"{STRICT}/gemm/gemm-64x33x35-f32-s7": "kill",
    f"{STRICT}/rms-norm/rms-norm-3x33-eps1e-05-f32-s9": "hang",
    f"{STRICT}/silu-mul/silu-mul-3x257-f32-s7": "abort",
    f"{STRICT}/gemm/gemm-1x3x5-f32-s42": "exit",
}
HEALTHY = [
    f"{STRICT}/gemm/gemm-64x32x32-f32-s42",
    f"{STRICT}/context-lifecycle/context-lifecycle-3x33x35-f32-s42",
]
FAULT_TIMEOUT_S = 4.0


@dataclass
class SweepRun:
    """One ``diffcheck sweep`` invocation's result."""

    code: int
    out: str
    err: str
    directory: Path

    @property
    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.directory / "summary.json").read_text())
        return data

    def rows(self) -> dict[str, dict[str, Any]]:
        return {row["id"]: row for row in self.summary["checks"]}


def write_matrix(directory: Path, text: str, name: str = "matrix.toml") -> Path:
    path = directory / name
    path.write_text(text)
    return path
