"""Which library computed each side of a check, as the runner saw it: its report's ``computed_by``.

A backend's name is a label. What a report records instead is read off the arrays each side's
computation returned (:attr:`~diffcheck.adapters.Execution.computed_by`) and, when the two
sides are not already one library, the independence probes of :mod:`diffcheck.provenance`:
both namespaces sum one fixed float32 vector, compute ``exp`` over a fixed vector and square
a small matrix; bit-identical sums, or bit-identical ``exp`` and matmul, mean one
implementation under two names. The probes cost one sum of 2^17 elements, 4096 ``exp`` and
a 48x48 matmul per side; they are skipped when both sides are already one library (one
module, computed through one namespace).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..adapters import Adapter, Execution
from ..provenance import Fingerprint, ProbeBits, one_library, probe_bits

__all__ = ["Identity", "identify"]


@dataclass(frozen=True)
class Identity:
    """Both sides' fingerprints (None: the side returned host values only) and both sides'
    probes (:class:`~diffcheck.provenance.ProbeBits`; None: not run, or a side could not
    sum the probe's vector as float32)."""

    reference: Fingerprint | None
    candidate: Fingerprint | None
    probes: tuple[ProbeBits, ProbeBits] | None


def _probe(adapter: Adapter) -> ProbeBits | None:
    found = probe_bits(adapter)
    return found if found is not None and len(found.sum) == 4 else None


def identify(
    reference: Adapter, candidate: Adapter, reference_run: Execution, candidate_run: Execution
) -> Identity:
    """The identity of a check whose two sides ran to an output; never raises."""
    ours, theirs = reference_run.computed_by, candidate_run.computed_by
    if ours is not None and theirs is not None and one_library(ours, theirs):
        return Identity(ours, theirs, None)
    ours_bits, theirs_bits = _probe(reference), _probe(candidate)
    both = None if ours_bits is None or theirs_bits is None else (ours_bits, theirs_bits)
    return Identity(ours, theirs, both)
