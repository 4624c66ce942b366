"""Running a planned sweep: prepare the directory, run isolated checks, write the outputs.

Order of events:

0. ``out`` is checked, created and locked for this sweep alone (:mod:`.outdir`), and the
   views' paths must hold nothing but files;
1. every report path is checked before anything runs: without ``resume`` an existing file
   is an error (reports are never overwritten); with it, a complete report is reused only
   when :func:`.reuse.reuse_problem` finds nothing against it: not a ``not_run``, the
   planned check in every derived and bound field (pair, reference, op, params, precision,
   seed, tolerance, self-test marker), a replay that agrees with every stored field, and
   a pass only from a report that records two libraries (``computed_by``). Anything else
   (incomplete, unreadable, not_run, another check, a replay that disagrees, a pass with
   one library on both sides or none recorded) is moved aside, never deleted, and the
   check runs again. Something that is not a regular file at a report path (a symbolic link, a FIFO, a device, a
   directory) is an error: it is never followed, read or moved;
2. checks whose candidate has no adapter here get a ``not_run`` report from the parent
   (no worker could run them);
3. the executor runs the rest, each in its own worker process, and settles each report;
4. rows are read back from the report files and matched against the candidates' known
   divergences (:mod:`.known`), and ``junit.xml``, ``index.html`` and, last,
   ``summary.json`` are written (derived views, replaced on every run). A worker whose own
   report write failed (:class:`.records.OwnIOError`) stops the sweep here instead, its
   check left incomplete for ``--resume``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .._distribution import __version__
from ..errors import ConfigError, ReportError
from ..files import MAX_MATRIX_BYTES, read_regular, remove_stale_temporaries, write_replacing
from .executors import Executor
from .html import render_html
from .isolate import WorkerOutcome
from .junit import junit_xml
from .known import DivergencesFor, classify, planned_divergences
from .outdir import sweep_directory
from .plan import Pair, PlannedCheck, SweepPlan
from .records import (
    OwnIOError,
    ReportState,
    read_document,
    read_state,
    set_aside,
    set_aside_latest,
    write_new_final,
)
from .reuse import reuse_problem
from .spec import WorkerSpec
from .summary import (
    RESUMED,
    RESUMED_RERUN,
    LeftOutPair,
    SummaryRow,
    SweepSummary,
    build_row,
    counts,
    group_rows,
    judge,
)
from .where import failure_wheres

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


def _make_directories(out: Path, directory: Path) -> None:
    """Create ``directory`` under ``out``, refusing a symbolic link on the way (never followed)."""
    current = out
    for part in directory.relative_to(out).parts:
        current = current / part
        if current.is_symlink():
            raise ConfigError(
                f"{current} is a symbolic link; report directories are never followed: "
                "remove it, or choose a new --out"
            )
        try:
            current.mkdir(exist_ok=True)
        except FileExistsError:
            raise ConfigError(
                f"{current} is not a directory, where the sweep keeps reports; it is never "
                "replaced: remove it, or choose a new --out"
            ) from None
        except OSError as error:
            raise ConfigError(
                f"cannot create the report directory {current}: {error.strerror}; "
                "choose a writable --out"
            ) from None


def _entry_kind(path: Path) -> str | None:
    """None for a regular file or nothing; else what is there instead (never followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    return "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"


def _reusable(
    planned: PlannedCheck,
    path: Path,
    resume: bool,
    note: Callable[[str], None] | None,
    rerun: bool = False,
) -> bool:
    """Whether ``path`` holds a complete report that replays; moves anything else aside."""
    kind = _entry_kind(path)
    if kind is not None:
        raise ConfigError(
            f"{path} is {kind}, not a report; it is never followed or replaced: remove it, "
            "or choose a new --out"
        )
    state, document = read_state(path)
    if state is ReportState.MISSING:
        return False
    if not resume:
        raise ConfigError(
            f"{path} already exists; pass --resume to reuse complete reports, or choose a new --out"
        )
    if state is ReportState.COMPLETE:
        assert document is not None
        if document.config.model_dump() != planned.check.record().model_dump():
            set_aside(path, label="superseded")  # the matrix changed this check (its tolerance)
            return False
        problem = reuse_problem(planned.check, document, rerun=rerun)
        if problem is None:
            return True
        if document.result is not None and document.result.status == "not_run":
            # Never evidence, and expected on every resume of a pair that is not here: kept
            # aside quietly, and the check runs again (its backend may be here now). Only the
            # latest is kept: one per resume would pile up, and none of them is evidence.
            set_aside_latest(path, label="not_run")
            return False
        # A stored verdict is evidence only when it is the planned check and its bits
        # re-derive it; this one is kept aside (never overwritten) and the check runs again.
        aside = set_aside(path, label="unverified")
        if note is not None:
            note(f"resume: {path}: {problem}; moved to {aside.name}, rerunning")
        return False
    aside = set_aside(path)
    if note is not None:
        why = "it is incomplete" if state is ReportState.INCOMPLETE else _unreadable(path, aside)
        note(f"resume: {path}: {why}; moved to {aside.name}, rerunning")
    return False


def _unreadable(path: Path, aside: Path) -> str:
    """Why the file now at ``aside`` is not a report (read again, bounded, for the note)."""
    try:
        read_document(aside)
    except ReportError as error:
        return str(error).replace(f"report {aside}", "it").replace(str(aside), "it")
    except FileNotFoundError:
        return "it disappeared"
    return "it could not be read"


def _matrix_bytes(matrix: Path) -> bytes:
    try:
        return read_regular(matrix, limit=MAX_MATRIX_BYTES)
    except FileNotFoundError:
        raise ReportError(f"matrix {matrix} disappeared while the sweep ran") from None


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
    on_note: Callable[[str], None] | None = None,
    rerun: bool = False,
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
        Reuse complete reports already in ``out`` whose replay agrees; rerun the rest
        (moving old files aside).
    rerun
        With ``resume``: re-run the candidate of each stored pass, which is reused only when
        its output reproduces (``--resume --rerun``); without it a reused pass is
        unverified, and its row's worker says so.
    left_out
        Pairs removed from the plan by ``--only-available``, with the reason.
    on_row
        Called with each check's row as it finishes (the progress bar).
    strict_known
        Fail the sweep on failures with a known divergence too (``--strict-known``).
    divergences_for
        The known divergences of a candidate backend name; by default what each candidate's
        adapter declared when the plan resolved it.
    on_note
        Called with a line for each report ``resume`` would not reuse because its replay
        disagrees (the CLI prints it on stderr).

    Returns
    -------
    tuple[SweepSummary, SweepOutputs]
        The summary (also written to ``summary.json``) and the output paths.

    Raises
    ------
    ConfigError
        When ``out`` cannot be a sweep directory (:mod:`.outdir`), another sweep holds it,
        a view's path holds something other than a file, or ``out`` already holds a report
        of the plan and ``resume`` is off.
    ReportError
        When a report or an output cannot be written.
    """
    with sweep_directory(out) as directory:
        return _run_locked(
            plan,
            matrix=matrix,
            out=directory,
            executor=executor,
            timeout_s=timeout_s,
            resume=resume,
            left_out=left_out,
            on_row=on_row,
            strict_known=strict_known,
            divergences_for=divergences_for,
            on_note=on_note,
            rerun=rerun,
        )


def _check_views(outputs: SweepOutputs) -> None:
    """Refuse, before anything runs, a view path that holds something other than a file."""
    for _, path in outputs.listed()[1:]:
        kind = _entry_kind(path)
        if kind is not None:
            raise ConfigError(
                f"{path} is {kind}, where the sweep writes its {path.name}; it is never "
                "followed or replaced: remove it, or choose a new --out"
            )


def _run_locked(
    plan: SweepPlan,
    *,
    matrix: Path,
    out: Path,
    executor: Executor,
    timeout_s: float,
    resume: bool,
    left_out: Sequence[tuple[Pair, str]],
    on_row: Callable[[SummaryRow], None] | None,
    strict_known: bool,
    divergences_for: DivergencesFor | None,
    on_note: Callable[[str], None] | None,
    rerun: bool = False,
) -> tuple[SweepSummary, SweepOutputs]:
    """:func:`run_sweep` in its checked, created and locked directory ``out``."""
    started_at = datetime.now(UTC).isoformat()
    started = time.perf_counter()
    outputs = SweepOutputs(out, out / "summary.json", out / "junit.xml", out / "index.html")
    _check_views(outputs)
    by_id = {planned.id: planned for planned in plan.checks}
    divergences_for = divergences_for or planned_divergences(plan)
    reused: list[PlannedCheck] = []
    to_run: list[PlannedCheck] = []
    directories: set[Path] = set()
    for planned in plan.checks:
        path = out / planned.report
        if path.parent not in directories:
            _make_directories(out, path.parent)
            remove_stale_temporaries(path.parent)  # left by writers killed mid-write
            directories.add(path.parent)
        (reused if _reusable(planned, path, resume, on_note, rerun) else to_run).append(planned)

    rows: dict[str, SummaryRow] = {}

    def record(outcome: WorkerOutcome) -> None:
        planned = by_id[outcome.id]
        if outcome.io_failure is not None:
            raise OwnIOError(
                f"could not write the report of {planned.id} ({outcome.io_failure}); the "
                "sweep stopped and the check is left incomplete: fix the cause (free disk "
                "space), then run again with --resume"
            )
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

    resumed = RESUMED_RERUN if rerun else RESUMED
    for planned in reused:
        record(WorkerOutcome(planned.id, str(out / planned.report), resumed, None, reused=True))
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
        matrix_sha256=hashlib.sha256(_matrix_bytes(matrix)).hexdigest(),
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
    # The summary goes last: it says how the sweep ended, so it is written only once the
    # other views are (a view that cannot be written leaves no summary claiming success).
    write_replacing(outputs.junit, junit_xml(summary))
    wheres = failure_wheres(outputs.directory, summary.checks)
    write_replacing(outputs.html, render_html(summary, wheres).encode())
    write_replacing(outputs.summary, summary.to_json())
    return summary, outputs
