"""Running a planned sweep: prepare the directory, run isolated checks, write the outputs.

Order of events:

1. every report path is checked before anything runs: without ``resume`` an existing file
   is an error (reports are never overwritten); with it, a complete report whose config
   matches the plan is reused, and anything else is moved aside (never deleted);
2. checks whose candidate has no adapter here get a ``not_run`` report from the parent
   (no worker could run them);
3. the executor runs the rest, each in its own worker process, and settles each report;
4. rows are read back from the report files and matched against the candidates' known
   divergences (:mod:`.known`), and ``summary.json``, ``junit.xml`` and ``index.html`` are
   written (these are derived views, replaced on every run).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__
from ..errors import ConfigError, ReportError
from .executors import Executor
from .html import render_html
from .isolate import WorkerOutcome
from .junit import junit_xml
from .known import DivergencesFor, classify, planned_divergences
from .plan import Pair, PlannedCheck, SweepPlan
from .records import ReportState, read_state, set_aside, write_new_final
from .spec import WorkerSpec
from .summary import (
    LeftOutPair,
    SummaryRow,
    SweepSummary,
    build_row,
    counts,
    group_rows,
    judge,
)

__all__ = ["SweepOutputs", "run_sweep"]


@dataclass(frozen=True)
class SweepOutputs:
    """Where a sweep wrote its views (the reports are under ``directory`` too)."""

    directory: Path
    summary: Path
    junit: Path
    html: Path

    def listed(self) -> list[tuple[str, Path]]:
        return [
            ("reports", self.directory),
            ("summary", self.summary),
            ("junit", self.junit),
            ("html", self.html),
        ]


def _write_view(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise ReportError(f"write {path}: {error.strerror}") from None


def _reusable(planned: PlannedCheck, path: Path, resume: bool) -> bool:
    """Whether ``path`` holds a complete report to reuse; moves anything else aside."""
    state, document = read_state(path)
    if state is ReportState.MISSING:
        return False
    if not resume:
        raise ConfigError(
            f"{path} already exists; pass --resume to reuse complete reports, or choose a new --out"
        )
    if state is ReportState.COMPLETE:
        assert document is not None
        if document.config.model_dump() == planned.check.record().model_dump():
            return True
        set_aside(path, label="superseded")  # the matrix changed this check (e.g. its tolerance)
        return False
    set_aside(path)
    return False


def _unresolved(planned: PlannedCheck, path: Path) -> WorkerOutcome:
    assert planned.pair.unresolved is not None
    write_new_final(path, planned.check, "not_run", planned.pair.unresolved)
    return WorkerOutcome(planned.id, str(path), "not started: no adapter", None)


def run_sweep(
    plan: SweepPlan,
    *,
    matrix: Path,
    out: Path,
    executor: Executor,
    timeout_s: float,
    resume: bool = False,
    left_out: Sequence[tuple[Pair, str]] = (),
    on_row: Callable[[SummaryRow], None] | None = None,
    strict_known: bool = False,
    divergences_for: DivergencesFor | None = None,
) -> tuple[SweepSummary, SweepOutputs]:
    """Run every check of ``plan`` in isolation and write the sweep's outputs under ``out``.

    Parameters
    ----------
    plan
        The validated checks.
    matrix
        The matrix file (its path and hash go into the summary).
    out
        The sweep directory; reports go to ``out/<check id>.json``.
    executor
        Where the workers run.
    timeout_s
        Per-check worker timeout.
    resume
        Reuse complete reports already in ``out``; rerun the rest (moving old files aside).
    left_out
        Pairs removed from the plan by ``--only-available``, with the reason.
    on_row
        Called with each check's row as it finishes (the progress bar).
    strict_known
        Fail the sweep on failures with a known divergence too (``--strict-known``).
    divergences_for
        The known divergences of a candidate backend name; by default what each candidate's
        adapter declared when the plan resolved it.

    Returns
    -------
    tuple[SweepSummary, SweepOutputs]
        The summary (also written to ``summary.json``) and the output paths.

    Raises
    ------
    ConfigError
        When ``out`` already holds a report of the plan and ``resume`` is off.
    ReportError
        When a report or an output cannot be written.
    """
    started_at = datetime.now(UTC).isoformat()
    started = time.perf_counter()
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    by_id = {planned.id: planned for planned in plan.checks}
    divergences_for = divergences_for or planned_divergences(plan)
    reused: list[PlannedCheck] = []
    to_run: list[PlannedCheck] = []
    for planned in plan.checks:
        path = out / planned.report
        path.parent.mkdir(parents=True, exist_ok=True)
        (reused if _reusable(planned, path, resume) else to_run).append(planned)

    rows: dict[str, SummaryRow] = {}

    def record(outcome: WorkerOutcome) -> None:
        planned = by_id[outcome.id]
        state, document = read_state(Path(outcome.report))
        if state is not ReportState.COMPLETE or document is None:
            raise ReportError(
                f"report {outcome.report} is {state.value} after its worker was settled"
            )
        row = classify(
            build_row(planned, document, outcome), divergences_for(planned.pair.candidate)
        )
        rows[planned.id] = row
        if on_row is not None:
            on_row(row)

    for planned in reused:
        record(
            WorkerOutcome(
                planned.id, str(out / planned.report), "not run: resumed", None, reused=True
            )
        )
    isolated = []
    for planned in to_run:
        if planned.pair.unresolved is not None:
            record(_unresolved(planned, out / planned.report))
        else:
            isolated.append(WorkerSpec.of(planned.id, planned.check, str(out / planned.report)))
    with contextlib.closing(executor.run(isolated, timeout_s)) as outcomes:
        for outcome in outcomes:
            record(outcome)

    ordered = [rows[planned.id] for planned in plan.checks]
    status, reasons = judge(ordered, strict_known=strict_known)
    summary = SweepSummary(
        matrix=str(matrix),
        matrix_sha256=hashlib.sha256(matrix.read_bytes()).hexdigest(),
        description=plan.description,
        diffcheck_version=__version__,
        executor=executor.describe(),
        timeout_s=timeout_s,
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(),
        elapsed_s=time.perf_counter() - started,
        counts=counts(ordered),
        exit_status=status,
        exit_reasons=reasons,
        strict_known=strict_known,
        unexpected_passes=[row.id for row in ordered if row.divergence_not_seen],
        left_out=[
            LeftOutPair(reference=pair.reference, candidate=pair.candidate, reason=reason)
            for pair, reason in left_out
        ],
        groups=group_rows(ordered),
        checks=ordered,
    )
    outputs = SweepOutputs(out, out / "summary.json", out / "junit.xml", out / "index.html")
    _write_view(outputs.summary, summary.to_json())
    _write_view(outputs.junit, junit_xml(summary))
    _write_view(outputs.html, render_html(summary).encode())
    return summary, outputs
