"""``diffcheck replay BUNDLE``: run a finding's minimal example again; does it still diverge?

The bundle is read and checked first (:func:`~diffcheck.search.bundle.read_bundle`); then
its function runs on both named backends from the stored inputs and the value model judges
it again. It **reproduces** when the verdict fails with the same kind for the same input
dtypes; otherwise it **no longer reproduces**. A backend that cannot run here (not
installed, no such device) makes it **not_run**, with the reason.

Exit status of the command: 0 reproduces, 1 no longer reproduces (or a bad bundle: one line
on stderr), 2 not_run.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError, ReportError
from ..text import one_line
from ..values.compare import host_value
from ..values.model import ValueVerdict
from .bundle import Bundle, bundle_in, read_bundle
from .record import example_of, outputs_of
from .runner import judge, outputs

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = [
    "EPILOG",
    "EXIT_CODES",
    "BundleReplay",
    "replay_bundle",
    "replay_bundle_command",
]

#: What ``diffcheck replay --help`` says about bundles.
EPILOG = (
    "A finding bundle of 'diffcheck fuzz --api' (bundles/*.json) is run again on both of "
    "its backends: exit 0 when it still reproduces (same failure kind), 1 when it no longer "
    "reproduces or the bundle is bad (one line on stderr), 2 when a backend is not_run here. "
    "Reports: exit 0 when every report agrees with its stored bits, else 1."
)
ReplayStatus = Literal["reproduces", "no_longer_reproduces", "not_run"]
EXIT_CODES: dict[ReplayStatus, int] = {"reproduces": 0, "no_longer_reproduces": 1, "not_run": 2}


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

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def line(self, path: Path) -> str:
        """One line a person reads: the status, the function, the kind, why."""
        words = {
            "reproduces": "REPRODUCES",
            "no_longer_reproduces": "NO LONGER REPRODUCES",
            "not_run": "not_run",
        }[self.status]
        same = ""
        if self.same_output is not None:
            same = (
                "; candidate output bit-identical to the stored one"
                if self.same_output
                else ("; candidate output differs from the stored one")
            )
        # A backend's message may span lines (nanobind's signatures): keep it one line.
        reason = " ".join(self.reason.split())
        return f"{path}: {words}: {self.function} [{self.kind}]: {reason}{same}"


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
) -> BundleReplay:
    """Replay the bundle at ``path`` (or ``bundle``, already read from it) on its backends.

    ``reference`` and ``candidate`` replace the backends the bundle names.
    """
    bundle = bundle or read_bundle(path)
    function, kind = bundle.function, bundle.finding.kind
    sides: list[Adapter] = []
    for given, named in ((reference, bundle.reference), (candidate, bundle.candidate)):
        adapter, why = (given, None) if given is not None else _resolve(named.backend)
        if adapter is None:
            return BundleReplay("not_run", function, kind, why or "unavailable")
        sides.append(adapter)
    example = example_of(bundle)
    verdict = judge(function, example, sides[0], sides[1])
    _, now = outputs(function, example, sides[0], sides[1])
    stored = outputs_of(bundle.outputs["candidate"])
    same = None
    if now.ok:
        values = now.value if isinstance(now.value, tuple) else (now.value,)
        arrays = [host_value(v)[0] for v in values]
        same = len(arrays) == len(stored) and all(
            a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
            for a, b in zip(arrays, stored, strict=False)
        )
    elif not stored:
        same = bool((now.missing is None) == (bundle.outputs["candidate"].missing is None))
    if verdict.kind == kind and example.input_dtypes() == bundle.finding.dtype:
        return BundleReplay("reproduces", function, kind, verdict.reason or "", verdict, same)
    now_text = (
        "it passes now" if verdict.passed else f"it fails as {verdict.kind} now: {verdict.reason}"
    )
    return BundleReplay("no_longer_reproduces", function, kind, now_text, verdict, same)


def replay_bundle_command(path: Path, document: Any, size: int) -> int:
    """Replay one bundle for ``diffcheck replay`` from its decoded file: print its line and
    return its exit status."""
    try:
        outcome = replay_bundle(path, bundle=bundle_in(document, size, where=str(path)))
    except ReportError as error:  # a bad bundle is one line; the other paths still run
        print(one_line(f"diffcheck: {error}"), file=sys.stderr)
        return 1
    stream = sys.stdout if outcome.status == "reproduces" else sys.stderr
    # Names and reasons come from the bundle (a backend name may hold ESC): escaped.
    print(one_line(outcome.line(path)), file=stream)
    return outcome.exit_code
