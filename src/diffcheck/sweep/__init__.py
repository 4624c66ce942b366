"""``diffcheck sweep``: a matrix of checks, each isolated in its own worker process.

The pieces, one job each: :mod:`.matrix` (the TOML file, schema v1), :mod:`.plan`
(expansion and validation), :mod:`.known` (which rows a known divergence explains),
:mod:`.worker` (the process that runs one check), :mod:`.warm` and :mod:`.pool` (long-lived
workers forked from a fork server, and the parent's side of them), :mod:`.lifeline` (workers
die with their parent and keep their own deadline), :mod:`.isolate` (spawn, timeout, settle
the report), :mod:`.records` (the records the parent writes and the rules that keep them
honest), :mod:`.remote` (dask tasks
that return their reports), :mod:`.executors` (local processes or dask),
:mod:`.run` (the orchestration), :mod:`.summary`, :mod:`.junit`, :mod:`.html` and
:mod:`.svg` (the outputs, :mod:`diffcheck.text` keeping them well-formed), :mod:`.progress` and
:mod:`.console` (the terminal and logs).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .executors import DaskExecutor, Executor, LocalExecutor, make_executor
    from .isolate import WorkerOutcome, run_isolated
    from .matrix import MatrixFile, load_matrix, parse_matrix
    from .plan import Pair, PlannedCheck, SweepPlan, plan_matrix
    from .run import SweepOutputs, run_sweep
    from .summary import SummaryRow, SweepSummary

# Every worker process imports this package first (python -m diffcheck.sweep.worker), so the
# public names load on first use instead of pulling the executors and the HTML into each one.
_HOMES = {
    "DaskExecutor": "executors",
    "Executor": "executors",
    "LocalExecutor": "executors",
    "make_executor": "executors",
    "WorkerOutcome": "isolate",
    "run_isolated": "isolate",
    "MatrixFile": "matrix",
    "load_matrix": "matrix",
    "parse_matrix": "matrix",
    "Pair": "plan",
    "PlannedCheck": "plan",
    "SweepPlan": "plan",
    "plan_matrix": "plan",
    "SweepOutputs": "run",
    "run_sweep": "run",
    "SummaryRow": "summary",
    "SweepSummary": "summary",
}

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "MatrixFile",
    "Pair",
    "PlannedCheck",
    "SummaryRow",
    "SweepOutputs",
    "SweepPlan",
    "SweepSummary",
    "WorkerOutcome",
    "load_matrix",
    "make_executor",
    "parse_matrix",
    "plan_matrix",
    "run_isolated",
    "run_sweep",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'diffcheck.sweep' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{home}", __name__), name)
