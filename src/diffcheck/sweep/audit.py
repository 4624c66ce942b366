"""``diffcheck replay SWEEP_DIR``: re-derive a sweep's summary from its reports and compare.

``summary.json`` and ``junit.xml`` are views of the reports; a view edited by hand (a
failure turned green, a count changed, an exit status set to 0) must not pass for evidence.
The audit plans the matrix again (it must be the file the summary names, with the same
SHA-256), reads every planned check's report (bounded, never through a symbolic link),
requires that it is a report of that check and that it replays (:mod:`.reuse`), and builds
every row, count, group, exit status and JUnit verdict again from them. Each place where the
stored summary or ``junit.xml`` says something else is one line.

Derived: the description, every row's ids, pair, op, shape, params, precision, seed, status,
reason, whether the pair was one library (``not_independent``), NMSE, tolerance, ratio, segments, elapsed time, known divergence (from the candidate's declared
divergences), the counts, groups, exit status and reasons, unexpected passes, and the
verdict of each JUnit test case. Claimed (how the workers ended, wall times, timestamps,
the executor, the pairs left out by ``--only-available``): used as stored, never evidence.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..adapters import KnownDivergence
from ..errors import ReportError
from ..files import MAX_MATRIX_BYTES, read_regular, stored_path
from ..report.read import load_json
from ..text import one_line
from .isolate import WorkerOutcome
from .junit import junit_xml
from .known import classify
from .matrix import load_matrix
from .plan import PlannedCheck, SweepPlan, plan_matrix
from .records import read_document
from .reuse import plan_mismatch, replay_problem
from .summary import (
    SUMMARY_SCHEMA_VERSION,
    SummaryRow,
    SweepSummary,
    build_row,
    counts,
    group_rows,
    judge,
    upgrade_v1,
    upgrade_v2,
)

__all__ = ["SweepAudit", "audit_sweep"]

#: summary.json is rows of a bounded plan: far below this even at the plan's check limit.
MAX_SUMMARY_BYTES = 256 * 1024 * 1024


@dataclass
class SweepAudit:
    """What re-deriving a sweep directory found."""

    directory: Path
    #: Each place where the stored views disagree with the reports (one line each).
    disagreements: list[str] = field(default_factory=list)
    #: The re-derived summary, when the plan and every report could be read.
    derived: SweepSummary | None = None

    @property
    def agrees(self) -> bool:
        return not self.disagreements


def _stored_summary(directory: Path) -> tuple[SweepSummary, int]:
    """The stored ``summary.json``, read as hostile input: one ReportError line, or the model
    (read as the current version) and the version it was written with.

    As strict as reports: at most :data:`MAX_SUMMARY_BYTES` (refused from the file's size),
    a bounded decode (keys per object and text per value, :func:`~..report.read.load_json`),
    ``schema_version`` exactly the integer 3 (or 1 or 2, read as v3 with what they never
    recorded null: :func:`~.summary.upgrade_v1`, :func:`~.summary.upgrade_v2`), no coercion
    (``"4"`` is no int, ``true`` no version, ``2.0`` no count) and no key the schema does
    not name.
    """
    path = directory / "summary.json"
    source = one_line(str(path))
    try:
        data = read_regular(path, limit=MAX_SUMMARY_BYTES, follow_symlinks=False)
    except FileNotFoundError:
        raise ReportError(f"sweep {one_line(str(directory))}: no summary.json") from None
    try:
        parsed = load_json(data, source)
    except ReportError as error:  # its line speaks of a report: say what this file is
        text = str(error).removeprefix(f"report {source} ")
        raise ReportError(f"{source}: not a sweep summary ({text})") from None
    version = parsed.get("schema_version") if isinstance(parsed, dict) else None
    if not isinstance(parsed, dict) or type(version) is not int or version not in (1, 2, 3):
        found = "no JSON object" if not isinstance(parsed, dict) else f"schema_version {version!r}"
        raise ReportError(
            f"{source}: not a sweep summary ({found}; this diffcheck reads summary "
            f"schema_version 1 to {SUMMARY_SCHEMA_VERSION}, an integer)"
        )
    if version == 1:  # v1 never recorded not_independent: re-deriving it shows where it matters
        parsed = upgrade_v1(parsed)
    elif version == 2:  # nor did v2 record the floor
        parsed = upgrade_v2(parsed)
    try:
        return SweepSummary.model_validate(parsed, strict=True), version
    except MemoryError:
        raise ReportError(
            f"{source}: ran out of memory validating a {len(data)}-byte sweep summary"
        ) from None
    except RecursionError:
        raise ReportError(f"{source}: nested too deeply to be a sweep summary") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        raise ReportError(
            f"{source}: not a sweep summary ({one_line(where)[:200]}: {one_line(first['msg'])})"
        ) from None


def _plan(summary: SweepSummary, directory: Path) -> SweepPlan:
    """The checks the sweep planned: its matrix, planned again, less the pairs left out."""
    matrix = stored_path(summary.matrix, f"sweep {one_line(str(directory))}: the matrix")
    if not matrix.is_absolute() and not matrix.exists():
        matrix = directory / matrix  # a sweep directory copied with its matrix beside it
    try:
        data = read_regular(matrix, limit=MAX_MATRIX_BYTES)
    except FileNotFoundError:
        raise ReportError(
            f"sweep {directory}: its matrix {summary.matrix} is not here; the summary cannot "
            "be re-derived without it (run replay where the matrix is)"
        ) from None
    if hashlib.sha256(data).hexdigest() != summary.matrix_sha256:
        raise ReportError(
            f"sweep {directory}: the matrix {matrix} is not the one swept (its SHA-256 "
            "differs from the summary's); the summary cannot be re-derived from it"
        )
    plan = plan_matrix(load_matrix(matrix), source=f"matrix {matrix}")
    left = {(pair.reference, pair.candidate) for pair in summary.left_out}
    return plan.without_pairs([p for p in plan.pairs if (p.reference, p.candidate) in left])


def _row_outcome(stored: SummaryRow | None, planned: PlannedCheck, report: Path) -> WorkerOutcome:
    """How the worker ended, as claimed by the stored row (never derivable from a report)."""
    if stored is None:
        return WorkerOutcome(planned.id, str(report), "unknown", None)
    return WorkerOutcome(
        planned.id,
        str(report),
        stored.worker,
        stored.worker_wall_s,
        action=stored.parent_action,
        reused=stored.resumed,
    )


def _differences(label: str, stored: Any, derived: Any) -> Iterator[str]:
    """One line per differing field of two JSON-shaped values (dicts compared key by key)."""
    if isinstance(stored, dict) and isinstance(derived, dict):
        for key in dict.fromkeys([*stored, *derived]):
            yield from _differences(f"{label}.{key}", stored.get(key), derived.get(key))
    elif stored != derived:
        yield f"{label}: stored {stored!r}, derived {derived!r}"


def _junit_verdicts(data: bytes) -> dict[str, str]:
    """Each test case's verdict in a JUnit document: passed, failure, skipped: MESSAGE."""
    verdicts = {}
    for case in ET.fromstring(data).iter("testcase"):
        verdict = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                verdict = f"{child.tag}: {child.get('message', '')}"
                break
        verdicts[case.get("name", "")] = verdict
    return verdicts


def _audit_junit(directory: Path, derived: SweepSummary) -> list[str]:
    path = directory / "junit.xml"
    try:
        stored_bytes = read_regular(path, limit=MAX_SUMMARY_BYTES, follow_symlinks=False)
        stored = _junit_verdicts(stored_bytes)
    except FileNotFoundError:
        return [f"{path}: missing"]
    except (ReportError, ET.ParseError) as error:
        return [f"{path}: unreadable ({str(error).splitlines()[0]})"]
    expected = _junit_verdicts(junit_xml(derived))
    lines = []
    for name in dict.fromkeys([*expected, *stored]):
        if stored.get(name) != expected.get(name):
            lines.append(
                f"junit.xml: test case {name}: stored {stored.get(name, 'absent')}, "
                f"derived {expected.get(name, 'absent')}"
            )
    root = ET.fromstring(stored_bytes)
    for attribute in ("tests", "failures", "errors", "skipped"):
        want = ET.fromstring(junit_xml(derived)).get(attribute)
        if root.get(attribute) != want:
            lines.append(f"junit.xml: {attribute}: stored {root.get(attribute)}, derived {want}")
    return lines


def audit_sweep(directory: Path) -> SweepAudit:
    """Re-derive the summary of the sweep in ``directory`` and list every disagreement.

    Raises
    ------
    ReportError
        One line, when there is no readable summary or the matrix is not the one swept.
    ConfigError
        When the matrix no longer plans (a removed op, a backend name no longer valid).
    """
    audit = SweepAudit(directory)
    stored, version = _stored_summary(directory)
    plan = _plan(stored, directory)
    planned_checks = list(plan.checks)
    divergences_for = planned_divergences_for(planned_checks)
    stored_rows = {row.id: row for row in stored.checks}
    rows: list[SummaryRow] = []
    for planned in planned_checks:
        report = directory / planned.report
        try:
            document = read_document(report)
        except FileNotFoundError:
            audit.disagreements.append(f"{planned.report}: the planned check has no report")
            continue
        except ReportError as error:
            audit.disagreements.append(str(error).splitlines()[0])
            continue
        problem = None
        if not document.completed or document.result is None:
            problem = "it is incomplete"
        else:
            mismatch = plan_mismatch(planned.check, document)
            problem = (
                f"not a report of the planned check: {mismatch}"
                if mismatch
                else replay_problem(document)
            )
        if problem is not None:
            audit.disagreements.append(f"{planned.report}: {problem}")
            continue
        outcome = _row_outcome(stored_rows.get(planned.id), planned, report)
        rows.append(classify(build_row(planned, document, outcome), divergences_for(planned)))
    for extra in stored_rows.keys() - {planned.id for planned in planned_checks}:
        audit.disagreements.append(f"summary.json: row {extra} is not a check of the plan")
    if len(stored_rows) != len(stored.checks):
        audit.disagreements.append("summary.json: a check has more than one row")
    if audit.disagreements:
        return audit  # the rows cannot be re-derived; what follows would only repeat it
    status, reasons = judge(rows, strict_known=stored.strict_known)
    derived = stored.model_copy(
        update={
            "description": plan.description,
            "counts": counts(rows),
            "exit_status": status,
            "exit_reasons": reasons,
            "unexpected_passes": [row.id for row in rows if row.divergence_not_seen],
            "groups": group_rows(rows),
            "checks": rows,
        }
    )
    audit.derived = derived
    stored_json = stored.model_dump(mode="json")
    derived_json = derived.model_dump(mode="json")
    for key in (
        "description",
        "counts",
        "exit_status",
        "exit_reasons",
        "unexpected_passes",
        "groups",
    ):
        audit.disagreements += _differences(
            f"summary.json: {key}", stored_json[key], derived_json[key]
        )
    if [row.id for row in stored.checks] != [row.id for row in rows]:
        audit.disagreements.append("summary.json: the rows are not the plan's checks in order")
    for new in derived_json["checks"]:
        old = next((row for row in stored_json["checks"] if row["id"] == new["id"]), None)
        if old is None:
            audit.disagreements.append(f"summary.json: no row for check {new['id']}")
            continue
        if version < 3:  # a summary before v3 never recorded the floor of a row
            new = {**new, "floor": old["floor"]}
        audit.disagreements += _differences(f"summary.json: {new['id']}", old, new)
    audit.disagreements += _audit_junit(directory, derived)
    return audit


def planned_divergences_for(
    planned_checks: list[PlannedCheck],
) -> Callable[[PlannedCheck], Sequence[KnownDivergence]]:
    """The known divergences of each planned check's candidate, as its adapter declares them."""
    declared: dict[str, Sequence[KnownDivergence]] = {}
    for planned in planned_checks:
        declared.setdefault(planned.pair.candidate, planned.pair.known_divergences)
    return lambda planned: declared.get(planned.pair.candidate, ())
