"""Honest candidates pass every op and shape of the default matrix at their precision.

The derived tolerance is a multiple of a floor measured in the same run; these are the
measurements that multiple rests on (docs/precision-floor.md), kept as tests: a candidate
that computes honestly at its precision must never fail the floor.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diffcheck.adapters import resolve
from diffcheck.config import make_check
from diffcheck.floor import FLOOR_MULTIPLE
from diffcheck.report.arrays import decode_output
from diffcheck.report.floor_check import check_floor
from diffcheck.runner import run_check

from .downgrades import DowngradedTorch

MATRIX = Path(__file__).parents[2] / "matrices" / "default.toml"
HONEST = ("array_api_strict", "torch:cpu", "mlx:cpu", "wgpu")


def _shapes() -> list[tuple[str, dict[str, Any]]]:
    ops = tomllib.loads(MATRIX.read_text())["ops"]
    return [
        (op, {k: v for k, v in shape.items() if k != "seeds"})
        for op, table in ops.items()
        for shape in table["shapes"]
    ]


def _available(backend: str) -> Any:
    try:
        adapter = resolve(backend)
    except Exception as error:  # an adapter that is not installed here
        pytest.skip(f"{backend} is not installed: {error}")
    probe = adapter.probe()
    if probe.status != "available":
        pytest.skip(f"{backend}: {probe.reason}")
    return adapter


@pytest.mark.parametrize("backend", HONEST)
def test_honest_candidates_pass_every_op_and_shape_at_every_precision_they_run(
    backend: str,
) -> None:
    adapter = _available(backend)
    precisions = adapter.capabilities().precisions
    worst: list[tuple[float, str]] = []
    for op, params in _shapes():
        for precision in precisions:
            check = make_check(backend, op, precision=precision, seed=42, **params)
            document = run_check(check, candidate=adapter)
            result = document.result
            assert result is not None
            if result.status == "not_run":
                continue
            floor = result.floor
            assert floor is not None, (op, params, precision, result.reason)
            assert floor.status == "passed", (op, params, precision, result.reason)
            # The margin is measured against the floor of both honest orders (a pass takes
            # the in-order one only where the pairwise floor alone fails it).
            chains = op == "context-lifecycle" and document.submission_phases is None
            actual = decode_output(result.actual, "result.actual")
            both = check_floor(check, chains, actual, in_order=True)
            assert both is not None
            worst.append((both.candidate_nmse / both.floor_nmse, f"{op} {params} {precision}"))
    assert worst, f"{backend} ran no check"
    ratio, where = max(worst)
    # Honest candidates stay well inside the multiple (a tenth of it at f32).
    assert ratio < FLOOR_MULTIPLE["f32"] / 10, where


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,  # the same gemms every run: CI is repeatable
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    m=st.integers(1, 48),
    n=st.integers(1, 48),
    k=st.integers(2, 96),
    seed=st.integers(0, 2**32 - 1),
)
def test_generated_gemms_fail_with_tf32_operands_and_pass_honestly(
    m: int, n: int, k: int, seed: int
) -> None:
    pytest.importorskip("torch")
    check = make_check("torch:cpu", "gemm", seed=seed, m=m, n=n, k=k)
    honest = run_check(check).result
    assert honest is not None
    assert honest.status == "passed", (m, n, k, seed, honest.status, honest.reason)
    downgraded = run_check(check, candidate=DowngradedTorch("tf32-round")).result
    assert downgraded is not None
    if downgraded.floor.candidate_nmse == honest.floor.candidate_nmse:
        # Every operand already fits in TF32's 10 bits (tiny shapes can draw such values):
        # the computation is the same, and nothing was downgraded.
        return
    assert downgraded.status == "failed", downgraded.reason
    assert downgraded.floor.match == "tf32 operands", downgraded.reason
