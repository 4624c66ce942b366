"""Re-deriving a report's verdict from its config and stored bits, trusting nothing else.

Everything that follows from ``config`` is derived from it and every stored copy checked
against the derivation: the op's output shape and element count, the result's op, backend
and seed, the tolerance (bits and value), the configured precision, the lifecycle's phases
or chains with their coverage, and the segments to judge. The outputs are decoded with
their size and digest checks (:mod:`.arrays`); then the comparator, the precision binding,
the shape binding and the per-segment judging run again, as the runner ran them, and every
stored figure must agree with the recomputed one: status, reason, each segment record and
the per-phase metrics; counts, indices and flags exactly, ``max_abs`` within 8 float64
epsilons relative, the summed figures within the bound of another summation order
(:func:`.figures.sum_allowance`), and a non-finite stored float only where the derived one
is the same.

Which library computed each side (``computed_by``, v3) is bound where replay runs it itself
(the reference; the candidate under ``--rerun``), its name to the adapter of that name here
(:mod:`.candidate`); a pair of one library counts like a self-test (:mod:`.identity`).

What cannot be derived is never taken as evidence: a result without both outputs (a
candidate that raised, a backend that was not there) is reported as such by :attr:`Replay.notes`,
and a tolerance looser than the op's default for its precision is pointed out there too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._numbers import f64_bits
from ..config import Check, _check_tolerance
from ..differ import (
    Verdict,
    bind_precision,
    bind_segments,
    bind_shape,
    compare_outputs,
    reference_problem,
)
from ..errors import ConfigError, ReportError
from ..files import read_regular
from ..floor import Floor, bind_floor
from ..ops import ContextLifecycle, get_op
from .arrays import decode_output
from .bounds import claimed_fields, is_self_test, representability_problem
from .candidate import bind_rerun, candidate_identity
from .figures import (
    compare_metrics,
    compare_segments,
    compare_submission_metrics,
    same_reason,
)
from .floor_check import check_floor, compare_floor
from .identity import bind_library, computed_by_of, identity_problem, independence
from .limits import report_read_limit
from .models import CheckResult, MetricsRecord, ReportDocument
from .read import load_json, report_from
from .world import compare_reference, recompute_reference

__all__ = ["FLOOR_VERSION", "Replay", "load_document", "load_report", "rejudge", "replay"]

#: The first schema version whose reports record the precision floor (``result.floor``).
FLOOR_VERSION = 4


@dataclass
class Replay:
    """The outcome of re-checking one report."""

    document: ReportDocument
    verdict: Verdict | None
    disagreements: list[str] = field(default_factory=list)
    #: What replay could not derive, or would point out to a reader (never disagreements).
    notes: list[str] = field(default_factory=list)
    #: Whether the candidate is the reference's own backend (derived from the pair).
    self_test: bool = False
    #: What checking against the world found: the reference recomputation, a re-run.
    checked: list[str] = field(default_factory=list)
    #: (field, value) of every claimed field, which replay cannot verify.
    claims: list[tuple[str, str]] = field(default_factory=list)
    #: Whether both sides' arrays came from one library (``computed_by``, v3): counted like
    #: a self-test.
    one_library: bool = False
    #: Whether the pair is independent, judged from ``computed_by`` (None: not recorded).
    independent: bool | None = None
    #: Which library computed each side and whether the pair is independent, in one line
    #: (None before schema v3).
    computed_by: str | None = None

    @property
    def agrees(self) -> bool:
        return not self.disagreements

    @property
    def passed(self) -> bool:
        """Agrees, stored passed, and is neither a self-test nor one library on both sides
        (neither is ever a pass)."""
        return (
            self.agrees and self.status == "passed" and not self.self_test and not self.one_library
        )

    @property
    def status(self) -> str:
        return self.document.result.status if self.document.result else "incomplete"


def load_document(path: Path, max_memory: int | None = None) -> tuple[Any, int]:
    """The JSON value in the file at ``path`` and the file's size (bounded, regular files only).

    The bound is :func:`~.limits.report_read_limit` under ``max_memory`` (default: the
    default budget): a larger file is refused from its size, before it is read.

    Raises
    ------
    ReportError
        One line: missing, not a regular file, over the size limit, not JSON.
    """
    try:
        limit = report_read_limit(max_memory)
        data = read_regular(Path(path), limit=limit.bytes, limit_reason=limit.explain())
    except FileNotFoundError:
        raise ReportError(f"read report {path}: No such file or directory") from None
    return load_json(data, str(path)), len(data)


def load_report(path: Path) -> ReportDocument:
    """Read and validate a report file (bounded, regular files only; one-line ReportError)."""
    return report_from(load_document(path)[0], str(path))


def _derived_check(document: ReportDocument, problems: list[str], notes: list[str]) -> Check | None:
    """The check ``config`` describes, or None (with the problem) when it describes none.

    Whether it is a self-test is derived from the backend pair, never read from the report
    (unless a name is unknown here, which a note says).
    """
    config: Any = document.config
    self_test, unchecked = is_self_test(config.require_backend, document.reference_backend)
    if unchecked:
        # A backend this machine does not know (a plugin not installed here): its identity
        # cannot be derived, so the report's own word stands, and the note says so.
        notes.append(unchecked)
        self_test = "SELF-TEST:" in document.coverage
    op = get_op(config.op)
    try:
        params = op.params(**{name: getattr(config, name) for name in op.options})
        op.validate(params)
        _check_tolerance(config.max_nmse, op, config.precision)
    except (ConfigError, ValueError) as error:
        problems.append(f"config does not describe a valid check: {str(error).splitlines()[0]}")
        return None
    return Check(
        require_backend=config.require_backend,
        op=op,
        params=params,
        reference=document.reference_backend,
        precision=config.precision,
        seed=config.seed,
        max_nmse=config.max_nmse,
        allow_self_test=self_test,
    )


def _check_derived_fields(
    document: ReportDocument, result: CheckResult, check: Check, chains: bool
) -> list[str]:
    from ..config import coverage_of

    problems = []
    for label, stored, derived in (
        ("output_shape", tuple(document.output_shape), check.output_shape),
        ("expected_output_elements", document.expected_output_elements, check.expected_elements),
        ("result.op", result.op, check.op.report_name),
        ("result.backend", result.backend, check.require_backend),
        ("result.seed", result.seed, check.seed),
        ("result.schema_version", result.schema_version, document.schema_version),
        ("result.tolerance_f64_bits", result.tolerance_f64_bits, f64_bits(check.max_nmse)),
        ("result.tolerance", result.tolerance, check.max_nmse),
        ("coverage", document.coverage, coverage_of(check, chains)),
    ):
        if stored != derived:
            problems.append(f"{label}: stored {stored!r}, derived from config {derived!r}")
    configured = document.configured_precision
    storages = (
        configured.reference_storage,
        configured.backend_input_storage,
        configured.backend_output_storage,
    )
    if storages != ("f32", check.precision, check.precision):
        problems.append(
            f"configured_precision: stored {storages}, derived from config "
            f"('f32', {check.precision!r}, {check.precision!r})"
        )
    phases = document.submission_phases
    expected_phases = (
        list(check.op.segment_names) if isinstance(check.op, ContextLifecycle) else None
    )
    if not chains and phases != expected_phases:
        problems.append(f"submission_phases: stored {phases}, derived {expected_phases}")
    return problems


def _decoded(
    result: CheckResult, problems: list[str]
) -> tuple[npt.NDArray[np.float32] | None, npt.NDArray[np.float32] | None]:
    arrays: list[npt.NDArray[np.float32] | None] = []
    for label, record in (("result.reference", result.reference), ("result.actual", result.actual)):
        try:
            arrays.append(None if record is None else decode_output(record, label))
        except ReportError as error:
            problems.append(str(error))
            arrays.append(None)
    return arrays[0], arrays[1]


def _judge(
    document: ReportDocument,
    check: Check,
    chains: bool,
    reference: npt.NDArray[np.float32],
    actual: npt.NDArray[np.float32],
    *,
    floor: bool = True,
) -> Verdict:
    """The verdict the runner reaches on these outputs: compare, precision, shape, segments,
    then (``floor``) the precision floor."""
    from ..config import segments_of

    verdict = compare_outputs(reference, actual, check.max_nmse, ulp_dtype=check.precision)
    executed = document.executed_precision
    if executed is not None:
        verdict = bind_precision(
            verdict,
            check.precision,
            executed.backend_input_storage,
            executed.backend_output_storage,
        )
    verdict = bind_shape(verdict, reference.size, actual.size, check.expected_elements)
    segments = segments_of(check, chains)
    if segments:
        verdict = bind_segments(verdict, reference, actual, segments, ulp_dtype=check.precision)
    if floor and document.schema_version >= FLOOR_VERSION:
        stored = getattr(document.result, "floor", None)
        measured = check_floor(
            check,
            chains,
            actual,
            diagnose=verdict.status == "failed",
            # The report's floor says which honest orders made it; none stored: the rule's.
            in_order=None if stored is None else "in order" in stored.honest_orders,
        )
        verdict = bind_floor(verdict, measured)
    return verdict


def rejudge(document: ReportDocument) -> Verdict | None:
    """The verdict the current rules give ``document``'s stored outputs (the precision floor
    included whatever its schema version); None when it holds no pair of outputs."""
    result = document.result
    check = _derived_check(document, [], [])
    if result is None or check is None or result.reference is None or result.actual is None:
        return None
    chains = isinstance(check.op, ContextLifecycle) and document.submission_phases is None
    reference = decode_output(result.reference, "result.reference")
    actual = decode_output(result.actual, "result.actual")
    current = document.model_copy(update={"schema_version": FLOOR_VERSION})
    return _judge(current, check, chains, reference, actual)


def _without_outputs(
    result: CheckResult,
    check: Check,
    reference: npt.NDArray[np.float32] | None,
    notes: list[str],
) -> tuple[list[str], Verdict | None]:
    """Check a result that lacks the candidate's output (nothing was compared)."""
    problems = []
    if result.status == "passed":
        problems.append("a passed result must store both outputs")
    if result.metrics is not None:
        problems.append("metrics: stored but not derivable (no candidate output)")
    if reference is None:
        notes.append(
            f"nothing ran that left an output; the stored {result.status} "
            f"({result.reason}) cannot be re-derived and is not evidence about the backend"
        )
        return problems, None
    # The reference ran; the runner stops before the candidate only for these reasons.
    base = reference_problem(reference)
    if base is None:
        notes.append(
            f"the candidate left no output; its failure ({result.reason}) cannot be re-derived"
        )
        return problems, None
    verdict = bind_shape(
        Verdict("failed", base, None, check.max_nmse), reference.size, None, check.expected_elements
    )
    if (result.status, result.reason) != (verdict.status, verdict.reason):
        problems.append(
            f"result: stored {result.status} ({result.reason}), "
            f"derived {verdict.status} ({verdict.reason})"
        )
    return problems, verdict


def _check_world(
    document: ReportDocument,
    check: Check,
    reference: npt.NDArray[np.float32] | None,
    actual: npt.NDArray[np.float32] | None,
    checked: list[str],
) -> list[str]:
    """Recompute the reference from config; bind the candidate's bits to their storage."""
    problems = []
    executed = document.executed_precision
    if reference is not None:
        recomputed = recompute_reference(check)
        if recomputed.output is None:
            problems.append(f"result.reference could not be recomputed: {recomputed.problem}")
        else:
            problem, found = compare_reference(
                reference, recomputed.output, check.op.wide_reference_accumulation
            )
            problems += [problem] if problem else []
            checked += [found] if found else []
            if executed is not None and executed.reference_storage != recomputed.storage:
                problems.append(
                    f"executed_precision.reference_storage: stored "
                    f"{executed.reference_storage!r}, recomputed {recomputed.storage!r}"
                )
            computed_by = computed_by_of(document)
            if computed_by is not None:
                problem = bind_library(
                    "computed_by.reference",
                    computed_by.reference,
                    recomputed.computed_by,
                    "the reference recomputed from config",
                )
                problems += [problem] if problem else []
    if actual is not None and executed is not None:
        problem = representability_problem(actual, executed.backend_output_storage)
        problems += [problem] if problem else []
    return problems


def replay(document: ReportDocument, *, rerun: bool = False) -> Replay:
    """Recompute the verdict of ``document`` and list every way the stored one disagrees.

    The reference is recomputed from the config first (:mod:`.world`); with ``rerun`` the
    candidate runs again too, and its stored bits must reproduce (its verdict, where its
    adapter declares non-deterministic output; :func:`.world.rerun_candidate`).
    """
    result = document.result
    if not document.completed or result is None:
        return Replay(
            document, None, ["report is incomplete (completed: false); it is not evidence"]
        )
    problems: list[str] = []
    notes: list[str] = []
    checked: list[str] = []
    if result.status == "passed" and result.reason is not None:
        problems.append("a passed result carries a reason")
    if result.status != "passed" and not result.reason:
        problems.append(f"a {result.status} result has no reason")
    check = _derived_check(document, problems, notes)
    if check is None:
        return Replay(document, None, problems, notes, claims=claimed_fields(document))
    chains = isinstance(check.op, ContextLifecycle) and document.submission_phases is None
    problems += _check_derived_fields(document, result, check, chains)
    reference, actual = _decoded(result, problems)
    if (result.actual is None) != (document.executed_precision is None):
        problems.append("executed_precision is set exactly when the candidate returned output")
    if (problem := identity_problem(document)) is not None:
        problems.append(problem)
    world = _check_world(document, check, reference, actual, checked)
    problems += world
    # A reference the config does not give refutes the report already; its floor (three more
    # computations of a config that may claim huge inputs) is not measured then.
    refuted = any(p.startswith("result.reference") for p in world)
    reproduced = False
    if rerun:
        reproduced = bind_rerun(document, check, actual, problems, checked)
    bound = candidate_identity(document, check, chains, reproduced=reproduced)
    problems += bound.problems
    verdict: Verdict | None = None
    if result.reference is not None and result.actual is not None:
        if reference is not None and actual is not None:
            verdict = _judge(document, check, chains, reference, actual, floor=not refuted)
            count = verdict.metrics.element_count if verdict.metrics is not None else 0
            if result.status != verdict.status or not same_reason(
                result.reason, verdict.reason, count
            ):
                problems.append(
                    f"status: stored {result.status}, derived {verdict.status}"
                    + (
                        ""
                        if result.reason == verdict.reason
                        else f" (reason: stored {result.reason!r}, derived {verdict.reason!r})"
                    )
                )
            problems += compare_metrics(
                "metrics", result.metrics, MetricsRecord.of(verdict.metrics)
            )
            problems += compare_segments(document.segments, verdict)
            problems += compare_submission_metrics(document, verdict, chains)
            if document.schema_version >= FLOOR_VERSION and not refuted:
                floor = verdict.floor if isinstance(verdict.floor, Floor) else None
                problems += compare_floor(getattr(result, "floor", None), floor)
            else:
                notes.append(
                    f"no precision floor: schema v{document.schema_version} did not record one, "
                    "so the candidate was judged by its tolerance alone; `diffcheck upgrade` "
                    "measures it"
                )
    elif result.actual is not None:
        problems.append("the candidate's output is stored without the reference's")
    else:
        more, verdict = _without_outputs(result, check, reference, notes)
        problems += more
        if document.segments is not None or document.submission_metrics is not None:
            problems.append("per-segment records are stored but nothing was compared")
    if result.status == "passed" and check.max_nmse > check.op.default_max_nmse(check.precision):
        notes.append(
            f"the tolerance {check.max_nmse:g} is looser than {check.op.name}'s default "
            f"{check.op.default_max_nmse(check.precision):g} at {check.precision}"
        )
    if check.allow_self_test:
        notes.append(
            f"SELF-TEST: the candidate {check.require_backend} is the reference "
            f"{check.reference}'s own backend; it is never a pass for the backend"
        )
    pair, line = independence(document)
    one_library = document.one_library or bound.one_library
    if one_library:
        notes.append(
            f"NOT INDEPENDENT: the candidate {check.require_backend} returned the reference's "
            "own library's arrays; like a self-test, it is never a pass for the backend"
        )
    return Replay(
        document,
        verdict,
        problems,
        notes,
        self_test=check.allow_self_test,
        checked=checked,
        claims=claimed_fields(document) + bound.claims,
        one_library=one_library,
        independent=False if bound.one_library else None if pair is None else pair.independent,
        computed_by=line,
    )
