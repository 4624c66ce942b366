"""The Hypothesis side of ``diffcheck fuzz``: the property, its state, and a seeded search.

Imported only by :func:`diffcheck.fuzz.fuzz`, after it has checked that Hypothesis is
installed; Hypothesis itself is imported inside the functions that use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..adapters import Adapter
from ..config import Check
from ..ops.space import Drawn, OpSpace
from ..runner import Outcome, bind, execute_check

__all__ = ["Failed", "Search", "run_search"]


class Failed(Exception):
    """Raised by the property for a failing (or not_run) example; Hypothesis shrinks on it."""

    def __init__(self, check: Check, outcome: Outcome) -> None:
        super().__init__(outcome.reason)
        self.check, self.outcome = check, outcome


@dataclass
class Search:
    """The property's state across the examples of one fuzz run."""

    base: Check
    space: OpSpace
    candidate: Adapter
    reference: Adapter
    examples: int
    deadline_s: float | None = None
    progress: Callable[[str], None] = lambda _: None
    started: float = field(default_factory=time.monotonic)
    #: The examples run before the first failure, in order.
    history: list[Drawn] = field(default_factory=list)
    #: Every check run so far, by (params, seed): None when it passed.
    seen: dict[tuple[Any, int], Failed | None] = field(default_factory=dict)
    shrink_runs: int = 0
    first: Failed | None = None
    stopped: Failed | None = None

    def check_of(self, drawn: Drawn) -> Check:
        values, seed = drawn
        params = self.base.op.params(**values)
        self.base.op.validate(params)
        return dataclasses.replace(self.base, params=params, seed=seed)

    def run(self, drawn: Drawn) -> None:
        """The property: one check per example; raise :class:`Failed` unless it passed."""
        if self.stopped is not None:
            # The candidate cannot run: every further example "fails" at once with the same
            # reason, so nothing more executes and shrinking this costs no checks.
            failure: Failed | None = Failed(self.stopped.check, self.stopped.outcome)
        else:
            failure = self._example(drawn)
        if failure is not None:
            raise failure

    def _example(self, drawn: Drawn) -> Failed | None:
        from hypothesis import assume

        values, seed = drawn
        key = (tuple(sorted(values.items())), seed)
        if key in self.seen:  # different draws can give the same check: run each once
            return self.seen[key]
        if self.first is None:
            elapsed = time.monotonic() - self.started
            out_of_time = self.deadline_s is not None and elapsed > self.deadline_s
            assume(not (out_of_time and self.history))  # no new examples past the deadline
            self.history.append(drawn)
        else:
            self.shrink_runs += 1
        check = self.check_of(drawn)
        outcome = execute_check(check, candidate=self.candidate, reference=self.reference)
        if outcome.status != "not_run":
            bind(outcome, check)
        if outcome.status == "passed":
            self.seen[key] = None
            self._tick()
            return None
        # Keep the verdict, not the output arrays: shrinking may see hundreds of failures.
        kept = Outcome(
            outcome.status, outcome.reason, verdict=outcome.verdict, details=outcome.details
        )
        failure = self.seen[key] = Failed(check, kept)
        if outcome.status == "not_run":
            self.stopped = failure
        elif self.first is None:
            self.first = failure
            self.progress(
                f"fuzz: example {len(self.history)} failed "
                f"({self.space.shape_text(check.params.model_dump())} seed={check.seed}); "
                "shrinking"
            )
        return failure

    def _tick(self) -> None:
        done = len(self.history)
        if self.first is None and done in {self.examples * quarter // 4 for quarter in (1, 2, 3)}:
            self.progress(f"fuzz: {done}/{self.examples} examples passed")


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Keep Hypothesis from mixing constants of the loaded local modules into its draws.

    Recent Hypothesis versions now and then draw an integer found in the source of a "local"
    module (anything outside site-packages and the stdlib, which includes an editable
    diffcheck and its adapters), caching them under ``.hypothesis/constants`` in the working
    directory. Which modules are loaded differs between the CLI, pytest and a notebook, so
    the same seed would draw different shapes, and the cache would be written into the
    user's repository. The kernels' edges are drawn on purpose here, so the pool is emptied
    for the duration of the run (Hypothesis has no public switch for it).
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a Hypothesis without the feature
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover - renamed upstream
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()  # drop pools computed before, with or without local constants
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


def run_search(search: Search, seed: int, budget: int) -> None:
    """Run the seeded Hypothesis search; raises the minimal :class:`Failed` on a failure."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed

    @hypothesis_seed(seed)
    @settings(
        database=None,  # no example database: nothing written, nothing replayed from disk
        derandomize=False,  # the seed decides; derandomize would hash the function instead
        deadline=None,
        max_examples=search.examples,
        phases=(Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),  # slow backends and big shapes are the point
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(search.space.strategy(budget))
    def property_(drawn: Drawn) -> None:
        search.run(drawn)

    with _without_local_constants():
        property_()
