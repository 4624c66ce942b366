"""The candidate's identity on replay: bound like the reference's, or listed as claimed.

A report names its candidate (``config.require_backend``, ``result.backend``) and, from
schema v3, records which library's arrays it returned (``computed_by.candidate``). The
name alone is a label: a genuine ``mlx:cpu`` pass renamed ``metal`` replayed as a pass of
Metal. So the name is checked against what the adapter of that name is here:

* the library: the namespace the adapter computes through here (its namespace module when
  it is available, else the library its identity declares) must be the namespace
  ``computed_by.candidate`` recorded, ``array_api_compat.`` wrappers read as the library
  they wrap; a report naming a backend that is not what computed it disagrees;
* the lifecycle's submissions: an adapter that records no command contexts here always
  runs the lifecycle as four independent chains, so a report of phases under its name
  disagrees; one that records them here on this precision never runs chains, so a report
  of chains under its name disagrees;
* what cannot be bound is listed as claimed, never taken: without ``--rerun`` the name
  itself (the recorded library is the candidate's word too, and a careful forger copies
  the one the adapter declares), and the device of a library with several (``mlx:cpu`` and
  ``mlx:gpu`` compute through one namespace, and nothing in a report says which ran);
  ``--rerun`` binds both by reproducing the stored output with the named backend here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..adapters import Adapter, resolve
from ..adapters.raw_kernels import RawKernelAdapter
from ..config import Check
from ..ops import ContextLifecycle
from ..provenance import namespace_name, one_library, pattern_one_library, probe_patterns
from .identity import bind_library, computed_by_of
from .models import ComputedBy, ReportDocument
from .world import rerun_candidate

__all__ = ["CandidateIdentity", "bind_rerun", "candidate_identity"]

_COMPAT = "array_api_compat."


class CandidateIdentity:
    """What binding the candidate's name found: disagreements, claimed fields, and whether
    the bound namespaces make the pair one library."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.claims: list[tuple[str, str]] = []
        #: Both sides computed through one namespace, as bound (the reference's by its
        #: recomputation, the candidate's by its adapter here): never a pass, whatever the
        #: claimed modules say.
        self.one_library = False


def _library(name: str) -> str:
    return name.removeprefix(_COMPAT)


def _computes_through(adapter: Adapter) -> tuple[str, bool]:
    """(the namespace the adapter computes through here, whether it was seen running)."""
    if adapter.probe().is_available:
        try:
            return _library(namespace_name(adapter.namespace())), True
        except Exception:  # an available backend whose namespace fails: its declared library
            pass
    return _library(adapter.identity()[0]), False


def _bind_library(found: CandidateIdentity, name: str, adapter: Adapter, recorded: str) -> bool:
    """Check the recorded namespace against the adapter's; whether the adapter is here."""
    here, available = _computes_through(adapter)
    if _library(recorded) != here:
        where = "here" if available else "by its adapter's declared identity"
        found.problems.append(
            f"result.backend: {name} computes through {here} ({where}), but "
            f"computed_by.candidate records {recorded}: the report names a backend that is "
            "not what computed it"
        )
    return available


def _bind_submissions(
    found: CandidateIdentity, check: Check, adapter: Adapter, chains: bool, available: bool
) -> None:
    """Phases or chains, as the adapter of that name would have run the lifecycle."""
    if not isinstance(check.op, ContextLifecycle):
        return
    name = check.require_backend
    if not adapter.has_command_contexts:
        if not chains:
            found.problems.append(
                f"submission_phases: {name} records no command contexts, so it runs the "
                "lifecycle as four independent chains; a report of phases is not its run"
            )
        return
    if not chains or not available:
        return
    try:
        device: Any = adapter.command_device(check.precision)
    except Exception:  # a device that cannot be opened now: nothing to bind to
        return
    if device is not None:
        found.problems.append(
            f"submission_phases: {name} records command contexts at {check.precision} here, "
            "so it runs the lifecycle's phases; a report of four independent chains is not "
            "its run"
        )


def candidate_identity(
    document: ReportDocument, check: Check, chains: bool, *, reproduced: bool = False
) -> CandidateIdentity:
    """Bind the candidate's name to what computed it (see the module); ``reproduced`` says
    that ``--rerun`` ran it here and its stored output reproduced bit for bit."""
    found = CandidateIdentity()
    name = check.require_backend
    computed_by = computed_by_of(document)
    ran = document.result is not None and document.result.actual is not None
    try:
        adapter = resolve(name)
    except Exception as error:  # a plugin not installed here: the name is its own word
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        found.claims.append(("result.backend", f"{name} (no adapter of that name here: {text})"))
        found.one_library = ran and _one_library_here(check, None, computed_by)
        return found
    candidate = None if computed_by is None else computed_by.candidate
    recorded = None if candidate is None else candidate.namespace
    if recorded is None:
        available = adapter.probe().is_available
        phases = isinstance(check.op, ContextLifecycle) and not chains
        host_only = isinstance(adapter, RawKernelAdapter) or phases
        if computed_by is not None and ran and not host_only:
            # Only a raw-kernel backend, or command contexts, return host values only; one
            # that computes through a namespace returns its arrays, so a null record is an
            # erased one.
            found.problems.append(
                f"computed_by.candidate: null, but {name} computes through a namespace and "
                "returns its arrays: which library computed it was removed"
            )
        elif not reproduced:
            found.claims.append(
                ("result.backend", f"{name} (which library computed it is not recorded)")
            )
    else:
        available = _bind_library(found, name, adapter, recorded)
        if not reproduced:
            # The recorded library is the candidate's own word, which a report can copy from
            # the adapter: the name is bound only by running it (--rerun).
            why = (
                "its library as recorded, itself the candidate's word; --rerun binds it"
                if available
                else "not available here: what computed it is its word"
            )
            found.claims.append(("result.backend", f"{name} ({why})"))
        reference = None if computed_by is None else computed_by.reference
        theirs = None if reference is None else reference.namespace
        found.one_library = (
            not found.problems and theirs is not None and _library(theirs) == _library(recorded)
        )
    if len(type(adapter).devices) > 1 and not reproduced:
        device = adapter.identity()[1] or "the library's default"
        found.claims.append(
            (
                "result.backend device",
                f"{device} (one namespace for every device; --rerun binds it)",
            )
        )
    _bind_submissions(found, check, adapter, chains, available)
    if ran and not found.problems and not found.one_library:
        found.one_library = _one_library_here(check, adapter if available else None, computed_by)
    return found


def _one_library_here(
    check: Check, adapter: Adapter | None, computed_by: ComputedBy | None
) -> bool:
    """Whether the pair is one library by the reference's probes recomputed here
    (:func:`~diffcheck.provenance.probe_patterns`), never by the report's claimed reference
    probes: against the probes of the candidate's ``adapter`` here (None: not available
    here; a namespace over NumPy whose sum alone is its own is still NumPy for exp and
    matmul), and against the candidate's stored probes, which are its word: they can only
    make the pair one library, never a pass."""
    try:
        reference = resolve(check.reference)
    except Exception:  # the reference's own replay says it cannot run here
        return False
    if not reference.probe().is_available:
        return False
    ours = probe_patterns(reference)
    if ours is None:
        return False
    if adapter is not None and pattern_one_library(ours, probe_patterns(adapter)):
        return True
    if computed_by is None or computed_by.probe is None:
        return False
    if computed_by.reference is None or computed_by.candidate is None:
        return False
    theirs = computed_by.probe.probes()[1]
    reference_side, candidate_side = (
        computed_by.reference.fingerprint(),
        computed_by.candidate.fingerprint(),
    )
    return one_library(reference_side, candidate_side, (ours[1], theirs))


def bind_rerun(
    document: ReportDocument,
    check: Check,
    actual: npt.NDArray[np.float32] | None,
    problems: list[str],
    checked: list[str],
) -> bool:
    """``--rerun``: run the candidate again and bind its bits, verdict, storages and library
    to the stored ones (:func:`.world.rerun_candidate`); whether its output reproduced."""
    assert document.result is not None
    status = document.result.status
    again = rerun_candidate(check, actual)
    checked.append(again.line)
    problems += [again.problem] if again.problem else []
    executed = document.executed_precision
    stored = (
        None
        if executed is None
        else (executed.backend_input_storage, executed.backend_output_storage)
    )
    if again.storages is not None and again.storages != stored:
        problems.append(f"executed_precision: stored {stored}, the re-run stored {again.storages}")
    if again.status is not None and again.status != status:
        problems.append(f"re-run: stored {status}, the candidate now {again.status}")
    computed_by = computed_by_of(document)
    if computed_by is not None:
        problem = bind_library(
            "computed_by.candidate", computed_by.candidate, again.computed_by, "the re-run"
        )
        problems += [problem] if problem else []
    return again.reproduced
