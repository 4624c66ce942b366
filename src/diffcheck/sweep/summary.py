"""The sweep summary (``summary.json``, schema version 3): one row per check, per-group totals.

Rows are built from each check's report file, the one piece of evidence, plus how its
worker ended; the summary adds nothing the reports do not say except worker exits, wall
times and the candidate adapter's known divergences. Groups are per backend pair and op:
counts of passed / failed / known / not_run and the worst NMSE measured against its own
tolerance (``ratio = nmse / tolerance``; a check passes only below 1). A row keeps its
report's status; its ``outcome`` is ``known`` when it failed with a known divergence
(:mod:`.known` decides which rows match), and ``failed`` when it passed with both sides'
arrays from one library (the report's ``computed_by``): a pair that is not independent
counts like a self-test, never as a pass. The JSON Schema is generated into
``reports/schema/summary-v3.json``; v2 added ``not_independent`` to each row (a v1 summary
reads as v2 with it null, :func:`upgrade_v1`), v3 the precision floor of each row
(``floor``: null in a v1 or v2 summary read as v3, :func:`upgrade_v2`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..report.identity import computed_by_of
from ..report.models import JsonFloat, ReportDocument, Status, Version3
from .isolate import WorkerOutcome
from .plan import PlannedCheck

__all__ = [
    "RESUMED",
    "RESUMED_RERUN",
    "SUMMARY_SCHEMA_VERSION",
    "Counts",
    "FloorNote",
    "GroupSummary",
    "KnownDivergenceNote",
    "LeftOutPair",
    "Outcome",
    "SegmentNmse",
    "SummaryRow",
    "SweepSummary",
    "build_row",
    "counts",
    "group_rows",
    "judge",
    "not_independent",
    "upgrade_v1",
    "upgrade_v2",
]

SUMMARY_SCHEMA_VERSION: Literal[3] = 3

#: How a reused report's row names its worker: reused as stored (its candidate's output is
#: the report's word), or reused after its candidate was re-run and reproduced it.
RESUMED = "not run: resumed"
RESUMED_RERUN = "not run: resumed, its candidate re-run reproduced it"

#: How a check counts: its status, except that a failure with a known divergence is "known"
#: and a pass with both sides from one library is "failed".
Outcome = Literal["passed", "failed", "known", "not_run"]


class _Strict(BaseModel):
    # Read back strictly (sweep.audit): floats as written, "NaN"/"Infinity" included
    # (JsonFloat), no other coercion, and the version exactly the integer 2 (or 1, upgraded).
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="strings")


class SegmentNmse(_Strict):
    """One judged segment (a lifecycle phase) of a check."""

    name: str = Field(description="Segment (phase) wire name.")
    status: Literal["passed", "failed"]
    nmse: JsonFloat | None = Field(description="The segment's NMSE, when it was measured.")


class FloorNote(_Strict):
    """The check's precision floor, from its report's ``result.floor``."""

    floor_nmse: JsonFloat = Field(description="What an honest candidate at the precision errs by.")
    derived_tolerance: JsonFloat = Field(description="The floor's multiple times the floor.")
    candidate_nmse: JsonFloat = Field(description="The candidate's NMSE against the truth.")
    ratio: JsonFloat = Field(description="candidate_nmse / floor_nmse.")
    status: Literal["passed", "failed"] = Field(description="The floor's own verdict.")
    match: str | None = Field(description="The twin a failure matches; null when none.")
    models: list[str] = Field(
        description="The twins whose output the candidate's is within the floor of."
    )


class KnownDivergenceNote(_Strict):
    """A known divergence of the candidate, as its adapter declares it."""

    reason: str = Field(description="What diverges and why.")
    upstream: str = Field(description="Where it is tracked upstream: a URL or an issue.")
    bound: str = Field(
        description=(
            "The largest NMSE it excuses and where that figure came from; a failure above "
            "it, or of another kind, is never known."
        )
    )


class SummaryRow(_Strict):
    """One check: what ran, its verdict, and where the evidence is."""

    id: str = Field(description="The check id; its report is <id>.json in the sweep directory.")
    reference: str
    candidate: str
    required: bool = Field(description="Whether the pair is required (not_run fails the sweep).")
    op: str = Field(description="The op's CLI token.")
    shape: str = Field(description="Compact shape label (64x33x35, 3x33-eps1e-05).")
    params: dict[str, bool | int | float | str] = Field(
        description="The op's parameters, all spelled out."
    )
    precision: str
    seed: int
    status: Status = Field(description="The report's status.")
    reason: str | None = Field(description="The report's reason; null only when passed.")
    not_independent: str | None = Field(
        description=(
            "Why the pair is not independent, when both sides' arrays came from one library "
            "(the report's computed_by); null otherwise, and for a report that does not "
            "record it (schema v1, v2). A passed check with it counts as failed: like a "
            "self-test, it is never a pass for the backend."
        )
    )
    nmse: JsonFloat | None = Field(description="Aggregate NMSE, when the comparator measured one.")
    tolerance: JsonFloat = Field(description="The NMSE tolerance (max_nmse) of the check.")
    ratio: JsonFloat | None = Field(description="nmse / tolerance; below 1 passes.")
    segments: list[SegmentNmse] = Field(description="Per-segment NMSE (lifecycle phases).")
    report: str = Field(description="Report path relative to the sweep directory.")
    elapsed_ms: JsonFloat | None = Field(description="The report's execution_elapsed_ms.")
    worker_wall_s: JsonFloat | None = Field(
        description="Worker process wall time (spawn to exit); null when no worker ran."
    )
    worker: str = Field(description="How the worker ended (exit 0, killed by signal ...).")
    parent_action: str | None = Field(
        description="What the sweep parent wrote into the report, if the worker did not."
    )
    resumed: bool = Field(description="True when an existing complete report was reused.")
    floor: FloorNote | None = Field(
        default=None,
        description="The precision floor (null when the report recorded none: not compared, "
        "or a report of schema v1-v3).",
    )
    known_divergence: KnownDivergenceNote | None = Field(
        description=(
            "The candidate adapter's known divergence this check matches. On a failed row "
            "(always a measured one: a failure with no metrics is never excused) the check "
            "counts as known; on a passed row the divergence was not seen. Null otherwise."
        ),
    )

    @property
    def outcome(self) -> Outcome:
        """The status, ``known`` for a failure with a known divergence, and ``failed`` for a
        pass with both sides from one library."""
        if self.status == "failed" and self.known_divergence is not None:
            return "known"
        if self.passed_not_independent:
            return "failed"
        return self.status

    @property
    def passed_not_independent(self) -> bool:
        """Whether the report says passed but both sides were one library (never a pass)."""
        return self.status == "passed" and self.not_independent is not None

    @property
    def why(self) -> str | None:
        """Why the check did not pass, in one line (None for a pass)."""
        if self.passed_not_independent:
            return self.not_independent
        return self.reason

    @property
    def divergence_not_seen(self) -> bool:
        """Whether the check passed although it matches a known divergence."""
        return self.outcome == "passed" and self.known_divergence is not None


_FAILED = (
    "Failed checks with no known divergence, and passed checks whose two sides were one "
    "library (not independent)."
)


class GroupSummary(_Strict):
    """Totals of one backend pair and op."""

    reference: str
    candidate: str
    required: bool
    op: str
    passed: int = Field(ge=0)
    failed: int = Field(ge=0, description=_FAILED)
    known: int = Field(ge=0, description="Failed checks with a known divergence.")
    not_run: int = Field(ge=0)
    worst_nmse: JsonFloat | None = Field(description="NMSE of the check with the largest ratio.")
    worst_tolerance: JsonFloat | None = Field(description="That check's tolerance.")
    worst_ratio: JsonFloat | None = Field(description="The largest nmse / tolerance in the group.")
    worst_check: str | None = Field(description="Id of that check.")


class LeftOutPair(_Strict):
    """A pair left out by --only-available, and why."""

    reference: str
    candidate: str
    reason: str


class Counts(_Strict):
    """Checks by outcome: a failure with a known divergence of its adapter counts as known."""

    total: int = Field(ge=0)
    passed: int = Field(ge=0)
    failed: int = Field(ge=0, description=_FAILED)
    known: int = Field(ge=0, description="Failed checks with a known divergence.")
    not_run: int = Field(ge=0)


class SweepSummary(_Strict):
    """A sweep's machine-readable summary, schema version 3."""

    schema_version: Version3 = SUMMARY_SCHEMA_VERSION
    matrix: str = Field(description="The matrix file as given on the command line.")
    matrix_sha256: str = Field(description="SHA-256 of the matrix file's bytes.")
    description: str = Field(description="The matrix's description.")
    diffcheck_version: str
    executor: str = Field(description="Where the workers ran (local, N jobs / dask at ADDR).")
    timeout_s: JsonFloat = Field(description="Per-check worker timeout.")
    started_at: str
    finished_at: str
    elapsed_s: JsonFloat = Field(description="Wall time of the whole sweep.")
    counts: Counts
    exit_status: int = Field(description="The exit status of the sweep command.")
    exit_reasons: list[str] = Field(description="Why the exit status is nonzero (empty if 0).")
    strict_known: bool = Field(
        description="Whether known divergences failed the sweep too (--strict-known)."
    )
    unexpected_passes: list[str] = Field(
        description=(
            "Ids of checks that passed although they match a known divergence of their "
            "candidate (the divergence was not seen); reported, never a failure."
        )
    )
    left_out: list[LeftOutPair] = Field(description="Pairs left out by --only-available.")
    groups: list[GroupSummary]
    checks: list[SummaryRow]

    def to_json(self) -> bytes:
        """Pretty JSON with a trailing newline."""
        return self.model_dump_json(indent=2).encode() + b"\n"


def _ratio(nmse: float | None, tolerance: float) -> float | None:
    if nmse is None or not tolerance > 0.0:
        return None
    return nmse / tolerance if math.isfinite(nmse) else math.inf


def not_independent(document: ReportDocument) -> str | None:
    """Why ``document``'s pair is not independent (both sides' arrays from one library, as
    its ``computed_by`` records), or None. A declared self-test says so in its coverage and
    is not a sweep's check; a report without ``computed_by`` (v1, v2) says nothing."""
    computed_by = computed_by_of(document)
    if computed_by is None or not computed_by.one_library or computed_by.candidate is None:
        return None
    module = computed_by.candidate.module
    return (
        f"NOT INDEPENDENT: both sides returned {module} arrays (the candidate computed with "
        "the reference's own library); like a self-test, never a pass for the backend"
    )


def _with_rows(data: dict[str, object], **fields: object) -> dict[str, object]:
    rows = data.get("checks")
    upgraded = dict(data, schema_version=SUMMARY_SCHEMA_VERSION)
    if isinstance(rows, list):
        upgraded["checks"] = [{**row, **fields} if isinstance(row, dict) else row for row in rows]
    return upgraded


def upgrade_v1(data: dict[str, object]) -> dict[str, object]:
    """A summary v1 JSON object as the current version: each row's ``not_independent`` and
    ``floor`` null (v1 never recorded them; an audit re-derives them from the reports and
    says where the summary differs)."""
    return _with_rows(data, not_independent=None, floor=None)


def upgrade_v2(data: dict[str, object]) -> dict[str, object]:
    """A summary v2 JSON object as the current version: each row's ``floor`` null."""
    return _with_rows(data, floor=None)


def floor_note(document: ReportDocument) -> FloorNote | None:
    """The row's floor note from the report's ``result.floor`` (None where it has none)."""
    record = getattr(document.result, "floor", None)
    if record is None:
        return None
    ratio = record.candidate_nmse / record.floor_nmse if record.floor_nmse > 0 else math.inf
    return FloorNote(
        floor_nmse=record.floor_nmse,
        derived_tolerance=record.derived_tolerance,
        candidate_nmse=record.candidate_nmse,
        ratio=ratio,
        status="passed" if record.status == "passed" else "failed",
        match=record.match,
        models=list(record.models),
    )


def build_row(
    planned: PlannedCheck, document: ReportDocument, outcome: WorkerOutcome
) -> SummaryRow:
    """The summary row of one check from its (complete) report and its worker's outcome."""
    result = document.result
    assert result is not None, "rows are built from complete reports only"
    nmse = result.metrics.nmse if result.metrics is not None else None
    segments = [
        SegmentNmse(
            name=s.name, status=s.status, nmse=s.metrics.nmse if s.metrics is not None else None
        )
        for s in document.segments or []
    ]
    tolerance = planned.check.max_nmse
    return SummaryRow(
        id=planned.id,
        reference=planned.pair.reference,
        candidate=planned.pair.candidate,
        required=planned.pair.required,
        op=planned.op,
        shape=planned.shape,
        params=planned.params,
        precision=planned.check.precision,
        seed=planned.check.seed,
        status=result.status,
        reason=result.reason,
        not_independent=not_independent(document),
        nmse=nmse,
        tolerance=tolerance,
        ratio=_ratio(nmse, tolerance),
        segments=segments,
        report=planned.report.as_posix(),
        elapsed_ms=document.execution_elapsed_ms,
        worker_wall_s=outcome.wall_s,
        worker=outcome.exit,
        parent_action=outcome.action,
        resumed=outcome.reused,
        floor=floor_note(document),
        known_divergence=None,  # :func:`.known.classify` sets it
    )


def group_rows(rows: Sequence[SummaryRow]) -> list[GroupSummary]:
    """Per (pair, op) totals, in the order the groups first appear."""
    groups: dict[tuple[str, str, str], list[SummaryRow]] = {}
    for row in rows:
        groups.setdefault((row.reference, row.candidate, row.op), []).append(row)
    summaries = []
    for (reference, candidate, op), members in groups.items():
        measured = [r for r in members if r.ratio is not None]
        worst = max(measured, key=lambda r: r.ratio or 0.0, default=None)
        summaries.append(
            GroupSummary(
                reference=reference,
                candidate=candidate,
                required=members[0].required,
                op=op,
                passed=sum(r.outcome == "passed" for r in members),
                failed=sum(r.outcome == "failed" for r in members),
                known=sum(r.outcome == "known" for r in members),
                not_run=sum(r.outcome == "not_run" for r in members),
                worst_nmse=worst.nmse if worst else None,
                worst_tolerance=worst.tolerance if worst else None,
                worst_ratio=worst.ratio if worst else None,
                worst_check=worst.id if worst else None,
            )
        )
    return summaries


def counts(rows: Sequence[SummaryRow]) -> Counts:
    """Checks by outcome."""
    return Counts(
        total=len(rows),
        passed=sum(r.outcome == "passed" for r in rows),
        failed=sum(r.outcome == "failed" for r in rows),
        known=sum(r.outcome == "known" for r in rows),
        not_run=sum(r.outcome == "not_run" for r in rows),
    )


def _checks(count: int) -> str:
    return f"{count} check{'s' if count != 1 else ''}"


def judge(rows: Sequence[SummaryRow], *, strict_known: bool = False) -> tuple[int, list[str]]:
    """The sweep's exit status and the reasons for a nonzero one.

    Nonzero when any check failed with no known divergence (with ``strict_known``, with one
    too), when a check passed with both sides from one library (not independent), when a
    required pair has a not_run check, or when no check executed at all (every check
    not_run, or none left to run). A known divergence not seen never fails a sweep.
    """
    reasons = []
    failed = sum(r.outcome == "failed" and not r.passed_not_independent for r in rows)
    if failed:
        reasons.append(f"{_checks(failed)} failed")
    one_library = sum(r.passed_not_independent for r in rows)
    if one_library:
        reasons.append(
            f"{_checks(one_library)} passed with both sides from one library (NOT "
            "INDEPENDENT: never a pass for the backend)"
        )
    known = sum(r.outcome == "known" for r in rows)
    if known and strict_known:
        reasons.append(f"{_checks(known)} failed with a known divergence (--strict-known)")
    required_not_run: dict[str, int] = {}
    for row in rows:
        if row.required and row.status == "not_run":
            label = f"{row.reference} -> {row.candidate}"
            required_not_run[label] = required_not_run.get(label, 0) + 1
    for label, count in required_not_run.items():
        reasons.append(
            f"required pair {label} has {count} not_run check{'s' if count != 1 else ''}"
        )
    if not any(r.status != "not_run" for r in rows):
        reasons.append("no check executed (every check is not_run)" if rows else "no check to run")
    return (1 if reasons else 0), reasons
