"""Bound fields: what a report claims that replay checks against its bits or this machine.

Three checks, each a disagreement when it fails:

- the candidate's stored output must be representable in the storage the candidate says it
  executed with (an f16 run whose outputs are not f16 values did not run at f16);
- the backend pair: whether the candidate is the reference's own backend is derived here
  (by adapter identity, :func:`~diffcheck.adapters.same_backend`), never read from a
  sentence in the report, and a self-test never counts as a pass;
- what is only claimed (platform, execution path, kernel entrypoint, probe details,
  versions, times, the candidate's library and the independence probe) is listed by
  :func:`claimed_fields`, for replay to print as claimed and keep out of ``agrees``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..adapters import same_backend
from ..errors import ConfigError
from .identity import claimed_identity
from .models import ReportDocument

__all__ = ["claimed_fields", "is_self_test", "representability_problem"]


def _representable(values: npt.NDArray[np.float32], storage: str) -> npt.NDArray[np.bool_] | None:
    """Which elements are exact values of ``storage``; None for a storage without a check."""
    if storage == "f16":
        with np.errstate(over="ignore", invalid="ignore"):
            narrowed = values.astype(np.float16).astype(np.float32)
        same: npt.NDArray[np.bool_] = narrowed.view(np.uint32) == values.view(np.uint32)
        return same | np.isnan(values)
    if storage == "bf16":
        low_clear: npt.NDArray[np.bool_] = (values.view(np.uint32) & 0xFFFF) == 0
        return low_clear | np.isnan(values)
    return None


def representability_problem(actual: npt.NDArray[np.float32], storage: str | None) -> str | None:
    """Why ``actual`` cannot be the output of a candidate that stored it as ``storage``."""
    if storage is None:
        return None
    exact = _representable(actual, storage)
    if exact is None or bool(exact.all()):
        return None
    missing = int(exact.size - np.count_nonzero(exact))
    first = int(np.argmin(exact))
    return (
        f"result.actual: {missing} of {actual.size} values are not representable in {storage}, "
        f"the executed output storage (first at flat index {first}: {actual[first]!r})"
    )


def is_self_test(candidate: str, reference: str) -> tuple[bool, str | None]:
    """(whether the pair is one backend, a note when identity could not be checked)."""
    if candidate == reference:
        return True, None
    try:
        return same_backend(candidate, reference), None
    except ConfigError as error:  # a name this machine does not know
        return False, (
            "the backend pair cannot be checked for a self-test here (the report's coverage "
            f"is taken as written): {str(error).splitlines()[0]}"
        )


def claimed_fields(document: ReportDocument) -> list[tuple[str, str]]:
    """(field, value) of every claimed field: provenance replay cannot verify."""
    environment = document.environment
    claims = [
        ("environment.platform", environment.platform),
        ("environment.python", environment.python),
        ("environment.diffcheck_version", environment.diffcheck_version),
        ("environment.reference_detail", environment.reference_detail),
        ("environment.candidate_detail", environment.candidate_detail),
        ("execution_path", document.execution_path),
        ("configured_precision.kernel_entrypoint", document.configured_precision.kernel_entrypoint),
    ]
    if document.executed_precision is not None:
        claims.append(
            ("executed_precision.kernel_entrypoint", document.executed_precision.kernel_entrypoint)
        )
    claims += [
        ("started_at", document.started_at),
        ("finished_at", str(document.finished_at)),
        ("execution_elapsed_ms", str(document.execution_elapsed_ms)),
    ]
    return claims + claimed_identity(document)
