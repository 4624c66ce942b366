"""``findings.json``: every finding of an API search, what was tried and skipped, and why.

The document is a pydantic model (``extra="forbid"``, a literal ``schema_version``) whose
JSON Schema is checked in as ``reports/schema/findings-v2.json``
(``python -m diffcheck.search.schema reports/schema`` regenerates it; a test fails on
drift).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .bundle import BackendIdentity

__all__ = [
    "FINDINGS_SCHEMA_FILE",
    "FINDINGS_SCHEMA_VERSION",
    "DeclaredDivergence",
    "FindingEntry",
    "FindingsDocument",
    "FunctionRun",
    "Isolation",
    "SkippedFunction",
    "findings_schema",
    "findings_schema_text",
]

FINDINGS_SCHEMA_VERSION = 2
FINDINGS_SCHEMA_FILE = f"findings-v{FINDINGS_SCHEMA_VERSION}.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DeclaredDivergence(_Strict):
    """A known API divergence the candidate's adapter declares."""

    function: str
    kind: str
    condition: str = Field(description="the input dtypes it applies to, in words")
    reason: str
    upstream: str = Field(description="where it is tracked upstream, or 'none known'")


class FindingEntry(_Strict):
    """One finding: a function that diverges, how, on which dtype, and who is wrong."""

    function: str = Field(description="the standard's name, e.g. linalg.vecdot")
    kind: str = Field(
        description="missing, raises, dtype, shape, nan, inf, signed-zero, value; crash (the "
        "call killed its worker process) or hang (it outlived the call timeout)"
    )
    dtype: str = Field(description="the input dtypes of the minimal example, comma-separated")
    dtypes: list[str] = Field(
        description="every input dtype the same minimal example, cast exactly, fails the same "
        "way in: one root cause, one finding"
    )
    blame: str = Field(description="candidate, reference, both or undecided")
    blame_evidence: str = Field(description="special-case, oracle, standard-rule, vote, none")
    blame_why: str
    reason: str = Field(description="the verdict's one-line reason")
    bound: str = Field(description="the error bound and its provenance")
    bundle: str = Field(description="the replay bundle, relative to findings.json")
    example: str = Field(description="the minimal example's inputs, in short")
    known: DeclaredDivergence | None = Field(
        None, description="the declared known divergence that matches it, if any"
    )


class FunctionRun(_Strict):
    """How the search of one function went."""

    function: str
    examples: int = Field(description="distinct examples drawn (before shrinking)")
    shrink_runs: int = Field(description="examples run while shrinking findings")
    findings: int
    seconds: float
    stopped_by_time_budget: bool = Field(
        description="the explicit time budget cut this function's search short (see cut)"
    )
    cut: str | None = Field(
        None, description="where the time budget cut the search: drawing or shrinking"
    )
    error: str | None = Field(None, description="a failure of the search itself, if any")
    coverage: dict[str, int] = Field(
        description="distinct input values drawn per class (ordinary, subnormal, zero, inf, "
        "nan, integer, bool), shrink runs excluded"
    )


class SkippedFunction(_Strict):
    """A function of the standard that was not searched, and why."""

    function: str
    reason: str


class Isolation(_Strict):
    """Where the calls ran: a warm worker process (replaced after a crash or hang) or here."""

    mode: Literal["worker", "in-process"]
    call_timeout_s: float | None = Field(
        description="seconds one example may take in the worker before it is a hang"
    )
    workers_started: int = Field(description="the first worker, then one per crash or hang")


class Counts(_Strict):
    findings: int
    known: int
    by_kind: dict[str, int]
    by_blame: dict[str, int]


class FindingsDocument(_Strict):
    """The findings of ``diffcheck fuzz --api``: a search over the standard's functions."""

    schema_version: Literal[2] = 2
    kind: Literal["diffcheck-api-search"] = "diffcheck-api-search"
    reference: BackendIdentity
    candidate: BackendIdentity
    seed: int
    self_test: bool = Field(
        description="the candidate is the reference's own backend (allowed explicitly): "
        "evidence about the search, never about a backend"
    )
    examples_per_function: int
    time_budget_s: float | None = Field(
        description="seconds per function after which no new example is drawn (null: none, "
        "so the same seed draws exactly the same examples)"
    )
    isolation: Isolation
    complete: bool = Field(
        description="every function was searched; false when the run was interrupted "
        "(--resume continues it)"
    )
    resumed_functions: int = Field(
        description="functions taken from an interrupted run's journal (--resume)"
    )
    time_budget_cuts: list[str] = Field(
        description="the functions the explicit time budget cut short (empty without one)"
    )
    dtypes: list[str] = Field(description="the dtypes both backends hold: the ones drawn")
    dtypes_not_shared: list[str] = Field(description="standard dtypes one side lacks")
    functions_tried: list[FunctionRun]
    skipped: list[SkippedFunction]
    findings: list[FindingEntry]
    counts: Counts
    known: list[DeclaredDivergence] = Field(
        description="declared known divergences that matched a finding"
    )
    no_longer_reproduces: list[DeclaredDivergence] = Field(
        description="declared known divergences of searched functions that no finding matched"
    )
    started: str = Field(description="UTC start time, ISO 8601")
    duration_s: float


def findings_schema() -> dict[str, Any]:
    """The JSON Schema of ``findings.json``."""
    schema = FindingsDocument.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://diffcheck.dev/schema/findings/v{FINDINGS_SCHEMA_VERSION}.json"
    return schema


def findings_schema_text() -> str:
    """The schema as the checked-in file holds it."""
    return json.dumps(findings_schema(), indent=2, sort_keys=True) + "\n"
