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


def test_dask_executor_on_a_loopback_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Threads here; worker processes in another directory below.
    processes = False
    distributed = pytest.importorskip(
        "distributed", reason="distributed is not installed (pip install 'diffcheck[dask]')"
    )
    killed = f"{STRICT}/gemm/gemm-64x33x35-f32-s7"
    monkeypatch.setenv(FAULT_ENV, f"{killed}:kill")
    matrix = write_matrix(tmp_path, MATRIX)
    plan = plan_matrix(load_matrix(matrix))
    with distributed.LocalCluster(
        n_workers=1,
        processes=processes,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address="127.0.0.1:0",
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


def test_dask_workers_need_no_shared_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed", reason="distributed is not installed")
    import os

    from diffcheck.report.replay import load_report, replay

    killed = f"{STRICT}/gemm/gemm-64x33x35-f32-s7"
    monkeypatch.setenv(FAULT_ENV, f"{killed}:kill")
    matrix = write_matrix(tmp_path, MATRIX)
    plan = plan_matrix(load_matrix(matrix))
    elsewhere = tmp_path / "worker-cwd"
    elsewhere.mkdir()
    out = tmp_path / "out"

    def forbid(root: str) -> None:
        # The dask worker process may not touch the sweep directory at all: any open,
        # rename, link, mkdir or remove under it raises there.
        import sys

        def hook(event: str, args: tuple[object, ...]) -> None:
            if (event == "open" or event.startswith("os.")) and args:
                target = args[0]
                if isinstance(target, (str, os.PathLike)) and os.fspath(target).startswith(root):
                    raise PermissionError(f"dask worker touched the sweep directory: {event}")

        sys.addaudithook(hook)

    with distributed.LocalCluster(
        n_workers=1,
        processes=True,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address="127.0.0.1:0",
        local_directory=str(tmp_path / "dask-space"),
    ) as cluster:
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            client.run(os.chdir, str(elsewhere))  # the workers live somewhere else
            client.run(forbid, str(out))
            cwd = client.run(os.getcwd)
        summary, _ = run_sweep(
            plan,
            matrix=matrix,
            out=out,
            executor=DaskExecutor(cluster.scheduler_address),
            timeout_s=30,
        )
    assert list(cwd.values()) == [str(elsewhere)]
    rows = {row.id: row for row in summary.checks}
    passed = f"{STRICT}/gemm/gemm-1x3x5-f32-s42"
    assert rows[passed].status == "passed"
    assert replay(load_report(out / f"{passed}.json")).agrees
    assert rows[killed].reason == "worker killed by signal SIGKILL (9)"
    assert "test fault 'kill' injected" in (out / f"{killed}.worker.log").read_text()


def test_a_remote_task_never_sees_the_parent_path_and_its_result_is_checked(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    from diffcheck.config import make_check
    from diffcheck.report.replay import load_report
    from diffcheck.sweep.remote import Landing, remote_spec, run_remote
    from diffcheck.sweep.spec import WorkerSpec

    check = make_check("array_api_strict", "gemm", m=1, n=3, k=5)
    other = make_check("array_api_strict", "gemm", m=2, n=3, k=5)
    spec = WorkerSpec.of("a", check, str(tmp_path / "a.json"))
    assert str(tmp_path) not in remote_spec(spec)
    landing = Landing(spec)
    assert not load_report(tmp_path / "a.json").completed  # created before the task runs
    # A result that is another check's report is not written as this one's.
    wrong = run_remote(remote_spec(WorkerSpec.of("a", other, "x.json")), 30.0)
    outcome = landing.land(wrong)
    document = load_report(tmp_path / "a.json")
    assert document.result is not None
    assert document.result.status == "failed"
    assert document.result.reason == "the remote task returned the report of a different check"
    assert outcome.action == "completed the worker's incomplete report as failed"
    # A garbled one neither.
    landing = Landing(WorkerSpec.of("b", check, str(tmp_path / "b.json")))
    good = run_remote(remote_spec(WorkerSpec.of("b", check, "x.json")), 30.0)
    landing.land(replace(good, report=b"[" * 100_000))
    reason = load_report(tmp_path / "b.json").result.reason  # type: ignore[union-attr]
    assert reason == (
        "the remote task returned an invalid report: report of the remote task is nested too "
        "deeply to be a report"
    )
