"""Shared fixtures: the adapter under test, the NumPy reference and one check helper."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from diffcheck.adapters import Adapter, Execution, resolve
from diffcheck.differ import Verdict, diff
from diffcheck.ops import Op, OpParams
from diffcheck.precision import PrecisionName, default_max_nmse

#: The seed every check uses (any fixed value; the inputs are seeded per op).
SEED = 20240607


@dataclass(frozen=True)
class Check:
    """One candidate execution and its verdict against the NumPy reference."""

    execution: Execution
    verdict: Verdict
    expected_elements: int


CheckRunner = Callable[[Adapter, Op[OpParams], OpParams, PrecisionName], Check]


@pytest.fixture(scope="session")
def mlx_cpu() -> Adapter:
    """``mlx:cpu`` resolved through its entry point; skipped with the probe's reason."""
    adapter = resolve("mlx:cpu")
    probe = adapter.probe()
    if not probe.is_available:
        pytest.skip(f"mlx:cpu is unavailable: {probe.reason}")
    return adapter


@pytest.fixture(scope="session")
def reference() -> Adapter:
    """The NumPy reference adapter."""
    return resolve("numpy")


@pytest.fixture(scope="session")
def run_check(reference: Adapter) -> CheckRunner:
    """Run ``op`` on a candidate and judge it against NumPy at the precision's tolerance."""

    def run(
        adapter: Adapter, op: Op[OpParams], params: OpParams, precision: PrecisionName
    ) -> Check:
        expected = op.validate(params)
        inputs = op.inputs(params, SEED)
        ref = reference.execute(op, params, inputs, "f32", role="reference")
        execution = adapter.execute(op, params, inputs, precision)
        verdict = diff(
            ref.output,
            execution.output,
            max_nmse=default_max_nmse(precision),
            expected_elements=expected,
            segments=op.segments(params) or None,
        )
        return Check(execution, verdict, expected)

    return run
