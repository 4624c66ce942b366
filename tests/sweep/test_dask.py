"""The dask executor: each task spawns the isolated worker, so a crash is still isolated."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import STRICT, write_matrix

from diffcheck.sweep.executors import DaskExecutor
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.run import run_sweep
from diffcheck.sweep.worker import FAULT_ENV

MATRIX = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }, { m = 64, n = 33, k = 35, seeds = [7] }]
"""


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_dask_executor_on_a_loopback_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: bool
) -> None:
    distributed = pytest.importorskip(
        "distributed", reason="distributed is not installed (pip install 'diffcheck[dask]')"
    )
    killed = f"{STRICT}/gemm/gemm-64x33x35-f32-s7"
    monkeypatch.setenv(FAULT_ENV, f"{killed}:kill")
    matrix = write_matrix(tmp_path, MATRIX)
    plan = plan_matrix(load_matrix(matrix))
    with distributed.LocalCluster(
        n_workers=1, processes=processes, host="127.0.0.1", protocol="tcp", dashboard_address=None
    ) as cluster:
        executor = DaskExecutor(cluster.scheduler_address)
        summary, outputs = run_sweep(
            plan, matrix=matrix, out=tmp_path / "out", executor=executor, timeout_s=30
        )
    rows = {row.id: row for row in summary.checks}
    assert rows[f"{STRICT}/gemm/gemm-1x3x5-f32-s42"].status == "passed"
    assert rows[killed].status == "failed"
    assert rows[killed].reason == "worker killed by signal SIGKILL (9)"
    assert summary.executor == f"dask at {cluster.scheduler_address}"
    assert summary.exit_status == 1
    assert outputs.summary.is_file()


def test_dask_executor_reports_an_unreachable_scheduler(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="distributed is not installed")
    from diffcheck.errors import ConfigError

    executor = DaskExecutor("tcp://127.0.0.1:9", connect_timeout_s=1.0)
    with pytest.raises(ConfigError, match=r"cannot reach the dask scheduler at tcp://127.0.0.1:9"):
        next(executor.run([], 1.0))
