"""Which library computed each side of a check, as the runner saw it: its report's ``computed_by``.

A backend's name is a label. What a report records instead is read off the arrays each side's
computation returned (:attr:`~diffcheck.adapters.Execution.computed_by`) and, when the two
sides name different modules, the independence probe of :mod:`diffcheck.provenance`: both
namespaces sum one fixed float32 vector, and bit-identical sums mean one implementation under
two names. The probe costs one sum of 2^17 elements per side; it is skipped when both sides
are already one library (one module, computed through one namespace).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..adapters import Adapter, Execution
from ..provenance import Fingerprint, one_library, probe_sum

__all__ = ["Identity", "identify"]


@dataclass(frozen=True)
class Identity:
    """Both sides' fingerprints (None: the side returned host values only) and the probe's
    two float32 sums as 4 little-endian bytes each (None: not run, or a side could not)."""

    reference: Fingerprint | None
    candidate: Fingerprint | None
    sums: tuple[bytes, bytes] | None


def _sum(adapter: Adapter) -> bytes | None:
    found = probe_sum(adapter)
    return found if found is not None and len(found) == 4 else None


def identify(
    reference: Adapter, candidate: Adapter, reference_run: Execution, candidate_run: Execution
) -> Identity:
    """The identity of a check whose two sides ran to an output; never raises."""
    ours, theirs = reference_run.computed_by, candidate_run.computed_by
    if ours is not None and theirs is not None and one_library(ours, theirs):
        return Identity(ours, theirs, None)
    sums = _sum(reference), _sum(candidate)
    both = None if sums[0] is None or sums[1] is None else (sums[0], sums[1])
    return Identity(ours, theirs, both)
