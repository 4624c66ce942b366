"""Expanding a matrix into checks, every one validated with ``make_check`` before anything runs.

The expansion is the cross product op x shape x precision x seed x pair, run and listed
pair by pair, then op by op, shape by shape, precision, seed (so tables and plots read one
pair at a time), minus the precisions a pair says it does not run. Each check gets a deterministic, filesystem-safe id that is also its report
path: ``<reference>-vs-<candidate>/<op>/<op>-<shape>-<precision>-s<seed>``.

A candidate whose adapter is not installed here cannot be told apart from a misspelt name by
the registry, so it is not a matrix error: its checks are planned as ``not_run`` with the
registry's message (they fail the sweep only when the pair is ``required``). The same goes
for an adapter that cannot load or does not know the device suffix (the message lists the
devices it knows). Everything else
about such a check is still validated, through ``make_check`` with a stand-in candidate.

Planning is linear in the checks and cheap per check: the adapter entry points are read
once per plan, each backend is resolved once per pair, and ``make_check`` runs once per
(pair, op, shape, precision), each further seed reusing that validated check (a seed was
range-checked by the matrix schema). A matrix over ``max_checks`` (default
:data:`DEFAULT_MAX_CHECKS`) is refused before anything is expanded. A candidate that is the
reference backend itself (same adapter and device) is refused at plan time.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters import Adapter, KnownDivergence, parse_backend, resolve, same_backend
from ..adapters._registry import entry_point_snapshot
from ..config import Check, make_check
from ..errors import ConfigError, UnknownBackendError
from ..memory import DEFAULT_FRACTION, default_budget, format_bytes
from ..ops import get_op
from ..precision import PrecisionName
from .matrix import MatrixFile, OpEntry, PairEntry, ShapeEntry

__all__ = [
    "DEFAULT_MAX_CHECKS",
    "Pair",
    "PlannedCheck",
    "SweepPlan",
    "count_checks",
    "plan_matrix",
    "shape_label",
]

#: The most checks a matrix may expand to unless ``--max-checks`` raises it.
DEFAULT_MAX_CHECKS = 100_000
#: How often (in checks) planning reports progress.
PROGRESS_EVERY = 10_000
#: What a sweep holds per planned check for its whole run: the planned check (0.5 to 0.8 KB
#: measured), its summary row, its page and JUnit entries. A sweep of 10^6 checks took 4 GB.
SWEEP_BYTES_PER_CHECK = 4096

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text.replace(":", "-"))


@dataclass(frozen=True)
class Pair:
    """A reference/candidate pair as the matrix lists it."""

    reference: str
    candidate: str
    required: bool
    #: Why the candidate cannot be resolved here (no adapter installed), or None.
    unresolved: str | None = None
    #: What the candidate's adapter declares (resolved once, here); not part of the identity.
    known_divergences: tuple[KnownDivergence, ...] = field(default=(), compare=False, repr=False)

    @property
    def label(self) -> str:
        """``reference -> candidate``, as tables show it."""
        return f"{self.reference} -> {self.candidate}"

    @property
    def slug(self) -> str:
        """The pair's directory name: ``<reference>-vs-<candidate>``, filesystem-safe."""
        return f"{_safe(self.reference)}-vs-{_safe(self.candidate)}"


@dataclass(frozen=True)
class PlannedCheck:
    """One expanded, validated check and where its report goes."""

    id: str
    pair: Pair
    shape: str
    check: Check

    @property
    def op(self) -> str:
        return self.check.op.name

    @property
    def params(self) -> dict[str, Any]:
        """The op's parameters, every one spelled out (defaults included)."""
        values: dict[str, Any] = self.check.params.model_dump()
        return values

    @property
    def report(self) -> Path:
        """The report path relative to the sweep directory."""
        return Path(f"{self.id}.json")


@dataclass(frozen=True)
class SweepPlan:
    """Every check of a matrix, in run order, and the pairs they belong to."""

    source: str
    description: str
    pairs: tuple[Pair, ...]
    checks: tuple[PlannedCheck, ...]
    timeout_s: float | None

    def without_pairs(self, left_out: Sequence[Pair]) -> SweepPlan:
        """This plan minus every check of the ``left_out`` pairs."""
        dropped = set(left_out)
        return dataclasses.replace(
            self,
            pairs=tuple(p for p in self.pairs if p not in dropped),
            checks=tuple(c for c in self.checks if c.pair not in dropped),
        )


def shape_label(params: dict[str, Any]) -> str:
    """A compact shape name: integer params joined by ``x``, then ``-<name><value>`` for the rest.

    ``{"m": 64, "n": 33, "k": 35}`` is ``64x33x35``; ``{"tokens": 3, "dim": 33, "eps": 1e-05}``
    is ``3x33-eps1e-05``; a true flag adds its name (``-causal``) and a text choice its name
    and value (``-layoutinterleaved``). Floats use the shortest spelling that round-trips: in
    float32 for a value float32 holds exactly (an op that rounds ``eps`` to float32 still
    reads ``1e-05``), else in float64. Two values of one parameter share a label only when one
    is the float32 rounding of the other (then the plan reports a repeated check rather than
    guess).
    """
    dims = [str(v) for v in params.values() if isinstance(v, int) and not isinstance(v, bool)]
    extras = [
        k if v is True else f"{k}{_float_text(v)}" if isinstance(v, float) else f"{k}{v}"
        for k, v in params.items()
        if isinstance(v, float | str) or v is True
    ]
    return _safe("-".join(["x".join(dims), *extras]))


def _float_text(value: float) -> str:
    if not (math.isfinite(value) and abs(value) <= float(np.finfo(np.float32).max)):
        return repr(value)
    single = np.float32(value)
    if float(single) == value:
        return str(single)  # NumPy's shortest float32 spelling, Python-style (1e-05, 0.5)
    return repr(value)


def _tolerance(
    op_name: str,
    precision: PrecisionName,
    shape: ShapeEntry,
    entry: OpEntry,
    pair: PairEntry,
    matrix: MatrixFile,
) -> float:
    if shape.max_nmse is not None:
        return shape.max_nmse
    for layer in (entry, pair, matrix.defaults):
        value = layer.tolerance(precision)
        if value is not None:
            return value
    # Neither the matrix nor the pair names one: the op's own default for the precision.
    return get_op(op_name).default_max_nmse(precision)


def _refuse_self_pair(entry: PairEntry, candidate: Adapter, where: str) -> None:
    try:
        same = same_backend(entry.reference, candidate)
    except UnknownBackendError:
        return  # make_check names an unknown reference with its own message
    if same:
        library, device = candidate.identity()
        raise ConfigError(
            f'{where}: candidate "{entry.candidate}" is the same backend as reference '
            f'"{entry.reference}" ({library} on device {device or "default"}); a backend '
            "cannot vouch for itself: choose another candidate"
        )


def _resolve_pair(entry: PairEntry, where: str = "pairs") -> Pair:
    # Resolving imports the adapter module only (never the backend library), so an unknown
    # device suffix or a plugin that cannot load is found here, not once per worker.
    # The adapter's known divergences are read here too, so the parent resolves it once.
    unresolved = None
    divergences: tuple[KnownDivergence, ...] = ()
    try:
        parse_backend(entry.candidate)
    except UnknownBackendError as error:
        unresolved = f"{error}: no adapter for it is installed here (or the name is misspelt)"
    else:
        try:
            adapter = resolve(entry.candidate)
        except UnknownBackendError as error:
            unresolved = str(error)
        else:
            _refuse_self_pair(entry, adapter, where)
            try:
                divergences = tuple(adapter.known_divergences())
            except Exception:  # a broken list excuses nothing: its failures stay failures
                divergences = ()
    return Pair(entry.reference, entry.candidate, entry.required, unresolved, divergences)


def _make(pair: Pair, op: str, precision: str, seed: int, tolerance: float, params: Any) -> Check:
    if pair.unresolved is None:
        return make_check(
            pair.candidate,
            op,
            reference=pair.reference,
            precision=precision,
            seed=seed,
            max_nmse=tolerance,
            **params,
        )
    # Validate everything that does not depend on the candidate, then name the real one.
    stand_in = "array_api_strict" if pair.reference != "array_api_strict" else "numpy"
    check = make_check(
        stand_in,
        op,
        reference=pair.reference,
        precision=precision,
        seed=seed,
        max_nmse=tolerance,
        **params,
    )
    if pair.reference == pair.candidate:
        raise ConfigError(f'the pair names "{pair.candidate}" as both reference and candidate')
    return dataclasses.replace(check, require_backend=pair.candidate)


def _with_seed(check: Check, seed: int) -> Check:
    """``check`` with another seed: ``dataclasses.replace`` without its per-field cost.

    Check is a frozen dataclass with no ``__post_init__``, so a shallow copy with the one
    field set is the same object ``replace`` would build, several times faster.
    """
    clone = object.__new__(type(check))
    clone.__dict__.update(check.__dict__)
    object.__setattr__(clone, "seed", seed)
    return clone


def _pair_checks(
    pair: Pair, pair_entry: PairEntry, matrix: MatrixFile, source: str
) -> Iterator[tuple[str, PlannedCheck]]:
    """(matrix location, check) for every check of one pair, in run order."""
    slug = pair.slug
    for op_name, entry in matrix.op_entries():
        requested = entry.precisions or matrix.defaults.precisions
        precisions = [
            p for p in requested if not pair_entry.precisions or p in pair_entry.precisions
        ]
        for index, shape in enumerate(entry.shapes):  # type: ignore[attr-defined]
            params = shape.model_dump(exclude_unset=True, exclude={"seeds", "max_nmse"})
            seeds = shape.seeds or entry.seeds or matrix.defaults.seeds
            where = f"ops.{op_name}.shapes[{index}]"
            for precision in precisions:
                tolerance = _tolerance(op_name, precision, shape, entry, pair_entry, matrix)
                try:
                    first = _make(pair, op_name, precision, seeds[0], tolerance, params)
                except ConfigError as error:
                    raise ConfigError(
                        f"{source}: {where} ({pair.label}, {precision}, seed {seeds[0]}): {error}"
                    ) from None
                label = shape_label(first.params.model_dump())
                stem = f"{slug}/{op_name}/{op_name}-{label}-{precision}-s"
                for seed in seeds:
                    # Nothing make_check validates depends on the seed beyond its u64 range,
                    # which the matrix schema checked: one validation serves every seed.
                    check = first if seed == seeds[0] else _with_seed(first, seed)
                    yield where, PlannedCheck(f"{stem}{seed}", pair, label, check)


def count_checks(matrix: MatrixFile) -> int:
    """How many checks ``matrix`` expands to, computed without expanding it."""
    total = 0
    for pair_entry in matrix.pairs:
        for _, entry in matrix.op_entries():
            requested = entry.precisions or matrix.defaults.precisions
            runs = sum(not pair_entry.precisions or p in pair_entry.precisions for p in requested)
            for shape in entry.shapes:  # type: ignore[attr-defined]
                total += runs * len(shape.seeds or entry.seeds or matrix.defaults.seeds)
    return total


def _check_memory(total: int, source: str) -> None:
    """Refuse, before anything is planned, a sweep whose checks would not fit the budget.

    The budget is the runner's default (:func:`diffcheck.memory.default_budget`, a share of
    the memory available now): ``--max-checks`` lifts the count limit, never this one.
    """
    budget = default_budget()
    need = total * SWEEP_BYTES_PER_CHECK
    if budget is not None and need > budget:
        raise ConfigError(
            f"{source}: the matrix expands to {total} checks, which a sweep holds in about "
            f"{format_bytes(need)}, over the {format_bytes(budget)} budget ({DEFAULT_FRACTION:.0%}"
            " of the memory available now); split the matrix or run it on a larger machine"
        )


def plan_matrix(
    matrix: MatrixFile,
    *,
    source: str = "matrix",
    max_checks: int = DEFAULT_MAX_CHECKS,
    on_progress: Callable[[int, int], None] | None = None,
) -> SweepPlan:
    """Expand ``matrix`` and validate every check with ``make_check``.

    Parameters
    ----------
    matrix
        A parsed matrix.
    source
        How errors name the matrix (``matrix path/to/file.toml``).
    max_checks
        Refuse a matrix that expands to more checks than this.
    on_progress
        Called with (checks planned, checks in total) every :data:`PROGRESS_EVERY` checks.

    Returns
    -------
    SweepPlan
        The checks in run order; nothing has run and no file exists yet.

    Raises
    ------
    ConfigError
        One line naming the op, shape, pair, precision and seed of the first invalid check,
        a duplicated check, a self-pair, a matrix over ``max_checks`` or one that expands
        to nothing.
    """
    total = count_checks(matrix)
    if total > max_checks:
        raise ConfigError(
            f"{source}: the matrix expands to {total} checks, over the limit of {max_checks}; "
            f"pass --max-checks {total} to run it anyway"
        )
    _check_memory(total, source)
    if on_progress is not None and total >= PROGRESS_EVERY:
        on_progress(0, total)
    checks: list[PlannedCheck] = []
    seen: dict[str, str] = {}
    with entry_point_snapshot():
        pairs = [
            (_resolve_pair(entry, f"{source}: pairs[{index}]"), entry)
            for index, entry in enumerate(matrix.pairs)
        ]
        for pair, pair_entry in pairs:
            for where, planned in _pair_checks(pair, pair_entry, matrix, source):
                if planned.id in seen:
                    raise ConfigError(
                        f"{source}: {where} repeats check {planned.id} "
                        f"(first from {seen[planned.id]})"
                    )
                seen[planned.id] = where
                checks.append(planned)
                if on_progress is not None and len(checks) % PROGRESS_EVERY == 0:
                    on_progress(len(checks), total)
    if not checks:
        raise ConfigError(
            f"{source}: the matrix expands to no checks (no pair runs the requested precisions)"
        )
    return SweepPlan(
        source=source,
        description=matrix.description,
        pairs=tuple(pair for pair, _ in pairs),
        checks=tuple(checks),
        timeout_s=matrix.defaults.timeout_s,
    )
