"""The search loop: per function, a seeded Hypothesis search whose failure is a verdict.

For each function the property draws an :class:`~diffcheck.search.recipes.Example`, has
it judged on both backends (by :class:`~diffcheck.search.isolation.Calls`: in a worker
process or in this one) and fails when the verdict fails with a (kind, dtype) not found
yet. Hypothesis then shrinks that failure to a minimal example, holding the kind and dtype
fixed (an example that fails another way counts as passing while it shrinks), and an
elementwise function's to its failing element alone where that fails the same way
(:mod:`diffcheck.search.element`); the minimal example, cast exactly into the other dtypes of its family, groups every dtype that fails
the same way into the one finding. The function is searched again with those keys
excluded, so one cause is one finding, never one per example or per dtype. A call that
crashes or hangs its worker is a finding at once (unshrunk) and the search goes on.

An explicit time budget stops drawing, shrinking and a call in flight through
:class:`_OutOfTime` (a BaseException: Hypothesis neither shrinks it nor calls it flaky);
without one every example is drawn, so a seed gives the same findings under any load.

Imported by :func:`diffcheck.search.search_api` after it has checked that Hypothesis is
installed.
"""

from __future__ import annotations

import re
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..adapters.api_inputs import ApiCase
from ..fuzz.search import _without_local_constants
from ..values.call import Outcome, call_on, compare_call, host_inputs
from ..values.model import Blame, Bound, Side, ValueVerdict
from .arrays import Space
from .coverage import Coverage
from .dtype_rows import dtype_rows, keyword_rows, keywords_of, row_key
from .element import to_element
from .isolation import WIRE_FAILURE, CallFailure, Calls
from .recipes import Example, Recipe, call_for
from .shrink import shrink_limits
from .stop import StopRequested, stop_requested

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = [
    "Finding",
    "FunctionResult",
    "finding_key",
    "judge",
    "outputs",
    "search_function",
]

#: At most this many findings (distinct kind and dtype) per function: each costs a search.
MAX_FINDINGS_PER_FUNCTION = 6


@dataclass(frozen=True)
class Finding:
    """One divergence, shrunk: the minimal example, its verdict and both outputs.

    ``kind`` is a verdict's failure kind, or ``crash`` / ``hang`` when the call killed its
    worker or outlived the call timeout (those are kept as drawn: each shrink step would
    cost a worker restart or a whole timeout). ``dtypes`` lists every input dtype the same
    minimal example (cast) fails the same way in: one root cause, one finding.
    """

    function: str
    kind: str
    dtype: str
    example: Example
    verdict: ValueVerdict
    reference: Outcome
    candidate: Outcome
    dtypes: tuple[str, ...] = ()
    #: A dtype joined with its own minimal example (found in that dtype, not this one's
    #: ``example`` cast): ``(dtype, example)`` pairs, so every listed dtype is shown failing.
    own_examples: tuple[tuple[str, Example], ...] = ()


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
    #: Why the search of this function stopped short (the time budget), if it did.
    cut: str | None = None
    #: Set when the budget ran out while a call was in flight (that call was stopped).
    cut_in_call: str | None = None
    coverage: Coverage = field(default_factory=Coverage)
    #: Where a limit of Hypothesis' stopped a shrink (the example may not be minimal).
    shrink_cut: str | None = None
    #: The first example drawn, and the input dtypes and keywords of every drawn example
    #: (for :mod:`~diffcheck.search.dtype_rows`).
    first: Example | None = None
    drawn_inputs: set[str] = field(default_factory=set)


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


class _OutOfTime(BaseException):
    """The explicit time budget ran out: a BaseException, so Hypothesis neither catches it
    as a failure nor shrinks it, and no example counts as passing or failing because of the
    clock (a clock-dependent verdict is what made Hypothesis report a flaky failure)."""


@dataclass
class _Round:
    function: str
    calls: Calls
    excluded: set[tuple[str, str]]
    deadline: float | None
    result: FunctionResult
    target: tuple[str, str] | None = None
    #: The smallest failing example of the target so far (kept when the budget cuts a shrink).
    best: _Found | None = None

    def run(self, example: Example) -> None:
        if stop_requested():
            raise StopRequested
        late = self.deadline is not None and time.monotonic() > self.deadline
        if late and (self.target is not None or self.result.examples):
            raise _OutOfTime  # at least one example per function, however short the budget
        if self.target is None:
            self.result.examples += 1
            self.result.coverage.add(example.args)
            self.result.first = self.result.first or example
            self.result.drawn_inputs.add(row_key(example))
            self.result.drawn_inputs |= keywords_of(example)
        else:
            self.result.shrink_runs += 1
        try:
            answer = self.calls.judge(self.function, example, self.deadline)
        except Exception as error:  # the harness failed, not a backend: say so, go on
            self.result.error = self.result.error or f"{type(error).__name__}: {error}"
            return
        if isinstance(answer, CallFailure) and answer.kind == "cut":
            self.result.cut_in_call = answer.reason
            raise _OutOfTime
        if isinstance(answer, CallFailure):
            self._call_failed(example, answer)
            return
        verdict = answer
        if verdict.passed or verdict.kind is None:
            return
        key = finding_key(verdict, example)
        if key in self.excluded:
            return
        if self.target is None:
            self.target = key
        if key == self.target:
            self.best = _Found(example, verdict)
            raise self.best

    def _call_failed(self, example: Example, failure: CallFailure) -> None:
        """A crash or hang: a finding at once, unshrunk; the search goes on past it.

        Also while another failure is being shrunk: to that shrink it is just not the same
        failure, but the crash or hang itself is reported (it cost a worker).
        """
        key = (failure.kind, example.input_dtypes())
        if key in self.excluded:
            return
        self.excluded.add(key)
        self.result.findings.append(_failure_finding(self.function, example, failure, self.calls))


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
    calls: Calls,
    *,
    examples: int,
    seed: int,
    budget_s: float | None = None,
) -> FunctionResult:
    """Search one function; return its findings, each shrunk to a minimal example.

    Without ``budget_s`` every one of ``examples`` is drawn and every finding shrunk, so a
    seed gives the same findings however loaded the machine. With it, no example is drawn
    and no shrink step run past ``budget_s`` seconds, and the result says where it cut.
    """
    started = time.monotonic()
    deadline = None if budget_s is None else started + budget_s
    result = FunctionResult(function)
    excluded: set[tuple[str, str]] = set()
    strategy = recipe.draw(space)
    lacking = False
    for _ in range(MAX_FINDINGS_PER_FUNCTION):
        state = _Round(function, calls, excluded, deadline, result)
        property_ = _property(state, strategy, _seed(seed, function) + len(excluded), examples)
        try:
            with _without_local_constants(), shrink_limits(deadline) as shrink_cuts:
                property_()
        except _Found as found:
            _note_shrink_cuts(result, shrink_cuts)
            _found(function, found, state, space, excluded)
            if found.verdict.kind == "missing" and _lacks_function(function, found.verdict):
                lacking = True
                break  # a function the candidate lacks has nothing more to find
            continue
        except _OutOfTime:
            if state.best is not None:  # cut while shrinking: keep the smallest seen so far
                _found(function, state.best, state, space, excluded)
                result.cut = f"time budget {budget_s:g} s ran out while shrinking a finding"
            else:
                result.cut = (
                    f"time budget {budget_s:g} s ran out after {result.examples} of "
                    f"{examples} examples"
                )
            if result.cut_in_call is not None:
                result.cut += f"; {result.cut_in_call}, stopped unjudged"
            break
        except Exception as error:  # Hypothesis' own refusal (flaky backend, bad draw)
            flaky = _found_in(error)
            text = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            if flaky is None:
                result.error = result.error or text
                break
            # The backend failed, then passed the same example: a finding all the same
            # (nondeterminism is a divergence), kept unshrunk beyond where it flipped.
            result.error = result.error or f"the failure did not always reproduce: {text}"
            _found(function, flaky, state, space, excluded)
            continue
        break
    if recipe.sweeps is not None and not lacking and result.cut is None:
        _sweep(
            function, recipe.sweeps(space, _seed(seed, function)), space, calls, result, excluded
        )
    if recipe.dtype_rows and not lacking and result.cut is None:  # each dtype once at least
        rows = dtype_rows(
            result.first, result.drawn_inputs, space.of(recipe.category), recipe.dtype_keyword
        )
        rows += keyword_rows(result.first, result.drawn_inputs, recipe.keyword_values)
        _sweep(function, rows, space, calls, result, excluded)
    result.seconds = time.monotonic() - started
    return result


def _note_shrink_cuts(result: FunctionResult, cuts: list[str]) -> None:
    """Record each shrink a limit stopped (once per kind of text)."""
    for cut in cuts:
        if cut not in (result.shrink_cut or ""):
            result.shrink_cut = f"{result.shrink_cut}; {cut}" if result.shrink_cut else cut


def _sweep(
    function: str,
    examples: list[Example],
    space: Space,
    calls: Calls,
    result: FunctionResult,
    excluded: set[tuple[str, str]],
) -> None:
    """Judge the sweep rows (:func:`~diffcheck.search.recipes.sweeps_for`) after the search.

    They count as drawn examples. A row that fails in a way not found yet is a finding,
    reduced (as every finding of an elementwise function) to its failing element when that
    element alone fails the same way.
    """
    for example in examples:
        if stop_requested():
            raise StopRequested
        if len(result.findings) >= MAX_FINDINGS_PER_FUNCTION:
            return
        state = _Round(function, calls, excluded, None, result)
        try:
            state.run(example)
        except _Found as found:
            _found(function, found, state, space, excluded)


def _found(
    function: str, found: _Found, state: _Round, space: Space, excluded: set[tuple[str, str]]
) -> None:
    """Record a shrunk failure, grouped with every dtype the same example fails alike in."""
    found = _one_element(function, found, state)
    key = finding_key(found.verdict, found.example)
    dtypes = _same_cause_dtypes(function, found, state.calls, space, excluded, state.deadline)
    excluded.add(key)
    excluded.update((found.verdict.kind or "", d) for d in dtypes)
    if not _joined_earlier(function, found, state, dtypes):
        state.result.findings.append(_finding(function, found, state.calls, dtypes))


def _one_element(function: str, found: _Found, state: _Round) -> _Found:
    """An elementwise function's failure cut to its failing element where that element
    alone fails the same way (:mod:`diffcheck.search.element`); each try counts as a
    shrink run, and a try that crashes or hangs is a finding as in a shrink. Not past the
    time budget: a cut search keeps the example it has."""
    if state.deadline is not None and time.monotonic() > state.deadline:
        return found

    def judge(example: Example) -> ValueVerdict | CallFailure:
        state.result.shrink_runs += 1
        answer = state.calls.judge(function, example, state.deadline)
        if isinstance(answer, CallFailure) and answer.kind != "cut":
            state._call_failed(example, answer)  # a crash or hang met here is a finding too
        return answer

    smaller = to_element(function, found.example, found.verdict, judge)
    return found if smaller is None else _Found(*smaller)


def _joined_earlier(function: str, found: _Found, state: _Round, dtypes: tuple[str, ...]) -> bool:
    """Add ``dtypes`` to an earlier finding of the same cause, if there is one.

    The cause is the same when this minimal example, cast exactly into the earlier
    finding's dtype, fails there with the same kind: grouping then does not depend on which
    dtype the search happened to find first (a float64 example seldom casts exactly into
    float32, while the float32 one always casts into float64).
    """
    kind, own = found.verdict.kind or "", found.example.input_dtypes()
    if kind in ("missing", "raises") or "," in own or found.example.dtypes:
        return False
    for index, earlier in enumerate(state.result.findings):
        if earlier.kind != kind or "," in earlier.dtype or earlier.dtype == own:
            continue
        if "bfloat16" in (own, earlier.dtype) or _family(earlier.dtype) != _family(own):
            continue
        cast = _cast(found.example, earlier.dtype)
        if cast is None:
            continue
        try:
            answer = state.calls.judge(function, cast, state.deadline)
        except Exception:  # the harness failing on a cast example: not joined
            continue
        if isinstance(answer, ValueVerdict) and not answer.passed and answer.kind == kind:
            joined = tuple(dict.fromkeys((*(earlier.dtypes or (earlier.dtype,)), *dtypes)))
            # Each dtype joined keeps the example that failed in it: the earlier finding's
            # own example may pass there (cos(1.0) is right in float32).
            added = [(d, found.example if d == own else _cast(found.example, d)) for d in dtypes]
            mine = tuple((d, e) for d, e in added if e is not None and d not in earlier.dtypes)
            state.result.findings[index] = replace(
                earlier, dtypes=joined, own_examples=(*earlier.own_examples, *mine)
            )
            return True
    return False


_KIND_FAMILIES = ("b", "iu", "f", "c")


def _family(dtype: str) -> str:
    kind = "f" if dtype == "bfloat16" else np.dtype(dtype).kind
    return next(f for f in _KIND_FAMILIES if kind in f)


def _same_cause_dtypes(
    function: str,
    found: _Found,
    calls: Calls,
    space: Space,
    excluded: set[tuple[str, str]],
    deadline: float | None,
) -> tuple[str, ...]:
    """The input dtypes in which the minimal example, cast exactly, fails the same way.

    Only for an example whose array inputs share one dtype: each other dtype of the same
    family (integers, floats, complex) both sides hold is tried with the inputs cast to it
    when the cast keeps every value; it joins the finding when the verdict has the same
    kind. ``missing`` and ``raises`` findings are already one per message.
    """
    example, kind = found.example, found.verdict.kind or ""
    own = example.input_dtypes()
    arrays = [a for a in example.args if isinstance(a, np.ndarray)]
    if kind in ("missing", "raises") or not arrays or example.dtypes or "," in own:
        return (own,)
    group = [own]
    for dtype in space.dtypes:
        if dtype == own or dtype == "bfloat16" or _family(dtype) != _family(own):
            continue
        if (kind, dtype) in excluded:
            continue
        cast = _cast(example, dtype)
        if cast is None:
            continue
        try:
            answer = calls.judge(function, cast, deadline)
        except Exception:  # the harness failing on a cast example: not grouped
            continue
        if isinstance(answer, ValueVerdict) and not answer.passed and answer.kind == kind:
            group.append(dtype)
    return tuple(group)


def _cast(example: Example, dtype: str) -> Example | None:
    """``example`` with its arrays in ``dtype``, or None when a value would change."""
    args: list[Any] = []
    for arg in example.args:
        if isinstance(arg, np.ndarray):
            with np.errstate(all="ignore"):
                moved = arg.astype(dtype)
                back = moved.astype(arg.dtype)
            same = np.array_equal(back, arg, equal_nan=arg.dtype.kind in "fc")
            if not same:
                return None
            args.append(moved)
        else:
            args.append(arg)
    return replace(example, args=tuple(args))


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


def _finding(function: str, found: _Found, calls: Calls, dtypes: tuple[str, ...]) -> Finding:
    answer = calls.outputs(function, found.example)
    if isinstance(answer, CallFailure):  # judged once, then crashed or hung: say so
        ref = Outcome(raised=f"not recorded: {answer.kind}: {answer.reason}")
        cand = ref
    else:
        ref, cand = answer
    return Finding(
        function,
        found.verdict.kind or "",
        found.example.input_dtypes(),
        found.example,
        found.verdict,
        ref,
        cand,
        dtypes,
    )


def failure_verdict(failure: CallFailure, reference: CallFailure | None) -> ValueVerdict:
    """The verdict of a call that crashed or hung, given how the reference alone fared
    (None: it returned). Replay re-derives a crash or hang bundle's fields with it."""
    if reference is not None:
        side: Side = "undecided"
        why = f"the reference alone also failed ({reference.kind}): {reference.reason}"
    elif failure.reason.startswith(WIRE_FAILURE):
        # the call returned, but its result could not travel home: a fault of no side
        side = "undecided"
        why = "the call returned in the worker; no rule of the standard covers carrying it"
    else:
        side = "candidate"
        why = (
            "a call that kills or stalls the process conforms to no rule of the standard; "
            "the reference alone returned on the same inputs"
        )
    what = "crashed" if failure.kind == "crash" else "hung"
    return ValueVerdict(
        status="failed",
        kind=None,
        reason=f"the call {what}: {failure.reason}",
        bound=Bound("exact", None, None, f"no result to compare: the call {what}"),
        first=None,
        worst=None,
        blame=Blame(side, why, "standard-rule" if side == "candidate" else "none"),
    )


def _failure_finding(
    function: str, example: Example, failure: CallFailure, calls: Calls
) -> Finding:
    """A crash or hang as a finding: the reference's output alone, the candidate's fate."""
    reference = calls.outputs(function, example, candidate=False)
    if isinstance(reference, CallFailure):
        ref = Outcome(raised=f"{reference.kind}: {reference.reason}")
        verdict = failure_verdict(failure, reference)
    else:
        ref = reference[0]
        verdict = failure_verdict(failure, None)
    dtype = example.input_dtypes()
    cand = Outcome(raised=f"{failure.kind}: {failure.reason}")
    return Finding(function, failure.kind, dtype, example, verdict, ref, cand, (dtype,))


ProgressFn = Callable[[FunctionResult, int, int], None]
