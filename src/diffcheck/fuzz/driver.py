"""Shape fuzzing: draw many shapes of one op, run each check, shrink the first failure.

:func:`fuzz` runs a Hypothesis search over an op's shapes and input seeds (see
:mod:`diffcheck.ops.space` for how shapes are drawn: edges of the kernels' tiles, 1,
primes, powers of two, within a size budget). Each example is one in-process check
(:func:`~diffcheck.runner.execute_check` plus shape and segment binding) and the property is
"status == passed". On the first failure Hypothesis shrinks it to a minimal failing shape;
with ``report_dir`` that minimal check runs once more into a new report file there, which
``diffcheck replay`` re-checks like any other.

Hypothesis is an optional dependency (the ``fuzz`` extra), imported only when :func:`fuzz`
runs. The same ``seed`` draws the same examples with the same Hypothesis version: the search
is seeded with it, keeps no example database, writes no files, and does not mix in
constants from whichever modules the process has loaded.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from .._numbers import U64_MAX
from ..adapters import Adapter, parse_backend, resolve
from ..config import Check, make_check
from ..differ import Verdict
from ..errors import ConfigError, DiffcheckError
from ..files import fresh_name
from ..install import core_install
from ..ops import get_op
from ..ops.space import MAX_ELEMENTS_LIMIT, Drawn, OpSpace
from ..precision import PRECISIONS
from ..runner import run_check
from .spaces import space_for

__all__ = ["DEFAULT_EXAMPLES", "DEFAULT_MAX_ELEMENTS", "FuzzResult", "FuzzStatus", "fuzz"]

DEFAULT_EXAMPLES: Final = 100
#: Input plus output elements per example (about 4 MB of f32): fast on a CPU backend.
DEFAULT_MAX_ELEMENTS: Final = 1_000_000

FuzzStatus = Literal["passed", "failed", "not_run"]


@dataclass(frozen=True)
class FuzzResult:
    """What a fuzz run found.

    ``status`` is ``passed`` when every example passed; ``failed`` with the minimal failing
    ``check`` (its params and seed), its ``reason`` and ``verdict``; or ``not_run`` when the
    candidate (or the reference) cannot run here, with the probe's ``reason``.
    """

    status: FuzzStatus
    op: str
    candidate: str
    reference: str
    precision: str
    max_nmse: float
    #: Distinct examples run before the first failure (all of them when every one passed).
    examples: int
    #: Checks run while shrinking the first failure.
    shrink_runs: int = 0
    #: The minimal failing (or the not_run) check; None when every example passed.
    check: Check | None = None
    reason: str | None = None
    verdict: Verdict | None = None
    #: The report of ``check``, written when ``report_dir`` was given.
    report: Path | None = None
    #: That report's status: ``passed`` there means the failure did not reproduce (flaky).
    report_status: str | None = None
    #: The examples run before the first failure, in order, as (params, seed).
    history: tuple[Drawn, ...] = field(default=(), repr=False)
    #: The params of the largest example run (input plus output elements), if any.
    largest: dict[str, Any] | None = None
    #: The examples asked for; a pass over fewer says so.
    asked: int | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        """Truth is :attr:`passed`: a failed or not_run fuzz run is false."""
        return self.passed

    def summary(self) -> str:
        """One line a person reads at a glance."""
        describe = space_for(self.op).shape_text
        what = f"{self.op} on {self.candidate}"
        count = f"{self.examples} example{'' if self.examples == 1 else 's'}"
        if self.status == "passed":
            largest = f" (largest {describe(self.largest)})" if self.largest else ""
            fewer = ""
            if self.asked is not None and self.examples < self.asked:
                # Hypothesis stops when it draws no new distinct shape, or at the deadline.
                fewer = (
                    f"; {self.asked - self.examples} fewer than the {self.asked} asked: the "
                    "search ran out of new distinct shapes or time"
                )
            return f"fuzz: {count} of {what} passed{largest}{fewer}"
        assert self.check is not None
        report = f"; report: {self.report}" if self.report else ""
        if self.status == "not_run":
            return f"fuzz: {what} not_run: {self.reason}{report}"
        shape = f"{describe(self.check.params.model_dump())} seed={self.check.seed}"
        flaky = (
            f" (the rerun for the report {self.report_status}: flaky)"
            if self.report_status not in (None, "failed")
            else ""
        )
        return (
            f"fuzz: {what} failed after {count}; minimal failing "
            f"{shape}: {self.reason}{report}{flaky}"
        )


def _require_hypothesis() -> None:
    try:
        import hypothesis  # noqa: F401  (only whether it imports)
    except ImportError:
        raise DiffcheckError(
            f"diffcheck fuzz needs hypothesis, which is not installed; run {core_install('fuzz')}"
        ) from None


def _adapter(backend: str | Adapter, role: str) -> Adapter:
    if isinstance(backend, Adapter):
        return backend
    if role == "reference":
        try:
            parse_backend(backend)
        except ConfigError:
            raise ConfigError(f'unsupported reference backend "{backend}"') from None
    return resolve(backend)


def _base_check(
    candidate: str | Adapter,
    op: str,
    reference: str | Adapter,
    precision: str,
    max_nmse: float | None,
) -> Check:
    """The check every example varies (params and seed), validated like ``diffcheck run``."""
    operation = get_op(op)
    if isinstance(candidate, str) and isinstance(reference, str):
        return make_check(
            candidate, operation.name, reference=reference, precision=precision, max_nmse=max_nmse
        )
    # An adapter instance (a test double, a backend built in code) need not be registered.
    candidate_name = candidate if isinstance(candidate, str) else candidate.spec
    reference_name = reference if isinstance(reference, str) else reference.spec
    if candidate_name == reference_name:
        raise ConfigError(
            f'--require-backend and --reference are both "{reference_name}"; '
            "a backend cannot vouch for itself"
        )
    if precision not in PRECISIONS:
        raise ConfigError(f'unsupported precision "{precision}"; it must be f32, f16 or bf16')
    tolerance = operation.default_max_nmse(precision) if max_nmse is None else float(max_nmse)
    if not math.isfinite(tolerance) or tolerance <= 0.0:
        raise ConfigError("--max-nmse must be finite and strictly positive")
    return Check(
        require_backend=candidate_name,
        op=operation,
        params=operation.params(),
        reference=reference_name,
        precision=precision,
        max_nmse=tolerance,
    )


def _check_limits(
    space: OpSpace, examples: int, seed: int, max_elements: int, deadline_s: float | None
) -> None:
    if examples < 1:
        raise ConfigError(f"--examples {examples}, but it must be at least 1")
    if not 0 <= seed <= U64_MAX:
        raise ConfigError(f"--seed {seed}, but it must be a u64 (0 to {U64_MAX})")
    if not space.smallest <= max_elements <= MAX_ELEMENTS_LIMIT:
        raise ConfigError(
            f"--max-elements {max_elements}, but {space.op} needs {space.smallest} to "
            f"{MAX_ELEMENTS_LIMIT} (input plus output elements per example)"
        )
    if deadline_s is not None and not 0.0 < deadline_s < math.inf:
        raise ConfigError(f"deadline_s={deadline_s}, but it must be a positive number of seconds")


def _report_path(directory: Path, check: Check, space: OpSpace) -> Path:
    """A new file in ``directory`` named after the check (never an existing file)."""
    shape = space.shape_text(check.params.model_dump()).replace("=", "").replace(" ", "-")
    return fresh_name(
        directory, f"fuzz-{check.op.name}-{check.require_backend}-{shape}-seed{check.seed}", ".json"
    )


def fuzz(
    require_backend: str | Adapter,
    op: str,
    *,
    reference: str | Adapter = "numpy",
    precision: str = "f32",
    max_nmse: float | None = None,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    report_dir: Path | str | None = None,
    deadline_s: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> FuzzResult:
    """Fuzz ``op``'s shapes on ``require_backend`` against ``reference``; shrink the first failure.

    Parameters
    ----------
    require_backend
        The candidate: a backend name (``wgpu``, ``mlx:cpu``, ``array_api_strict``...) or an
        adapter instance. It never falls back.
    op
        An op's CLI token (``gemm``, ``rms-norm``, ``silu-mul``, ``context-lifecycle``).
    reference
        The trusted backend (a name or an adapter instance), NumPy by default.
    precision
        The candidate's storage precision (``f32``, ``f16`` or ``bf16``).
    max_nmse
        The tolerance; by default the precision's bucket.
    examples
        How many examples to draw (fewer run when the space is exhausted, different draws
        give the same check, or ``deadline_s`` passes).
    seed
        Seeds the search: the same seed draws the same examples (same Hypothesis version).
    max_elements
        Input plus output elements allowed per example.
    report_dir
        Where the minimal failing (or the not_run) check's report is written, as a new
        file; created when missing. Nothing is written when every example passes.
    deadline_s
        Draw no new example after this many seconds (a failure found is still shrunk).
    progress
        Called with a few one-line progress messages.

    Returns
    -------
    FuzzResult
        ``passed``; or the minimal failing check with its reason, verdict and report.

    Raises
    ------
    ConfigError
        For an invalid option, before anything runs.
    DiffcheckError
        When Hypothesis is not installed.
    ReportError
        When the report cannot be written.
    """
    base = _base_check(require_backend, op, reference, precision, max_nmse)
    space = space_for(base.op.name)
    _check_limits(space, examples, seed, max_elements, deadline_s)
    directory = None if report_dir is None else Path(report_dir)
    if directory is not None and directory.exists() and not directory.is_dir():
        raise ConfigError(f"--report-dir {directory} exists and is not a directory")
    _require_hypothesis()
    from .search import Failed, Search, run_search

    candidate = _adapter(require_backend, "candidate")
    reference_adapter = _adapter(reference, "reference")
    search = Search(base, space, candidate, reference_adapter, examples, deadline_s)
    if progress is not None:
        search.progress = progress
    found: Failed | None = None
    try:
        run_search(search, seed, max_elements)
    except Failed as failure:
        found = failure
    history = tuple(search.history)
    result = FuzzResult(
        status="passed",
        op=base.op.name,
        candidate=base.require_backend,
        reference=base.reference,
        precision=base.precision,
        max_nmse=base.max_nmse,
        examples=len(history),
        shrink_runs=search.shrink_runs,
        history=history,
        asked=examples,
        largest=max((values for values, _ in history), key=space.size, default=None),
    )
    if found is None:
        return result
    result = dataclasses.replace(
        result,
        status="not_run" if found.outcome.status == "not_run" else "failed",
        check=found.check,
        reason=found.outcome.reason,
        verdict=found.outcome.verdict,
    )
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        path = _report_path(directory, found.check, space)
        document = run_check(found.check, path, candidate=candidate, reference=reference_adapter)
        assert document.result is not None
        result = dataclasses.replace(result, report=path, report_status=document.result.status)
    return result
