"""What the conformance suite collects for each backend: every case, or one item per reason.

A backend that is unavailable here skips every case with the same reason, and so does every
case at a precision it does not execute or of an op it does not implement. Collecting each
such case as its own skipped item costs pytest's per-item overhead thousands of times over
and buries the few skips that matter in the summary, so the suite asks the backend once,
while the tests are collected, and collects ONE skipped item per test and reason instead,
its reason naming how many cases it stands for. A backend that is available gets every case
it executes, as before; a backend whose probe raises or reports an error, or that cannot be
made, is not planned (every case is collected and fails, at setup, with why).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from ..adapters import Adapter, same_backend
from ..ops.samples import OpCase
from ..precision import PrecisionName
from ._cases import BackendSpec, _label, _target

__all__ = ["Plan", "plan_of", "plan_params"]


@dataclass(frozen=True)
class Plan:
    """What a backend runs, as its probe and capabilities said when the tests were collected.

    ``unavailable`` is the probe's reason when it said unavailable (every case skips);
    ``precisions`` and ``ops`` are its capabilities (None: not known, so nothing collapses).
    """

    label: str
    unavailable: str | None = None
    #: The adapter's own name (``adapter.spec``), which the skip reasons use.
    spec: str = ""
    precisions: tuple[PrecisionName, ...] | None = None
    ops: frozenset[str] | None = None

    def skip_reason(self, op: str, precision: PrecisionName | None) -> str | None:
        """Why a case of ``op`` at ``precision`` cannot run here (None: it runs).

        The same words as the runtime skip of :func:`._cases._usable`, so a collapsed item
        reads like the items it replaces.
        """
        # precision None: the test has no precision axis (it runs the first one claimed).
        if self.precisions is not None and precision not in (None, *self.precisions):
            return (
                f"{self.spec} does not execute precision {precision} "
                f"(it executes: {', '.join(self.precisions)})"
            )
        if self.ops is not None and op not in self.ops:
            return f"{self.spec} does not implement op {op}"
        return None


#: Plans per backend spec and refused reference, made once per process (one probe each).
_PLANS: dict[tuple[BackendSpec, str | None], Plan] = {}


def plan_of(backend: BackendSpec, refused: str | None = None) -> Plan:
    """The backend's plan; an unknown one (nothing collapses) where asking it failed.

    ``refused`` names a reference whose own backend the suite refuses (no self-test): such
    a backend fails every case at setup, so nothing of it collapses.
    """
    key = (backend, refused)
    if key not in _PLANS:
        _PLANS[key] = _ask(backend, refused)
    return _PLANS[key]


def _ask(backend: BackendSpec, refused: str | None) -> Plan:
    label = _label(backend)
    target = _target(backend)
    adapter: Adapter | None = target.adapter
    if adapter is None or (refused is not None and same_backend(adapter, refused)):
        return Plan(label)
    try:
        probe = adapter.probe()
    except Exception:  # test_probe_never_raises reports it, case by case as before
        return Plan(label)
    if probe.status == "unavailable":
        return Plan(label, unavailable=f"{label}: {probe.reason}")
    if probe.status != "available":
        return Plan(label)
    try:
        capabilities = adapter.capabilities()
    except Exception:  # test_capabilities_are_valid reports it
        return Plan(label)
    return Plan(
        label, spec=adapter.spec, precisions=tuple(capabilities.precisions), ops=capabilities.ops
    )


#: One axis of a test's cases: its argument name, its values, and each value's id.
Axis = tuple[str, Sequence[object], Callable[[object], str]]


def plan_params(
    backends: Sequence[BackendSpec],
    axes: Sequence[Axis],
    *,
    probe: bool,
    refused: str | None = None,
) -> list[object]:
    """``pytest.param`` sets of (backend, *axis values): every runnable case, one per skip.

    The ids are the ones separate parametrizations would give (``backend-case-precision``);
    a collapsed item's id ends in the reason's subject (``-every-case``, ``-bf16-every-case``,
    ``-gemm-every-case``). Without ``probe`` nothing is asked and every case is collected;
    ``refused`` is as for :func:`plan_of`. Without axes (a test of the backend itself, such
    as its probe's) nothing collapses.
    """
    if not axes:  # a test of the backend itself (its probe...): it runs as it is
        return [pytest.param(backend, id=_label(backend)) for backend in backends]
    params: list[object] = []
    for backend in backends:
        plan = plan_of(backend, refused) if probe else Plan(_label(backend))
        combos = list(itertools.product(*(values for _, values, _ in axes)))
        if plan.unavailable is not None:
            reason = f"{plan.unavailable} ({_count(len(combos))}, collected as one)"
            params.append(_skipped(backend, combos[0], f"{plan.label}-every-case", reason))
            continue
        skipped: dict[str, tuple[tuple[object, ...], str, int]] = {}
        for combo in combos:
            values = dict(zip((name for name, _, _ in axes), combo, strict=True))
            why = plan.skip_reason(_op_of(values), _precision_of(values))
            if why is None:
                ids = [
                    plan.label,
                    *(to_id(v) for (_, _, to_id), v in zip(axes, combo, strict=True)),
                ]
                params.append(pytest.param(backend, *combo, id="-".join(ids)))
                continue
            first, subject, count = skipped.get(why, (combo, _subject(values, plan), 0))
            skipped[why] = (first, subject, count + 1)
        for why, (first, subject, count) in skipped.items():
            full = f"{why} ({_count(count)}, collected as one)"
            params.append(_skipped(backend, first, f"{plan.label}-{subject}-every-case", full))
    return params


def _skipped(backend: BackendSpec, combo: tuple[object, ...], id: str, reason: str) -> object:
    return pytest.param(backend, *combo, id=id, marks=pytest.mark.skip(reason=reason))


def _count(count: int) -> str:
    return f"{count} case" if count == 1 else f"{count} cases"


def _op_of(values: dict[str, object]) -> str:
    case = values.get("case")
    if isinstance(case, OpCase):
        return case.op
    fuzz_op = values.get("fuzz_op")
    return fuzz_op if isinstance(fuzz_op, str) else ""


def _precision_of(values: dict[str, object]) -> PrecisionName | None:
    precision = values.get("precision")
    return precision if isinstance(precision, str) else None  # type: ignore[return-value]


def _subject(values: dict[str, object], plan: Plan) -> str:
    """What a collapsed item's id names: the precision not executed, or the op not run."""
    precision = _precision_of(values)
    if precision is not None and plan.precisions is not None and precision not in plan.precisions:
        return precision
    return _op_of(values)
