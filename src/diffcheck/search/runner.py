"""The search loop: per function, a seeded Hypothesis search whose failure is a verdict.

For each function the property draws an :class:`~diffcheck.search.recipes.Example`, runs
it on both backends through :func:`~diffcheck.values.compare_call` and fails when the
verdict fails with a (kind, dtype) not found yet. Hypothesis then shrinks that failure to
a minimal example, holding the kind and dtype fixed (an example that fails another way
counts as passing while it shrinks). The function is searched again with that key excluded,
so one function yields one finding per (kind, dtype), never one per example: a missing
function is one finding.

Imported by :func:`diffcheck.search.search_api` after it has checked that Hypothesis is
installed.
"""

from __future__ import annotations

import re
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._fuzz_search import _without_local_constants
from ..adapters.api_inputs import ApiCase
from ..values.call import Outcome, call_on, compare_call, host_inputs
from ..values.model import ValueVerdict
from .arrays import Space
from .recipes import Example, Recipe, call_for

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = ["Finding", "FunctionResult", "finding_key", "judge", "outputs", "search_function"]

#: At most this many findings (distinct kind and dtype) per function: each costs a search.
MAX_FINDINGS_PER_FUNCTION = 6


@dataclass(frozen=True)
class Finding:
    """One divergence, shrunk: the minimal example, its verdict and both outputs."""

    function: str
    kind: str
    dtype: str
    example: Example
    verdict: ValueVerdict
    reference: Outcome
    candidate: Outcome


def api_case(finding: Finding) -> ApiCase:
    """The finding's call as a known divergence's input class reads it."""
    example = finding.example
    return ApiCase(
        args=example.args,
        kwargs=example.kwargs,
        positional=example.positional,
        reference=finding.reference.value,
        candidate=finding.candidate.value,
    )


@dataclass
class FunctionResult:
    """What the search of one function ran and found."""

    function: str
    examples: int = 0
    shrink_runs: int = 0
    findings: list[Finding] = field(default_factory=list)
    #: The first failure of the search itself (a strategy or comparison bug), if any.
    error: str | None = None
    seconds: float = 0.0


def judge(function: str, example: Example, reference: Adapter, candidate: Adapter) -> ValueVerdict:
    """The value model's verdict (with blame) of ``example`` on both backends."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # NaN and infinities are the inputs under test: their arithmetic warns by design.
        warnings.simplefilter("ignore", RuntimeWarning)
        return _judge(function, example, reference, candidate)


def _judge(function: str, example: Example, reference: Adapter, candidate: Adapter) -> ValueVerdict:
    return compare_call(
        call_for(function, example),
        example.args,
        reference,
        candidate,
        function=function,
        kwargs=dict(example.kwargs),
    )


def outputs(
    function: str, example: Example, reference: Adapter, candidate: Adapter
) -> tuple[Outcome, Outcome]:
    """Both sides' results of ``example`` (for the bundle), brought home in their dtypes."""
    fn = call_for(function, example)
    hosts = host_inputs(example.args)
    return (
        call_on(reference, fn, hosts, dict(example.kwargs)),
        call_on(candidate, fn, hosts, dict(example.kwargs)),
    )


class _Found(Exception):
    """Raised by the property for the failure being shrunk."""

    def __init__(self, example: Example, verdict: ValueVerdict) -> None:
        super().__init__(verdict.reason)
        self.example, self.verdict = example, verdict


@dataclass
class _Round:
    function: str
    reference: Adapter
    candidate: Adapter
    excluded: set[tuple[str, str]]
    deadline: float
    result: FunctionResult
    target: tuple[str, str] | None = None

    def run(self, example: Example) -> None:
        from hypothesis import assume

        if self.target is None:
            assume(time.monotonic() < self.deadline or not self.result.examples)
            self.result.examples += 1
        else:
            self.result.shrink_runs += 1
        try:
            verdict = judge(self.function, example, self.reference, self.candidate)
        except Exception as error:  # the harness failed, not a backend: say so, go on
            self.result.error = self.result.error or f"{type(error).__name__}: {error}"
            return
        if verdict.passed or verdict.kind is None:
            return
        key = finding_key(verdict, example)
        if key in self.excluded:
            return
        if self.target is None:
            self.target = key
        if key == self.target:
            raise _Found(example, verdict)


_DTYPE_WORDS = re.compile(r"\b(bool|u?int(8|16|32|64)|float(16|32|64)|bfloat16|complex(64|128))\b")


def finding_key(verdict: ValueVerdict, example: Example) -> tuple[str, str]:
    """What makes two failures one finding: the kind, and the input dtypes.

    A call that raises is one finding per message (dtype names blanked), not per dtype: an
    unsupported keyword raises alike for every dtype, and a dtype the backend refuses
    says so in its message.
    """
    kind = verdict.kind or ""
    if kind == "missing":  # what is missing: the function, or a dtype name it was given
        return kind, _missing_name(verdict.reason)
    if kind == "raises":
        first = (verdict.reason or "").split("\n", 1)[0]
        return kind, _DTYPE_WORDS.sub("<dtype>", first)[:160]
    return kind, example.input_dtypes()


def _missing_name(reason: str | None) -> str:
    found = re.search(r"has no attribute '([^']+)'", reason or "")
    return found.group(1) if found else (reason or "")[:160]


def _lacks_function(function: str, verdict: ValueVerdict) -> bool:
    """Whether a ``missing`` verdict is about the function itself (nothing more to find)."""
    return _missing_name(verdict.reason) == function.rsplit(".", 1)[-1]


def _seed(seed: int, function: str) -> int:
    """One reproducible stream per function: the search seed mixed with the name."""
    return (seed * 1_000_003 + zlib.crc32(function.encode())) % (2**64)


def search_function(
    function: str,
    recipe: Recipe,
    space: Space,
    reference: Adapter,
    candidate: Adapter,
    *,
    examples: int,
    seed: int,
    budget_s: float = 60.0,
) -> FunctionResult:
    """Search one function; return its findings, each shrunk to a minimal example."""
    started = time.monotonic()
    result = FunctionResult(function)
    excluded: set[tuple[str, str]] = set()
    strategy = recipe.draw(space)
    for _ in range(MAX_FINDINGS_PER_FUNCTION):
        state = _Round(function, reference, candidate, excluded, started + budget_s, result)
        property_ = _property(state, strategy, _seed(seed, function) + len(excluded), examples)
        try:
            with _without_local_constants():
                property_()
        except _Found as found:
            result.findings.append(_finding(function, found, reference, candidate))
            excluded.add(finding_key(found.verdict, found.example))
            lacks = found.verdict.kind == "missing" and _lacks_function(function, found.verdict)
            if lacks or time.monotonic() > started + budget_s:
                break  # a function the candidate lacks has nothing more to find
            continue
        except Exception as error:  # Hypothesis' own refusal (flaky backend, bad draw)
            flaky = _found_in(error)
            text = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            if flaky is None:
                result.error = result.error or text
                break
            # The backend failed, then passed the same example: a finding all the same
            # (nondeterminism is a divergence), kept unshrunk beyond where it flipped.
            result.error = result.error or f"the failure did not always reproduce: {text}"
            result.findings.append(_finding(function, flaky, reference, candidate))
            excluded.add(finding_key(flaky.verdict, flaky.example))
            continue
        break
    result.seconds = time.monotonic() - started
    return result


def _property(state: _Round, strategy: Any, seed: int, examples: int) -> Callable[[], None]:
    """The seeded Hypothesis test of one round (no database, no files, quiet)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed

    @hypothesis_seed(seed)
    @settings(
        database=None,  # nothing written, nothing replayed from disk
        deadline=None,
        max_examples=examples,
        phases=(Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(strategy)
    def property_(example: Example) -> None:
        state.run(example)

    result: Callable[[], None] = property_
    return result


def _found_in(error: BaseException) -> _Found | None:
    """The failure inside Hypothesis' report of a flaky one (an exception group), if any."""
    for inner in getattr(error, "exceptions", ()):
        if isinstance(inner, _Found):
            return inner
        found = _found_in(inner)
        if found is not None:
            return found
    return None


def _finding(function: str, found: _Found, reference: Adapter, candidate: Adapter) -> Finding:
    ref, cand = outputs(function, found.example, reference, candidate)
    return Finding(
        function,
        found.verdict.kind or "",
        found.example.input_dtypes(),
        found.example,
        found.verdict,
        ref,
        cand,
    )


ProgressFn = Callable[[FunctionResult, int, int], None]
