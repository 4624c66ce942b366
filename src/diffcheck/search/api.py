""":func:`search_api`: search every function of the standard on one candidate backend.

Validates the options, finds the dtypes both backends hold, opens the output directory
before any search, and runs a :class:`~diffcheck.search.session.Session` with its calls
isolated in a warm worker (:mod:`~diffcheck.search.isolation`) or in-process.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from .._numbers import U64_MAX
from ..adapters import same_backend
from ..errors import BackendError, ConfigError, DiffcheckError
from ..install import core_install
from ..values.dtypes import dtype_name
from ..values.spec import STANDARD_DTYPES
from .arrays import Space
from .findings import FindingsDocument, Isolation
from .isolation import DEFAULT_CALL_TIMEOUT_S, calls_for
from .runner import Finding

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = [
    "DEFAULT_API_EXAMPLES",
    "DEFAULT_TIME_BUDGET_S",
    "Progress",
    "SearchResult",
    "run_notes",
    "search_api",
]

DEFAULT_API_EXAMPLES: Final = 30
#: No time budget unless one is asked for: a seed's findings do not depend on the load.
DEFAULT_TIME_BUDGET_S: Final = None
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
        where = (
            f"; findings: {self.out / 'findings.json'}, page: {self.out / 'index.html'}"
            if self.out
            else "; --out DIR keeps findings.json, index.html and a bundle per finding"
        )
        return (
            f"api search: {len(doc.functions_tried)} functions of {doc.candidate.backend} "
            f"against {doc.reference.backend} ({doc.examples_per_function} examples each, "
            f"{len(doc.skipped)} skipped), {doc.counts.findings} findings "
            f"({doc.counts.known} known) in {doc.duration_s:.0f} s{where}"
        ) + "".join(f"\nnote: {note}" for note in self.notes)


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


def search_api(
    require_backend: str | Adapter,
    *,
    reference: str | Adapter = "numpy",
    functions: Sequence[str] | None = None,
    examples: int = DEFAULT_API_EXAMPLES,
    seed: int = 0,
    out: Path | str | None = None,
    budget_s: float | None = None,
    progress: Progress | None = None,
    allow_self_test: bool = False,
    isolate: bool = True,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    resume: bool = False,
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
        A new directory for ``findings.json``, ``index.html``, ``bundles/`` and the journal,
        created before the search starts and written function by function. Nothing is
        written without it.
    budget_s
        Seconds per function after which no example is drawn or shrink step run: an
        explicit opt-in (default None: every example drawn, exactly repeatable for a seed,
        however loaded the machine). ``findings.json`` lists every function it cut short.
    progress
        Called after each function (see :data:`Progress`).
    allow_self_test
        Let the candidate be the reference's own backend (by adapter identity): a test of
        the search itself, recorded in ``findings.json``; never evidence about a backend.
    isolate
        Judge each example in a warm worker process (default), so a call that crashes or
        hangs is a finding of kind ``crash`` or ``hang`` and the search goes on; False runs
        every call in this process (faster; a crash ends the run).
    call_timeout_s
        With ``isolate``: seconds one example may take before its worker is killed.
    resume
        Continue the interrupted run whose ``out`` this is (the same options): functions
        its journal holds are not searched again and their findings are kept.
    api_version
        The standard's version (``2024.12``) whose functions are searched and whose
        signatures the calls follow; default: the newest the reference declares.

    Returns
    -------
    SearchResult
        The findings document, and the findings found by this call (with their examples).

    Raises
    ------
    ConfigError
        An invalid option, an unknown function, an existing ``out`` (without ``resume``) or
        one that cannot be created, before anything runs.
    BackendError
        When either backend is unavailable.
    DiffcheckError
        When Hypothesis is not installed.
    KeyboardInterrupt
        On SIGINT, after ``findings.json`` and ``index.html`` are written for the functions
        done (marked incomplete).
    """
    if examples < 1:
        raise ConfigError(f"--examples {examples}, but it must be at least 1")
    if budget_s is not None and not (math.isfinite(budget_s) and budget_s > 0):
        raise ConfigError(f"--time-budget {budget_s}, but it must be a positive number of seconds")
    if not (math.isfinite(call_timeout_s) and call_timeout_s > 0):
        raise ConfigError(
            f"--call-timeout {call_timeout_s}, but it must be a positive number of seconds"
        )
    if not 0 <= seed <= U64_MAX:
        raise ConfigError(f"--seed {seed}, but it must be a u64 (0 to {U64_MAX})")
    directory = None if out is None else Path(out)
    if resume and directory is None:
        raise ConfigError("--resume needs --out: the directory of the run to continue")
    if not resume and directory is not None and os.path.lexists(directory):
        raise ConfigError(
            f"--out {directory} exists; give a new directory, or --resume to continue it"
        )
    try:
        import hypothesis  # noqa: F401  (only whether it imports)
    except ImportError:
        raise DiffcheckError(
            "diffcheck fuzz --api needs hypothesis, which is not installed; "
            f"run {core_install('fuzz')}"
        ) from None
    if api_version is not None:
        _version(api_version, _NO_REFERENCE)  # a bad version is refused before any backend
    started_at, started = datetime.now(UTC), time.monotonic()
    ref, cand = _adapter(reference), _adapter(require_backend)
    version = _version(api_version, ref)
    names = _chosen(functions, version)
    if not allow_self_test and same_backend(ref, cand):
        raise ConfigError(
            f'candidate "{cand.spec}" and reference "{ref.spec}" are the same backend; '
            "a backend cannot vouch for itself (allow_self_test=True for a self-test)"
        )
    shared = tuple(d for d in STANDARD_DTYPES if _holds(ref, d) and _holds(cand, d))
    from .session import Session
    from .stop import clear_stop

    clear_stop()

    session = Session(
        names=names,
        space=Space(shared, api_version=version),
        reference=ref,
        candidate=cand,
        examples=examples,
        seed=seed,
        budget_s=budget_s,
        progress=progress,
    )
    session.open(directory, resume=resume)
    calls = calls_for(ref, cand, isolate=isolate, timeout_s=call_timeout_s)
    complete = False
    try:
        session.run(calls)
        complete = True
    finally:
        calls.close()
        document = session.document(
            started=started_at.isoformat(timespec="seconds"),
            duration_s=round(time.monotonic() - started, 3),
            self_test=allow_self_test and same_backend(ref, cand),
            dtypes_not_shared=[d for d in STANDARD_DTYPES if d not in shared],
            isolation=Isolation(
                mode="worker" if isolate else "in-process",
                call_timeout_s=call_timeout_s if isolate else None,
                workers_started=getattr(calls, "started", 0),
            ),
            complete=complete,
        )
        session.finish(document)
    notes = (f"the {version} standard's functions and signatures", *run_notes(ref, cand))
    return SearchResult(document, session.found, directory, notes)


def run_notes(ref: Adapter, cand: Adapter) -> tuple[str, ...]:
    """What holds for the whole run, said once rather than per function or finding."""
    from ..values.defaults import declared_defaults, defaults_note

    note = defaults_note(declared_defaults(ref.namespace()), declared_defaults(cand.namespace()))
    return () if note is None else (note,)
