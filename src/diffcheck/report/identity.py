"""``computed_by`` on replay: which library computed each side, bound where replay can see it.

A v3 report records each side's fingerprint (the module of the arrays it returned) and the
independence probe's two sums; v4 adds both sides' ``exp`` and matmul probes. Replay binds
what it can re-derive and prints the rest as claimed:

- the reference's module and array type are bound: replay recomputes the reference and reads
  them off its own arrays, so a forger cannot rename the reference's library;
- the candidate's are the candidate's word, bound only under ``--rerun`` (the re-run's
  arrays must name the same module and type);
- versions, BLAS and the probes' bits are claimed; replay judges the pair with the
  reference's probes recomputed here (:mod:`.candidate`).

Both sides from one module is a pair that is not independent: it counts like a self-test,
never as a pass. A bit-identical probe between two modules (a wrapper delegating to the
other side's library) is printed as not independent; the wrapper's own layer is what such a
check tests. Editing a claimed fingerprint can only hide that a pair is one library, which
is what a report without ``computed_by`` (v1, v2) says anyway; it never changes a verdict.
"""

from __future__ import annotations

from ..provenance import Fingerprint, Provenance, judge
from .models import ComputedBy, LibraryRecord, ProbeRecord, ReportDocument

__all__ = [
    "bind_library",
    "claimed_identity",
    "computed_by_of",
    "identity_problem",
    "independence",
]


def computed_by_of(document: ReportDocument) -> ComputedBy | None:
    """The document's ``computed_by`` (None before v3 or when not recorded)."""
    found: ComputedBy | None = getattr(document, "computed_by", None)
    return found


def _fingerprint(record: LibraryRecord | None) -> Fingerprint | None:
    return None if record is None else record.fingerprint()


def identity_problem(document: ReportDocument) -> str | None:
    """Why a v3 document's ``computed_by`` cannot be right for its result, or None.

    A record without the candidate's output cannot say what computed it. The converse is
    allowed: ``computed_by`` null beside an output is a report upgraded from v2, which never
    recorded it; replay then says it is not recorded (as it says nothing for v2).
    """
    if document.result is None or document.result.actual is not None:
        return None
    if computed_by_of(document) is not None:
        return "computed_by is stored but the candidate returned no output"
    return None


def bind_library(
    label: str, stored: LibraryRecord | None, found: Fingerprint | None, how: str
) -> str | None:
    """A disagreement when ``found`` (what replay's own run returned) is not ``stored``."""
    if found is None:
        return None  # replay's run returned host values only: nothing to bind to
    if stored is None:
        return f"{label}: stored null, {how} returned {found.module} arrays ({found.array_type})"
    ours = (stored.module, stored.array_type, stored.namespace)
    if ours != (found.module, found.array_type, found.namespace):
        return (
            f"{label}: stored {stored.module} ({stored.array_type} via {stored.namespace}), "
            f"{how} returned {found.module} arrays ({found.array_type} via {found.namespace})"
        )
    return None


def independence(document: ReportDocument) -> tuple[Provenance | None, str | None]:
    """(the pair's provenance judged from the stored fingerprints, a note to print).

    None and a note when a side's library was not recorded; None and no note before v3.
    """
    computed_by = computed_by_of(document)
    if computed_by is None:
        ran = document.result is not None and document.result.actual is not None
        if document.schema_version >= 3 and ran:
            return None, (
                "computed by: not recorded (upgraded from schema v2, or the record was "
                "removed); the pair's independence is unknown"
            )
        return None, None
    reference, candidate = _fingerprint(computed_by.reference), _fingerprint(computed_by.candidate)
    if reference is None or candidate is None:
        side = "reference" if reference is None else "candidate"
        return None, (
            f"computed by: the {side} returned host values only; which library computed it "
            "is not recorded, and the pair's independence is unknown"
        )
    probe = computed_by.probe
    found = judge(reference, candidate, None if probe is None else probe.probes())
    return found, f"computed by: {found}"


def _patterns(probe: ProbeRecord) -> str:
    """The exp and matmul probes' digests, as the claimed line shows them (first 12 digits)."""
    ours, theirs = probe.probes()
    parts = [
        f"; {label}: reference {_short(mine)}, candidate {_short(other)}"
        for label, mine, other in (
            ("exp", ours.exp, theirs.exp),
            ("matmul", ours.matmul, theirs.matmul),
        )
        if mine is not None or other is not None
    ]
    return "".join(parts)


def _short(digest: bytes | None) -> str:
    return "not probed" if digest is None else digest.hex()[:12]


def claimed_identity(document: ReportDocument) -> list[tuple[str, str]]:
    """(field, value) of the claimed parts of ``computed_by``."""
    computed_by = computed_by_of(document)
    if computed_by is None:
        return []
    claims: list[tuple[str, str]] = []
    reference = computed_by.reference
    if reference is not None:
        claims += [
            ("computed_by.reference.version", str(reference.version)),
            ("computed_by.reference.blas", str(reference.blas)),
        ]
    claims.append(("computed_by.candidate", str(_fingerprint(computed_by.candidate))))
    probe = computed_by.probe
    claims.append(
        (
            "computed_by.probe",
            "null"
            if probe is None
            else f"{probe.elements} elements: reference sum {probe.reference_sum_bits}, "
            f"candidate sum {probe.candidate_sum_bits}{_patterns(probe)}",
        )
    )
    return claims
