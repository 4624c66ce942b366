"""Every op on mlx:cpu against the NumPy reference, at every precision, on the contract's shapes."""

from __future__ import annotations

from typing import Any

import pytest
from diffcheck.adapters import Adapter, resolve
from diffcheck.differ import diff
from diffcheck.ops import get_op
from diffcheck.ops.samples import CONTRACT_CASES, OpCase
from diffcheck.precision import PRECISIONS, PrecisionName, default_max_nmse


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", CONTRACT_CASES, ids=lambda case: case.id)
def test_op_matches_numpy_reference(
    mlx_cpu: Adapter, run_check: Any, case: OpCase, precision: PrecisionName
) -> None:
    op = get_op(case.op)
    check = run_check(mlx_cpu, op, op.params(**case.values), precision)

    assert check.verdict.passed, check.verdict.reason
    assert check.verdict.metrics is not None
    assert check.verdict.metrics.nmse < default_max_nmse(precision)
    assert check.execution.output.size == check.expected_elements
    # Segmented ops are judged phase by phase, every phase measured.
    assert len(check.verdict.segments) == len(op.segment_names)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", ["rms-norm", "gemm", "silu-mul", "context-lifecycle"])
def test_executed_storage_is_read_from_the_arrays(
    mlx_cpu: Adapter, run_check: Any, name: str, precision: PrecisionName
) -> None:
    op = get_op(name)
    execution = run_check(mlx_cpu, op, op.params(), precision).execution

    assert (execution.input_storage, execution.output_storage) == (precision, precision)
    assert execution.output.dtype.name == "float32"


def test_plain_mlx_runs_on_the_default_device(run_check: Any, mlx_cpu: Adapter) -> None:
    default = resolve("mlx")
    op = get_op("gemm")
    check = run_check(default, op, op.params(m=64, n=33, k=35), "f32")

    assert check.verdict.passed, check.verdict.reason
    assert check.execution.execution_path.endswith("via mlx")


def test_cpu_reference_role_accumulates_in_float64(mlx_cpu: Adapter, reference: Adapter) -> None:
    op = get_op("gemm")
    params = op.params(m=64, n=33, k=35)
    inputs = op.inputs(params, 7)
    ref = reference.execute(op, params, inputs, "f32", role="reference")
    wide = mlx_cpu.execute(op, params, inputs, "f32", role="reference")
    narrow = mlx_cpu.execute(op, params, inputs, "f32", role="candidate")

    assert mlx_cpu.capabilities().float64
    # Both references accumulate in float64 and round once, so they agree to within one
    # float32 ULP (summation order); float32 accumulation does not, which shows the
    # reference role really ran wide on MLX's CPU.
    wide_metrics = diff(ref.output, wide.output, max_nmse=1e-7).metrics
    narrow_metrics = diff(ref.output, narrow.output, max_nmse=1e-7).metrics
    assert wide_metrics is not None
    assert narrow_metrics is not None
    assert wide_metrics.max_ulp <= 1 < narrow_metrics.max_ulp
