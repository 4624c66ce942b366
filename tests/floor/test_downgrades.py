"""An f32 check of a lower-precision computation fails with the twin named; honest ones pass.

The downgrades are planted in torch (tests/floor/downgrades.py), so the candidate computes
them with its own arithmetic; the floor's twins only have to recognise them.
"""

from __future__ import annotations

from typing import Any

import pytest

from diffcheck.config import make_check
from diffcheck.runner import run_check

from .downgrades import DowngradedTorch

pytest.importorskip("torch")

#: (op, shape) of every op whose definition multiplies matrices, at the matrices' shapes.
MATMUL_CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("gemm", {"m": 64, "n": 33, "k": 35}),
    ("gemm", {"m": 1, "n": 3, "k": 5}),
    ("gemm", {"m": 128, "n": 256, "k": 512}),
    ("attention", {"tokens": 4, "kv_len": 8, "heads": 4, "kv_heads": 2, "head_dim": 16}),
    ("context-lifecycle", {"tokens": 3, "intermediate": 33, "k": 35}),
]

#: The twin each matmul downgrade must be named as.
NAMED = {
    "tf32-round": ("tf32 operands",),
    "tf32-truncate": ("tf32 truncated operands",),
    # torch's half-precision GEMM rounds its output too: on gemm, where the matmul's
    # operands are the inputs, that is float16 storage with float32 accumulation.
    "f16-matmul": ("float16 matmuls", "float16 storage"),
    "bf16-matmul": ("bfloat16 matmuls", "bfloat16 storage"),
}


def _run(kind: str, op: str, precision: str = "f32", **params: Any) -> Any:
    check = make_check("torch:cpu", op, precision=precision, seed=7, **params)
    document = run_check(check, candidate=DowngradedTorch(kind))
    assert document.result is not None
    return document.result


@pytest.mark.parametrize("kind", sorted(NAMED))
@pytest.mark.parametrize(("op", "params"), MATMUL_CHECKS, ids=lambda v: str(v))
def test_a_downgraded_matmul_fails_an_f32_check_with_its_twin_named(
    kind: str, op: str, params: dict[str, Any]
) -> None:
    result = _run(kind, op, **params)
    assert result.status == "failed", result.reason
    assert "precision floor: " in result.reason
    assert result.floor.status == "failed"
    assert result.floor.candidate_nmse >= result.floor.derived_tolerance
    assert result.floor.match in NAMED[kind], (result.floor.match, result.reason)
    if kind.startswith("tf32"):
        assert "TF32" in result.reason


@pytest.mark.parametrize("op", ["softmax", "silu-mul", "attention"])
def test_a_fast_exp_fails_an_f32_check(op: str) -> None:
    result = _run("fast-exp", op)
    assert result.status == "failed"
    assert result.floor.status == "failed", result.floor


@pytest.mark.parametrize("op", ["rms-norm", "gemm", "silu-mul", "softmax", "rope"])
def test_inputs_stored_in_float16_behind_the_checks_back_fail_as_float16_storage(op: str) -> None:
    result = _run("f16-storage", op)
    assert result.status == "failed"
    # A GEMM's operands are its inputs: storage and operand twins coincide there (TF32 and
    # float16 round values in [-1, 1] alike), and the reason lists every one that fits.
    named = ("tf32 operands", "float16 operands") if op == "gemm" else ("float16 storage",)
    assert result.floor.match in named, result.reason


def test_the_seeds_bucket_alone_would_have_passed_the_tf32_gemm() -> None:
    # The defect this floor closes: the f32 bucket (1e-7) passes a TF32 GEMM by itself.
    result = _run("tf32-round", "gemm", m=64, n=33, k=35)
    assert result.metrics.nmse < result.tolerance
    assert result.status == "failed"
    assert result.reason.startswith("precision floor: ")


@pytest.mark.parametrize("call", [1, 2])
@pytest.mark.parametrize(
    ("op", "params"),
    [
        ("attention", {"tokens": 4, "kv_len": 8, "heads": 4, "kv_heads": 2, "head_dim": 16}),
        ("attention", {"tokens": 16, "kv_len": 64, "heads": 2, "kv_heads": 1, "head_dim": 32}),
    ],
    ids=lambda v: str(v),
)
def test_tf32_at_one_matmul_of_two_is_named_at_that_call(
    call: int, op: str, params: dict[str, Any]
) -> None:
    result = _run(f"tf32-call-{call}", op, **params)
    assert result.status == "failed", result.reason
    assert result.floor.match == "tf32 operands", result.reason
    assert f"at matmul {call} of 2 only" in result.reason, result.reason
    singles = [t for t in result.floor.twins if t.matmul is not None]
    assert sorted({(t.matmul, t.matmuls) for t in singles}) == [(1, 2), (2, 2)]
    # Only the twin of that call models it: the whole-op TF32 twin and the other call's
    # stay far (their rounding patterns differ).
    models = {t.label for t in result.floor.twins if t.label in _models_labels(result.floor)}
    assert f"tf32 operands at matmul {call} of 2 only" in models
    assert f"tf32 operands at matmul {3 - call} of 2 only" not in models
    assert "tf32 operands" not in models


def _models_labels(floor: Any) -> set[str]:
    from diffcheck.floor import twin_tolerance

    return {
        t.label
        for t in floor.twins
        if t.distance < twin_tolerance(floor.derived_tolerance, floor.multiple, t.spread, t.nmse)
    }


def test_a_one_matmul_op_runs_no_twin_per_call() -> None:
    result = _run("tf32-round", "gemm", m=64, n=33, k=35)
    assert [t for t in result.floor.twins if t.matmul is not None] == []
