"""``diffcheck replay BUNDLE``: re-derive a finding's stored evidence, then run it again.

The bundle is read and checked first (:func:`~diffcheck.search.bundle.read_bundle`), and
its replay's memory is bounded before anything is called
(:mod:`~diffcheck.search.bundle_memory`). Then every stored field is one of:

* **derived**: re-computed here and compared with what is stored. The verdict's kind,
  reason, bound and blame, and ``finding.dtype``, are re-derived by the value model from the
  stored inputs and the two stored outputs (:mod:`~diffcheck.search.stored`); a side the
  bundle says NumPy computed is recomputed with NumPy from the stored inputs, and a
  reference on another backend is recomputed when that backend runs here
  (:mod:`~diffcheck.search.recompute`). Any difference makes the bundle **disagree**.
* **claimed**: the library, version and device of each side, and an output nothing here can
  recompute. They are printed as "claimed, not verified" and never count for a verdict.

Only evidence that holds together is run again: the function on both named backends from
the stored inputs. It **reproduces** when the verdict fails with the same kind; otherwise
it **no longer reproduces**. A backend that cannot run here makes it **not_run**.

Exit status of the command: 0 reproduces, 1 disagrees, no longer reproduces or a bad bundle
(one line on stderr), 2 not_run.
"""

from __future__ import annotations

import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import BundleError, ConfigError, ReportError
from ..text import one_line
from ..values.call import call_on, host_inputs
from ..values.compare import host_value
from ..values.model import ValueVerdict
from .bundle import BackendIdentity, Bundle, bundle_in, read_bundle, standard_function
from .bundle_memory import check_replay_budget
from .isolation import DEFAULT_CALL_TIMEOUT_S, CallFailure, HarnessError
from .recipes import Example, call_for
from .recompute import Side, is_numpy, recompute_side
from .record import backend_identity, example_of, outputs_of
from .replay_worker import run_in_worker
from .runner import judge
from .stored import rederive

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = [
    "EPILOG",
    "EXIT_CODES",
    "REPLAY_TIMEOUT_S",
    "BundleReplay",
    "replay_bundle",
    "replay_bundle_command",
]

#: What ``diffcheck replay --help`` says about bundles.
EPILOG = (
    "A finding bundle of 'diffcheck fuzz --api' (bundles/*.json) is run again on both of "
    "its backends: exit 0 when it still reproduces (same failure kind), 1 when it no longer "
    "reproduces, the bundle disagrees with what its stored inputs and outputs re-derive "
    "(forged or mislabelled), or the bundle is bad (one line on stderr), 2 when a backend is "
    "not_run here. Library, version and device are printed as claimed, not verified. "
    "Reports: exit 0 when every report agrees with its stored bits, else 1."
)
#: Seconds a bundle's replay may run its backends (two calls of the search's timeout each).
REPLAY_TIMEOUT_S = 2 * DEFAULT_CALL_TIMEOUT_S
ReplayStatus = Literal["reproduces", "no_longer_reproduces", "disagrees", "not_run"]
EXIT_CODES: dict[ReplayStatus, int] = {
    "reproduces": 0,
    "no_longer_reproduces": 1,
    "disagrees": 1,
    "not_run": 2,
}


@dataclass(frozen=True)
class BundleReplay:
    """What replaying one bundle found."""

    status: ReplayStatus
    function: str
    kind: str
    reason: str
    verdict: ValueVerdict | None = None
    #: Whether the candidate's output now is bit-identical to the stored one (None: not run).
    same_output: bool | None = None
    #: Stored fields that differ from what the stored inputs and outputs re-derive.
    disagreements: tuple[str, ...] = ()
    #: What the bundle states that nothing here can check, one phrase each.
    claims: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def line(self, path: Path) -> str:
        """One line a person reads: the status, the function, the kind, why."""
        words = {
            "reproduces": "REPRODUCES",
            "no_longer_reproduces": "NO LONGER REPRODUCES",
            "disagrees": "DISAGREES",
            "not_run": "not_run",
        }[self.status]
        if self.disagreements:
            return one_line(f"{path}: {words}: {self.function}: {'; '.join(self.disagreements)}")
        same = ""
        if self.same_output is not None:
            same = (
                "; candidate output bit-identical to the stored one"
                if self.same_output
                else ("; candidate output differs from the stored one")
            )
        # A backend's message may span lines (nanobind's signatures): keep it one line.
        reason = " ".join(self.reason.split())
        return one_line(f"{path}: {words}: {self.function} [{self.kind}]: {reason}{same}")

    def notes(self, path: Path) -> list[str]:
        """One line per claim that nothing here verified."""
        return [one_line(f"{path}: claimed, not verified: {claim}") for claim in self.claims]


def _resolve(name: str) -> tuple[Adapter | None, str | None]:
    from ..adapters import resolve

    try:
        adapter = resolve(name)
    except ConfigError as error:
        return None, str(error)
    probe = adapter.probe()
    if not probe.is_available:
        return None, f"{name} is {probe.status}: {probe.reason}"
    return adapter, None


def replay_bundle(
    path: Path,
    *,
    reference: Adapter | None = None,
    candidate: Adapter | None = None,
    bundle: Bundle | None = None,
    max_memory: int | None = None,
    isolate: bool = True,
    timeout_s: float = REPLAY_TIMEOUT_S,
) -> BundleReplay:
    """Replay the bundle at ``path`` (or ``bundle``, already read from it) on its backends.

    The backends run again in a worker process (``isolate``, the default), which may take
    ``timeout_s``: a call that crashes or hangs ends the worker, never this process, and a
    ``crash`` or ``hang`` bundle then reproduces (any other kind no longer does).

    ``reference`` and ``candidate`` replace the backends the bundle names. Before anything is
    called, the replay's memory is estimated from the bundle's shapes and integers and
    refused over ``max_memory`` (default: half the memory available), as ``diffcheck run``
    refuses a check. Then the stored evidence is re-derived; only when it holds together
    are the backends run again.
    """
    bundle = bundle or read_bundle(path)
    function, kind = bundle.function, bundle.finding.kind
    try:  # again here: a Bundle built without validation must not reach getattr either
        standard_function(function, bundle.bundle_version)
    except ValueError as error:
        raise BundleError(f"{path}: function: {error}") from None
    example = example_of(bundle)
    check_replay_budget(function, example, max_memory, where=str(path))
    resolved = [
        (given, None) if given is not None else _resolve(named.backend)
        for given, named in ((reference, bundle.reference), (candidate, bundle.candidate))
    ]
    disagreements, claims = _check_evidence(bundle, example, resolved[0][0], resolved[1][0])
    if disagreements:
        return BundleReplay(
            "disagrees", function, kind, "", disagreements=disagreements, claims=claims
        )
    sides: list[Adapter] = []
    for adapter, why in resolved:
        if adapter is None:
            return BundleReplay("not_run", function, kind, why or "unavailable", claims=claims)
        sides.append(adapter)
    ran = (
        _run_sides(bundle, example, sides)
        if not isolate
        else _run_isolated(bundle, example, sides, timeout_s)
    )
    if isinstance(ran, CallFailure):
        # The call killed or blocked its worker, never this process: a crash or hang
        # bundle reproduces when it does so again.
        if ran.kind == kind:
            return BundleReplay("reproduces", function, kind, ran.reason, claims=claims)
        now = f"it fails as {ran.kind} now: {ran.reason}"
        return BundleReplay("no_longer_reproduces", function, kind, now, claims=claims)
    verdict, same = ran
    here = backend_identity(sides[1])
    if same is False and here == bundle.candidate:
        # The very library, version and device the bundle names returns other bits here:
        # the stored candidate output is not what it computes (forged, or nondeterministic).
        why = (
            f"outputs.candidate: {here.backend} ({here.library} {here.version}, device "
            f"{here.device or 'unknown'}, as stored) returns other bits than the bundle stores "
            "for it: a forged output, or a nondeterministic backend"
        )
        return BundleReplay("disagrees", function, kind, "", verdict, same, (why,), claims)
    if verdict.kind == kind:  # finding.dtype is derived above: the same inputs' dtypes
        return BundleReplay(
            "reproduces", function, kind, verdict.reason or "", verdict, same, claims=claims
        )
    now_text = (
        "it passes now" if verdict.passed else f"it fails as {verdict.kind} now: {verdict.reason}"
    )
    return BundleReplay(
        "no_longer_reproduces", function, kind, now_text, verdict, same, claims=claims
    )


def _run_sides(
    bundle: Bundle, example: Example, sides: list[Adapter]
) -> tuple[ValueVerdict, bool | None]:
    """Run the call on both sides again: the verdict, and whether the candidate's bits match."""
    verdict = judge(bundle.function, example, sides[0], sides[1])
    return verdict, _same_candidate(bundle, example, sides)


def _run_isolated(
    bundle: Bundle, example: Example, sides: list[Adapter], timeout_s: float
) -> tuple[ValueVerdict, bool | None] | CallFailure:
    """:func:`_run_sides` in a worker process: a crash or hang ends the worker, not this one."""
    try:
        answer: tuple[ValueVerdict, bool | None] | CallFailure = run_in_worker(
            timeout_s, _run_sides, bundle, example, sides
        )
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise BundleError(
            f"the backends cannot be sent to a worker process ({type(error).__name__}: "
            f"{one_line(str(error))[:200]}); replay in-process (isolate=False)"
        ) from None
    except HarnessError as error:
        raise BundleError(f"replay failed in its worker process: {one_line(str(error))}") from None
    return answer


def _check_evidence(
    bundle: Bundle, example: Example, reference: Adapter | None, candidate: Adapter | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The stored fields that disagree with what is re-derived, and what stays claimed."""
    disagreements = rederive(bundle, example, (reference, candidate))
    claims: list[str] = []
    named: tuple[tuple[Side, BackendIdentity], ...] = (
        ("reference", bundle.reference),
        ("candidate", bundle.candidate),
    )
    live = {"reference": reference, "candidate": candidate}
    for side, identity in named:
        claim = (
            f"{side} {identity.backend}: library {identity.library} {identity.version}, "
            f"device {identity.device or 'unknown'}"
        )
        adapter = live[side]
        if adapter is not None:  # what runs here under that name, for the reader to compare
            here = backend_identity(adapter)
            if here != identity:
                claim += (
                    f" (here {here.backend}: {here.library} {here.version}, device "
                    f"{here.device or 'unknown'})"
                )
        claims.append(claim)
        if is_numpy(identity.backend):
            why = recompute_side(bundle, example, side)
        elif side == "reference" and reference is not None:
            why = recompute_side(bundle, example, side, reference)
        else:
            if side == "reference":
                claims.append(f"the stored reference output ({identity.backend} does not run here)")
            continue  # the candidate's stored output is compared with its run, below
        if why is not None:
            disagreements.append(why)
    return tuple(disagreements), tuple(claims)


def _same_candidate(bundle: Bundle, example: Example, sides: list[Adapter]) -> bool | None:
    """Whether the candidate's output now is bit-identical to the stored one."""
    # The candidate alone: the reference's output is not compared here.
    fn = call_for(bundle.function, example)
    now = call_on(sides[1], fn, host_inputs(example.args), dict(example.kwargs))
    stored = outputs_of(bundle.outputs["candidate"])
    if now.ok:
        value = now.value
        tagged = isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)
        values = value if isinstance(value, tuple) and not tagged else (value,)
        arrays = [host_value(v)[0] for v in values]  # bfloat16: its float32 widening, as stored
        return len(arrays) == len(stored) and all(
            a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
            for a, b in zip(arrays, stored, strict=False)
        )
    if not stored:
        return bool((now.missing is None) == (bundle.outputs["candidate"].missing is None))
    return None


def replay_bundle_command(
    path: Path, document: Any, size: int, max_memory: int | None = None, *, isolate: bool = True
) -> int:
    """Replay one bundle for ``diffcheck replay`` from its decoded file: print its line and
    return its exit status (``isolate``: the calls in a worker process, see replay_bundle)."""
    try:
        bundle = bundle_in(document, size, where=str(path))
        outcome = replay_bundle(path, bundle=bundle, max_memory=max_memory, isolate=isolate)
    except ReportError as error:  # a bad bundle is one line; the other paths still run
        print(one_line(f"diffcheck: {error}"), file=sys.stderr)
        return 1
    stream = sys.stdout if outcome.status == "reproduces" else sys.stderr
    # Names and reasons come from the bundle (a backend name may hold ESC): escaped.
    print(one_line(outcome.line(path)), file=stream)
    for note in outcome.notes(path):  # stdout: stderr keeps its one line
        print(note)
    return outcome.exit_code
