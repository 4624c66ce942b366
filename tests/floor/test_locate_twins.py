"""``locate`` names the precision twin of a wrong matmul, as a failing ``compare`` does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import diffcheck

from .downgrades import DowngradedTorch

pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 32)).astype(np.float32)
W = (RNG.standard_normal((32, 24)) / 5).astype(np.float32)


def program(xp: Any, x: Any, w: Any) -> Any:
    h = xp.tanh(x)
    y = xp.matmul(h, w)
    return xp.exp(-y * y)


@pytest.mark.parametrize(
    ("kind", "twin"),
    [("tf32-round", "TF32 matmul operands"), ("bf16-matmul", "bfloat16 matmuls")],
)
def test_a_downgraded_matmul_is_located_and_its_twin_named(kind: str, twin: str) -> None:
    # Judged by the float32 NMSE bucket (1e-7), a TF32 matmul (NMSE ~5e-8) was not wrong.
    found = diffcheck.locate(program, X, W, candidate=DowngradedTorch(kind))
    assert not found
    assert found.first_wrong is not None
    assert found.first_wrong.function == "matmul"
    assert found.diagnosis is not None
    assert found.diagnosis.startswith(f"consistent with {twin}"), found.diagnosis
    assert f"diagnosis: consistent with {twin}" in found.summary()
    wrong = found.first_wrong
    if kind == "tf32-round":  # the float32 NMSE bucket (1e-7) alone let it through
        assert wrong.local.nmse < 1e-7
    assert "x this call's float32 precision floor" in (wrong.local.reason or ""), wrong.local


def test_an_honest_matmul_is_within_its_floor_bound() -> None:
    found = diffcheck.locate(program, X, W, candidate="torch:cpu")
    assert found, found.summary()
    matmul = next(c for c in found.calls if c.function == "matmul")
    assert matmul.status == "ok"
    # Its bound is the call's own floor times 100, far below the float32 bucket (1e-7).
    assert matmul.bound.startswith("NMSE < ")
    assert float(matmul.bound.removeprefix("NMSE < ")) < 1e-10, matmul.bound


def test_a_wrong_call_that_is_no_matmul_has_no_diagnosis() -> None:
    found = diffcheck.locate(program, X, W, candidate=DowngradedTorch("fast-exp"))
    assert found.first_wrong is not None
    assert found.first_wrong.function == "exp"
    assert found.diagnosis is None
    assert "diagnosis:" not in found.summary()
