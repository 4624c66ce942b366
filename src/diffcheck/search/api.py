""":func:`search_api`: search every function of the standard on one candidate backend.

Validates the options, finds the dtypes both backends hold, searches each function the
reference has (:func:`~diffcheck.search.runner.search_function`), lists every other one as
skipped with its reason, marks findings that the candidate's adapter declares as known,
and writes the bundles, ``findings.json`` and ``index.html`` into a new directory.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from .._numbers import U64_MAX
from ..adapters import same_backend
from ..errors import BackendError, ConfigError, DiffcheckError
from ..values.call import resolve_function
from ..values.dtypes import dtype_name
from ..values.spec import STANDARD_DTYPES
from .arrays import CATEGORIES, Space
from .findings import (
    Counts,
    DeclaredDivergence,
    FindingEntry,
    FindingsDocument,
    FunctionRun,
    SkippedFunction,
)
from .runner import Finding, FunctionResult

if TYPE_CHECKING:
    from ..adapters import Adapter, KnownApiDivergence

__all__ = [
    "DEFAULT_API_EXAMPLES",
    "DEFAULT_TIME_BUDGET_S",
    "Progress",
    "SearchResult",
    "run_notes",
    "search_api",
]

DEFAULT_API_EXAMPLES: Final = 30
#: Seconds per function after which no new example is drawn (``--time-budget``).
DEFAULT_TIME_BUDGET_S: Final = 30.0
#: Called after each function: (function, functions done, functions in all, findings so far).
Progress = Callable[[str, int, int, int], None]


@dataclass(frozen=True)
class SearchResult:
    """What :func:`search_api` found: the document and the findings with their examples."""

    document: FindingsDocument
    findings: list[Finding] = field(repr=False)
    out: Path | None = None
    #: Run-level notes, each said once (e.g. the two sides declare different defaults).
    notes: tuple[str, ...] = ()

    @property
    def unexplained(self) -> int:
        """Findings no declared known divergence explains."""
        return sum(1 for f in self.document.findings if f.known is None)

    def summary(self) -> str:
        """One line: functions searched and skipped, findings, known ones, where."""
        doc = self.document
        where = f"; findings: {self.out / 'findings.json'}" if self.out else ""
        return (
            f"api search: {len(doc.functions_tried)} functions of {doc.candidate.backend} "
            f"against {doc.reference.backend} ({doc.examples_per_function} examples each, "
            f"{len(doc.skipped)} skipped), {doc.counts.findings} findings "
            f"({doc.counts.known} known) in {doc.duration_s:.0f} s{where}"
        ) + "".join(f"\nnote: {note}" for note in self.notes)


#: Functions of versions after 2024.12 that are not drawn, each with the reason.
NOT_DRAWN: Final = {
    "broadcast_shapes": "takes and returns shapes, not arrays: outside the value model",
    "linalg.eig": "eigenvalues come in no specified order and eigenvectors up to scale: "
    "no unique value to compare",
    "linalg.eigvals": "eigenvalues come in no specified order: no unique value to compare",
}


class _NoReference:
    """Stands for a reference not yet resolved: it declares no version."""

    def namespace(self) -> object:
        return object()


_NO_REFERENCE: Any = _NoReference()


def _adapter(backend: str | Adapter) -> Adapter:
    from ..adapters import Adapter, resolve

    adapter = backend if isinstance(backend, Adapter) else resolve(backend)
    probe = adapter.probe()
    if not probe.is_available:
        raise BackendError(adapter.spec, probe.reason or probe.status)
    return adapter


def _holds(adapter: Adapter, dtype: str) -> bool:
    """Whether arrays of ``dtype`` survive the move onto ``adapter`` with their dtype."""
    try:
        with adapter.computing():  # on the device named, as every call of the search
            moved = adapter.to_device(np.zeros(2, dtype))
            return dtype_name(moved.dtype) == dtype
    except Exception:  # a backend refusing a dtype is an answer, not an error
        return False


def _has(adapter: Adapter, function: str) -> bool:
    try:
        resolve_function(adapter.namespace(), function)
    except AttributeError:
        return False
    return True


def _chosen(functions: Sequence[str] | None, version: str) -> tuple[str, ...]:
    """The functions of ``version`` to search: the table's order, then the version's others."""
    from ..values.signatures import functions_of
    from .table import all_functions

    of_version = functions_of(version)
    every = tuple(dict.fromkeys([*(f for f in all_functions() if f in of_version), *of_version]))
    if functions is None:
        return every
    unknown = [f for f in functions if f not in every]
    if unknown:
        raise ConfigError(
            f"--functions {','.join(unknown)}: not a function of the {version} standard "
            "(names as in the standard, e.g. exp, linalg.vecdot, fft.rfft; --api-version "
            "chooses the version)"
        )
    return tuple(dict.fromkeys(functions))


def _version(api_version: str | None, ref: Adapter) -> str:
    from ..values.signatures import VERSIONS, default_version

    if api_version is None:
        return default_version(ref.namespace())
    if api_version not in VERSIONS:
        raise ConfigError(
            f"--api-version {api_version}: not a version of the standard this knows; "
            f"it must be one of {', '.join(VERSIONS)}"
        )
    return api_version


def _declared(d: KnownApiDivergence) -> DeclaredDivergence:
    return DeclaredDivergence(
        function=d.function,
        kind=d.kind,
        condition=d.condition,
        reason=d.reason,
        upstream=d.upstream,
    )


def search_api(
    require_backend: str | Adapter,
    *,
    reference: str | Adapter = "numpy",
    functions: Sequence[str] | None = None,
    examples: int = DEFAULT_API_EXAMPLES,
    seed: int = 0,
    out: Path | str | None = None,
    budget_s: float | None = DEFAULT_TIME_BUDGET_S,
    progress: Progress | None = None,
    allow_self_test: bool = False,
    api_version: str | None = None,
) -> SearchResult:
    """Search the standard's functions on ``require_backend`` against ``reference``.

    Parameters
    ----------
    require_backend
        The candidate: a backend name (``mlx:cpu``) or an adapter instance; no fallback.
    reference
        The trusted side (NumPy by default): only functions it has are searched.
    functions
        The standard's names to search (default: every function of the standard).
    examples
        Examples drawn per function (shrinking a finding runs more).
    seed
        Seeds the search: the same seed draws the same examples (same Hypothesis version).
    out
        A new directory for ``findings.json``, ``index.html`` and ``bundles/``; it must not
        exist. Nothing is written without it.
    budget_s
        Seconds per function after which no new example is drawn, so a slow backend cannot
        stall the search; None draws every example (exactly repeatable for a seed, however
        loaded the machine). ``findings.json`` records it and which functions it cut short.
    progress
        Called after each function (see :data:`Progress`).
    allow_self_test
        Let the candidate be the reference's own backend (by adapter identity): a test of
        the search itself, recorded in ``findings.json``; never evidence about a backend.
    api_version
        The standard's version (``2024.12``) whose functions are searched and whose
        signatures the calls follow; default: the newest the reference declares.

    Returns
    -------
    SearchResult
        The findings document and the findings.

    Raises
    ------
    ConfigError
        An invalid option, an unknown function or an existing ``out``, before anything runs.
    BackendError
        When either backend is unavailable.
    DiffcheckError
        When Hypothesis is not installed.
    """
    if examples < 1:
        raise ConfigError(f"--examples {examples}, but it must be at least 1")
    if budget_s is not None and not (math.isfinite(budget_s) and budget_s > 0):
        raise ConfigError(f"--time-budget {budget_s}, but it must be a positive number of seconds")
    if not 0 <= seed <= U64_MAX:
        raise ConfigError(f"--seed {seed}, but it must be a u64 (0 to {U64_MAX})")
    directory = None if out is None else Path(out)
    if directory is not None and (directory.exists() or directory.is_symlink()):
        raise ConfigError(f"--out {directory} exists; it must be a new directory")
    try:
        import hypothesis  # noqa: F401  (only whether it imports)
    except ImportError:
        raise DiffcheckError(
            "diffcheck fuzz --api needs hypothesis, which is not installed; "
            "run \"pip install 'diffcheck[fuzz]'\""
        ) from None
    if api_version is not None:
        _version(api_version, _NO_REFERENCE)  # a bad version is refused before any backend
    started_at, started = datetime.now(UTC), time.monotonic()
    ref, cand = _adapter(reference), _adapter(require_backend)
    version = _version(api_version, ref)
    names = _chosen(functions, version)
    if not allow_self_test and same_backend(ref, cand):
        raise ConfigError(
            f'the candidate "{cand.spec}" is the reference "{ref.spec}"\'s own backend; '
            "a backend cannot vouch for itself (allow_self_test=True for a self-test)"
        )
    shared = tuple(d for d in STANDARD_DTYPES if _holds(ref, d) and _holds(cand, d))
    space = Space(shared, api_version=version)
    budget = math.inf if budget_s is None else budget_s
    runs, skipped, findings = _search(names, space, ref, cand, examples, seed, budget, progress)
    from .record import backend_identity

    entries, known, missed = _classify(findings, runs, cand)
    document = FindingsDocument(
        reference=backend_identity(ref),
        candidate=backend_identity(cand),
        seed=seed,
        examples_per_function=examples,
        time_budget_s=budget_s,
        self_test=allow_self_test and same_backend(ref, cand),
        dtypes=list(shared),
        dtypes_not_shared=[d for d in STANDARD_DTYPES if d not in shared],
        functions_tried=[
            FunctionRun(
                function=r.function,
                examples=r.examples,
                shrink_runs=r.shrink_runs,
                findings=len(r.findings),
                seconds=round(r.seconds, 3),
                stopped_by_time_budget=r.examples < examples and r.seconds > budget,
                error=r.error,
            )
            for r in runs
        ],
        skipped=skipped,
        findings=entries,
        counts=Counts(
            findings=len(entries),
            known=sum(1 for e in entries if e.known is not None),
            by_kind=dict(Counter(e.kind for e in entries)),
            by_blame=dict(Counter(e.blame for e in entries)),
        ),
        known=known,
        no_longer_reproduces=missed,
        started=started_at.isoformat(timespec="seconds"),
        duration_s=round(time.monotonic() - started, 3),
    )
    if directory is not None:
        from .output import write_outputs

        write_outputs(directory, document, findings, ref, cand)
    notes = (f"the {version} standard's functions and signatures", *run_notes(ref, cand))
    return SearchResult(document, findings, directory, notes)


def run_notes(ref: Adapter, cand: Adapter) -> tuple[str, ...]:
    """What holds for the whole run, said once rather than per function or finding."""
    from ..values.defaults import declared_defaults, defaults_note

    note = defaults_note(declared_defaults(ref.namespace()), declared_defaults(cand.namespace()))
    return () if note is None else (note,)


def _search(
    names: Sequence[str],
    space: Space,
    ref: Adapter,
    cand: Adapter,
    examples: int,
    seed: int,
    budget_s: float,
    progress: Progress | None,
) -> tuple[list[FunctionResult], list[SkippedFunction], list[Finding]]:
    from .coupled import newer_recipes
    from .runner import search_function
    from .table import SKIPPED, recipes

    table = {**newer_recipes(), **recipes()}
    runs: list[FunctionResult] = []
    skipped: list[SkippedFunction] = []
    findings: list[Finding] = []
    for done, name in enumerate(names, start=1):
        reason = SKIPPED.get(name) or NOT_DRAWN.get(name)
        recipe = table.get(name)
        if reason is None and recipe is not None and not space.of(recipe.category):
            wanted = ", ".join(CATEGORIES[recipe.category])
            reason = f"the backends share no {recipe.category} dtype ({wanted})"
        if reason is None and not _has(ref, name):
            reason = f"the reference {ref.spec} lacks it"
        if reason is not None or recipe is None:
            skipped.append(SkippedFunction(function=name, reason=reason or "no recipe"))
        else:
            own = replace(space, function=name)  # its interesting points join the draws
            result = search_function(
                name, recipe, own, ref, cand, examples=examples, seed=seed, budget_s=budget_s
            )
            runs.append(result)
            findings.extend(result.findings)
        if progress is not None:
            progress(name, done, len(names), len(findings))
    return runs, skipped, findings


def _classify(
    findings: Sequence[Finding], runs: Sequence[FunctionResult], cand: Adapter
) -> tuple[list[FindingEntry], list[DeclaredDivergence], list[DeclaredDivergence]]:
    """Entries for the findings (known ones marked), and the declared divergences not met."""
    from ..adapters import matching_api_divergence
    from .output import bundle_name, describe_example
    from .runner import api_case

    declared = cand.known_api_divergences()
    entries: list[FindingEntry] = []
    used: set[int] = set()
    for index, finding in enumerate(findings):
        match = matching_api_divergence(
            declared, finding.function, finding.kind, finding.dtype, case=api_case(finding)
        )
        if match is not None:
            used.add(declared.index(match))
        blame = finding.verdict.blame
        entries.append(
            FindingEntry(
                function=finding.function,
                kind=finding.kind,
                dtype=finding.dtype,
                blame=blame.side if blame else "undecided",
                blame_evidence=blame.evidence if blame else "none",
                blame_why=" ".join(blame.why.split()) if blame else "not judged",
                reason=" ".join((finding.verdict.reason or "").split()),
                bound=str(finding.verdict.bound),
                bundle=f"bundles/{bundle_name(index, finding)}",
                example=describe_example(finding.example),
                known=None if match is None else _declared(match),
            )
        )
    searched = {r.function for r in runs}
    known = [_declared(d) for i, d in enumerate(declared) if i in used]
    missed = [
        _declared(d) for i, d in enumerate(declared) if i not in used and d.function in searched
    ]
    return entries, known, missed
