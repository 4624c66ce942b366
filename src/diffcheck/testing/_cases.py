"""The pieces of the conformance suite that are not tests: targets, checks, skips."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from ..adapters import Adapter, parse_backend, resolve, same_backend
from ..config import Check, make_check
from ..errors import DiffcheckError
from ..ops.samples import OpCase
from ..precision import PrecisionName
from ..report.models import ReportDocument

__all__ = ["BackendSpec"]

BackendSpec = str | Callable[[], Adapter]


@dataclass
class _Target:
    """One backend under test: its adapter, or why there is none."""

    label: str
    adapter: Adapter | None
    problem: str | None = None


def _label(backend: BackendSpec) -> str:
    if isinstance(backend, str):
        return backend
    return getattr(backend, "__name__", repr(backend))


def _target(backend: BackendSpec) -> _Target:
    label = _label(backend)
    try:
        # Typed as object: a third-party factory may return anything, and this checks.
        adapter: object = resolve(backend) if isinstance(backend, str) else backend()
    except DiffcheckError as error:
        return _Target(label, None, f"{error}; is its package installed?")
    if not isinstance(adapter, Adapter):
        return _Target(label, None, f"{label} made {type(adapter).__name__}, not an Adapter")
    return _Target(label, adapter)


def _check(adapter: Adapter, case: OpCase, precision: PrecisionName, reference: str) -> Check:
    """The check for ``case``, named after the adapter when the registry knows it.

    The suite's fixture has already refused an adapter that is the reference's own backend
    unless the suite allows self-tests, so the check allows what the fixture let through.
    """
    params = dict(case.params)
    self_test = same_backend(adapter, reference)
    try:
        parse_backend(adapter.spec)
    except DiffcheckError:
        # An adapter made by a factory need not be registered; validate the config under a
        # registered name, then record the adapter's own name in the report.
        check = make_check(
            "numpy:cpu",
            case.op,
            reference=reference,
            precision=precision,
            allow_self_test=True,
            **params,
        )
        return dataclasses.replace(check, require_backend=adapter.spec, allow_self_test=self_test)
    return make_check(
        adapter.spec,
        case.op,
        reference=reference,
        precision=precision,
        allow_self_test=self_test,
        **params,
    )


def _report_text(document: ReportDocument) -> str:
    result = document.result
    if result is None:
        return "the report has no result"
    return f"{result.status}: {result.reason}"


def _usable(adapter: Adapter, case: OpCase, precision: PrecisionName) -> None:
    """Skip, with the reason, a case the backend says it does not execute."""
    capabilities = adapter.capabilities()
    if precision not in capabilities.precisions:
        pytest.skip(
            f"{adapter.spec} does not execute precision {precision} "
            f"(it executes: {', '.join(capabilities.precisions)})"
        )
    if capabilities.ops is not None and case.op not in capabilities.ops:
        pytest.skip(f"{adapter.spec} does not implement op {case.op}")
