"""One API search run: function by function, each journaled as soon as it is done.

:class:`Session` walks the chosen functions in order, skips those the journal of an
interrupted run already holds (``--resume``) and those that cannot be searched (with the
reason), searches the rest (:func:`~diffcheck.search.runner.search_function`), marks each
finding the candidate declares as a known divergence, and hands every function's record,
entries, page fragments and bundles to the :class:`~diffcheck.search.output.Journal`
before the next function starts. :meth:`Session.document` assembles ``findings.json`` from
the journaled records, in the functions' order, whether they ran now or before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..values.call import resolve_function
from .arrays import CATEGORIES, Space
from .findings import (
    Counts,
    DeclaredDivergence,
    FindingEntry,
    FindingsDocument,
    FunctionRun,
    Isolation,
    SkippedFunction,
)
from .output import Done, Journal
from .runner import Finding, FunctionResult
from .stop import StopRequested, stop_requested

if TYPE_CHECKING:
    from ..adapters import Adapter, KnownApiDivergence
    from .isolation import Calls

__all__ = ["Session"]


#: Functions of versions after 2024.12 that are not drawn, each with the reason.
NOT_DRAWN: Final = {
    "broadcast_shapes": "takes and returns shapes, not arrays: outside the value model",
    "linalg.eig": "eigenvalues come in no specified order and eigenvectors up to scale: "
    "no unique value to compare",
    "linalg.eigvals": "eigenvalues come in no specified order: no unique value to compare",
}


def _recipes() -> dict[str, Any]:
    """Every function's recipe: the table's, and those of versions after 2024.12."""
    from .coupled import newer_recipes
    from .table import recipes

    return {**newer_recipes(), **recipes()}


def _has(adapter: Adapter, function: str) -> bool:
    try:
        resolve_function(adapter.namespace(), function)
    except AttributeError:
        return False
    return True


def _declared(d: KnownApiDivergence) -> DeclaredDivergence:
    return DeclaredDivergence(
        function=d.function,
        kind=d.kind,
        condition=d.condition,
        reason=d.reason,
        upstream=d.upstream,
    )


def entry_of(finding: Finding, bundle: str, known: DeclaredDivergence | None) -> FindingEntry:
    """``findings.json``'s entry for one finding."""
    from .output import describe_finding_example

    blame = finding.verdict.blame
    return FindingEntry(
        function=finding.function,
        kind=finding.kind,
        dtype=finding.dtype,
        dtypes=list(finding.dtypes or (finding.dtype,)),
        blame=blame.side if blame else "undecided",
        blame_evidence=blame.evidence if blame else "none",
        blame_why=" ".join(blame.why.split()) if blame else "not judged",
        reason=" ".join((finding.verdict.reason or "").split()),
        bound=str(finding.verdict.bound),
        bundle=bundle,
        example=describe_finding_example(finding),
        known=known,
    )


@dataclass
class Session:
    """The state of one search run (see the module's docstring)."""

    names: Sequence[str]
    space: Space
    reference: Adapter
    candidate: Adapter
    examples: int
    seed: int
    budget_s: float | None
    progress: Callable[[str, int, int, int], None] | None = None
    journal: Journal | None = None
    #: Per function: its record, whether searched now or read from the journal.
    done: dict[str, Done] = field(default_factory=dict)
    skipped: list[SkippedFunction] = field(default_factory=list)
    #: The findings this process found (with their examples and outputs).
    found: list[Finding] = field(default_factory=list)
    resumed: int = 0

    def header(self) -> dict[str, Any]:
        """What a resumed run must share with the interrupted one."""
        return {
            "reference": self.reference.spec,
            "candidate": self.candidate.spec,
            "seed": self.seed,
            "examples": self.examples,
            "time_budget_s": self.budget_s,
            "functions": list(self.names),
            "dtypes": list(self.space.dtypes),
        }

    def open(self, directory: Path | None, *, resume: bool) -> None:
        """Create (or, resuming, reopen) the output directory before any search."""
        if directory is None:
            return
        if resume:
            self.journal = Journal.resume(directory, self.header())
            self.done.update(self.journal.done)
            self.resumed = len(self.journal.done)
        else:
            self.journal = Journal.create(directory, self.header())

    def _skip_reason(self, name: str) -> str | None:
        from .table import SKIPPED

        reason = SKIPPED.get(name) or NOT_DRAWN.get(name)
        recipe = _recipes().get(name)
        if reason is None and recipe is not None and not self.space.of(recipe.category):
            wanted = ", ".join(CATEGORIES[recipe.category])
            reason = f"the backends share no {recipe.category} dtype ({wanted})"
        if reason is None and not _has(self.reference, name):
            reason = f"the reference {self.reference.spec} lacks it"
        if reason is None and recipe is None:
            reason = "no recipe"
        return reason

    def run(self, calls: Calls) -> None:
        """Search every function not done yet, journaling each as it ends."""
        from .runner import search_function

        table = _recipes()
        for number, name in enumerate(self.names, start=1):
            if stop_requested():
                raise StopRequested
            reason = self._skip_reason(name)
            if reason is not None:
                self.skipped.append(SkippedFunction(function=name, reason=reason))
            elif name not in self.done:
                result = search_function(
                    name,
                    table[name],
                    replace(self.space, function=name),  # its interesting points join the draws
                    calls,
                    examples=self.examples,
                    seed=self.seed,
                    budget_s=self.budget_s,
                )
                self._record(result)
            if self.progress is not None:
                total = sum(len(d.entries) for d in self.done.values())
                self.progress(name, number, len(self.names), total)

    def _record(self, result: FunctionResult) -> None:
        from ..adapters import matching_api_divergence
        from .output import bundle_name
        from .page import fragment
        from .runner import api_case

        declared = self.candidate.known_api_divergences()
        start = sum(len(d.entries) for d in self.done.values())
        entries = []
        for offset, finding in enumerate(result.findings):
            match = matching_api_divergence(
                declared, finding.function, finding.kind, finding.dtype, case=api_case(finding)
            )
            bundle = f"bundles/{bundle_name(start + offset, finding)}"
            known = None if match is None else _declared(match)
            entries.append(entry_of(finding, bundle, known))
        run = FunctionRun(
            function=result.function,
            examples=result.examples,
            shrink_runs=result.shrink_runs,
            findings=len(result.findings),
            seconds=round(result.seconds, 3),
            stopped_by_time_budget=result.cut is not None,
            # the budget's cut, then any shrink a limit of Hypothesis' stopped
            cut="; ".join(c for c in (result.cut, result.shrink_cut) if c) or None,
            error=result.error,
            coverage=result.coverage.counts(),
        )
        fragments = [fragment(e, f) for e, f in zip(entries, result.findings, strict=True)]
        if self.journal is not None:
            self.journal.record(
                run, entries, fragments, result.findings, self.reference, self.candidate
            )
        self.done[result.function] = Done(run, entries, fragments)
        self.found.extend(result.findings)

    def document(
        self,
        *,
        started: str,
        duration_s: float,
        self_test: bool,
        dtypes_not_shared: list[str],
        isolation: Isolation,
        complete: bool,
    ) -> FindingsDocument:
        """``findings.json``: the functions done, in their order, and the totals."""
        from .record import backend_identity

        done = [self.done[n] for n in self.names if n in self.done]
        entries = [e for d in done for e in d.entries]
        declared = self.candidate.known_api_divergences()
        used = {(e.known.function, e.known.kind, e.known.condition) for e in entries if e.known}
        every = [_declared(d) for d in declared]
        searched = {d.run.function for d in done}
        return FindingsDocument(
            reference=backend_identity(self.reference),
            candidate=backend_identity(self.candidate),
            seed=self.seed,
            examples_per_function=self.examples,
            time_budget_s=self.budget_s,
            self_test=self_test,
            isolation=isolation,
            complete=complete,
            resumed_functions=self.resumed,
            time_budget_cuts=[d.run.function for d in done if d.run.stopped_by_time_budget],
            dtypes=list(self.space.dtypes),
            dtypes_not_shared=dtypes_not_shared,
            functions_tried=[d.run for d in done],
            skipped=self.skipped,
            findings=entries,
            counts=Counts(
                findings=len(entries),
                known=sum(1 for e in entries if e.known is not None),
                by_kind=dict(Counter(e.kind for e in entries)),
                by_blame=dict(Counter(e.blame for e in entries)),
            ),
            known=[d for d in every if (d.function, d.kind, d.condition) in used],
            no_longer_reproduces=[
                d
                for d in every
                if (d.function, d.kind, d.condition) not in used and d.function in searched
            ],
            started=started,
            duration_s=duration_s,
        )

    def fragments(self) -> list[str]:
        """The page's finding blocks, in the document's order."""
        return [f for n in self.names if n in self.done for f in self.done[n].fragments]

    def finish(self, document: FindingsDocument) -> None:
        """Rewrite ``findings.json`` and ``index.html`` (when there is a directory)."""
        if self.journal is not None:
            self.journal.finish(document, self.fragments())
