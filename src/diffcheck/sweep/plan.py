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
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..adapters import KnownDivergence, parse_backend, resolve
from ..config import Check, make_check
from ..errors import ConfigError, UnknownBackendError
from ..ops import get_op
from ..precision import PrecisionName
from .matrix import MatrixFile, OpEntry, PairEntry, ShapeEntry

__all__ = ["Pair", "PlannedCheck", "SweepPlan", "plan_matrix", "shape_label"]

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
    and value (``-layoutinterleaved``). Floats use Python's shortest round-trip spelling, so
    two different values never share a label.
    """
    dims = [str(v) for v in params.values() if isinstance(v, int) and not isinstance(v, bool)]
    extras = [
        k if v is True else f"{k}{v!r}" if isinstance(v, float) else f"{k}{v}"
        for k, v in params.items()
        if isinstance(v, float | str) or v is True
    ]
    return _safe("-".join(["x".join(dims), *extras]))


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


def _resolve_pair(entry: PairEntry) -> Pair:
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


def _pair_checks(
    pair: Pair, pair_entry: PairEntry, matrix: MatrixFile, source: str
) -> Iterator[tuple[str, PlannedCheck]]:
    """(matrix location, check) for every check of one pair, in run order."""
    for op_name, entry in matrix.op_entries():
        requested = entry.precisions or matrix.defaults.precisions
        precisions = [
            p for p in requested if not pair_entry.precisions or p in pair_entry.precisions
        ]
        for index, shape in enumerate(entry.shapes):  # type: ignore[attr-defined]
            params = shape.model_dump(exclude_unset=True, exclude={"seeds", "max_nmse"})
            seeds = shape.seeds or entry.seeds or matrix.defaults.seeds
            where = f"ops.{op_name}.shapes[{index}]"
            for precision, seed in itertools.product(precisions, seeds):
                tolerance = _tolerance(op_name, precision, shape, entry, pair_entry, matrix)
                try:
                    check = _make(pair, op_name, precision, seed, tolerance, params)
                except ConfigError as error:
                    raise ConfigError(
                        f"{source}: {where} ({pair.label}, {precision}, seed {seed}): {error}"
                    ) from None
                label = shape_label(check.params.model_dump())
                check_id = f"{pair.slug}/{op_name}/{op_name}-{label}-{precision}-s{seed}"
                yield where, PlannedCheck(check_id, pair, label, check)


def plan_matrix(matrix: MatrixFile, *, source: str = "matrix") -> SweepPlan:
    """Expand ``matrix`` and validate every check with ``make_check``.

    Parameters
    ----------
    matrix
        A parsed matrix.
    source
        How errors name the matrix (``matrix path/to/file.toml``).

    Returns
    -------
    SweepPlan
        The checks in run order; nothing has run and no file exists yet.

    Raises
    ------
    ConfigError
        One line naming the op, shape, pair, precision and seed of the first invalid check,
        a duplicated check, or a matrix that expands to nothing.
    """
    pairs = [(_resolve_pair(entry), entry) for entry in matrix.pairs]
    checks: list[PlannedCheck] = []
    seen: dict[str, str] = {}
    for pair, pair_entry in pairs:
        for where, planned in _pair_checks(pair, pair_entry, matrix, source):
            if planned.id in seen:
                raise ConfigError(
                    f"{source}: {where} repeats check {planned.id} (first from {seen[planned.id]})"
                )
            seen[planned.id] = where
            checks.append(planned)
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
