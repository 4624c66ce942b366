"""``computed_by``: which library computed each side of a check, and the independence probes.

A name is a label; these records are read off the arrays each side returned and off what
both namespaces computed for the probes (:mod:`diffcheck.provenance`). Schema v3 records the
probe's two float32 sums (:class:`ProbeRecord`); v4 adds the SHA-256 of both sides' ``exp``
and matmul bits (:class:`ProbeRecordV4`), each null where not probed (a report written
before them, or a namespace without that function).
"""

from __future__ import annotations

from pydantic import Field

from ..provenance import Fingerprint, ProbeBits, one_library
from ._fields import BOUND, CLAIMED, Strict

__all__ = ["ComputedBy", "ComputedByV4", "LibraryRecord", "ProbeRecord", "ProbeRecordV4"]


def _hex_bytes(bits: str) -> bytes:
    # A sum is stored as its float32's bit pattern in hex (8 digits, the integer's value);
    # the probes compare little-endian bytes, as the namespaces returned them.
    return int(bits, 16).to_bytes(4, "little")


def _digest(found: str | None) -> bytes | None:
    return None if found is None else bytes.fromhex(found)


_SHA256 = "^[0-9a-f]{64}$"


_REBOUND = " `replay --rerun` re-runs the candidate and binds it to the module found then."


class LibraryRecord(Strict):
    """One side's fingerprint: the library whose arrays its computation returned."""

    module: str = Field(
        description=CLAIMED + "Top-level module of the output array's type (numpy for a "
        "numpy.ndarray, whatever adapter returned it). For the reference, bound: replay "
        "recomputes the reference and reads the module off its arrays." + _REBOUND
    )
    version: str | None = Field(
        description=CLAIMED + "That module's version where the check ran (null if unknown)."
    )
    array_type: str = Field(
        description=CLAIMED + "The output array type's qualified name. For the reference, "
        "bound like module." + _REBOUND
    )
    blas: str | None = Field(
        description=CLAIMED + "For NumPy, the BLAS it was built with (name and version, from "
        "numpy.show_config); null for other libraries."
    )
    namespace: str | None = Field(
        description=CLAIMED + "The module of the array namespace whose functions computed the "
        "output (a backend may store values in NumPy arrays and compute with its own "
        "functions); null when not known. For the reference, bound like module." + _REBOUND
    )

    def fingerprint(self) -> Fingerprint:
        """The record as :class:`~diffcheck.provenance.Fingerprint`."""
        return Fingerprint(self.module, self.version, self.array_type, self.blas, self.namespace)


class ProbeRecord(Strict):
    """The independence probe: both namespaces summed one fixed float32 vector.

    Each library sums in its own order (pairwise blocks, SIMD lanes, trees), so two sides
    whose sums have the same bits are, as far as this can tell, one implementation.
    """

    elements: int = Field(ge=1, description=CLAIMED + "Length of the probe's float32 vector.")
    reference_sum_bits: str = Field(
        pattern="^[0-9a-f]{8}$",
        description=CLAIMED
        + "The reference namespace's float32 sum: its bit pattern, 8 hex digits.",
    )
    candidate_sum_bits: str = Field(
        pattern="^[0-9a-f]{8}$",
        description=CLAIMED
        + "The candidate namespace's float32 sum: its bit pattern, 8 hex digits.",
    )

    def probes(self) -> tuple[ProbeBits, ProbeBits]:
        """Both sides' probes as :class:`~diffcheck.provenance.ProbeBits` (sums only here)."""
        return ProbeBits(_hex_bytes(self.reference_sum_bits)), ProbeBits(
            _hex_bytes(self.candidate_sum_bits)
        )


class ComputedBy(Strict):
    """Which library computed each side, and the probe: whether the pair is independent.

    A name is a label (a NumPy adapter subclass under another name passes the name-based
    self-test check); the fingerprint is read off the arrays each side returned. Both sides
    from one module through one namespace is not an independent pair and counts like a
    self-test: never a pass.
    A bit-identical probe (a wrapper that delegates to the other side's library) is printed
    as not independent.
    """

    reference: LibraryRecord | None = Field(
        description=BOUND + "The library of the reference's output arrays; its module and "
        "array type must be what replay's recomputation returns (version and BLAS are "
        "claimed). Null when the reference returned host values only."
    )
    candidate: LibraryRecord | None = Field(
        description=CLAIMED + "The library of the candidate's output arrays; null when the "
        "candidate ran its own kernels and returned host values only." + _REBOUND
    )
    probe: ProbeRecord | None = Field(
        description=CLAIMED + "The independence probe's sums; null when a side's namespace "
        "could not compute it, or both sides are one module (nothing left to probe)."
    )

    @property
    def one_library(self) -> bool:
        """Whether both sides are one library under two names: arrays of one module,
        computed through one namespace (or a namespace not known on a side), or through
        two namespaces whose recorded probes agree (:func:`~diffcheck.provenance.probes_agree`)."""
        if self.reference is None or self.candidate is None:
            return False
        probes = None if self.probe is None else self.probe.probes()
        return one_library(self.reference.fingerprint(), self.candidate.fingerprint(), probes)


class ProbeRecordV4(ProbeRecord):
    """The independence probes of a v4 report: the sums, and both sides' ``exp`` over a
    fixed vector of 4096 values and a 48x48 float32 matmul, as SHA-256 of their bits.

    Two namespaces whose sums agree, or whose ``exp`` and matmul both agree, are one
    implementation (:func:`~diffcheck.provenance.probes_agree`): a wrapper over NumPy
    with a float64 sum of its own still computes ``exp`` and matmul as NumPy does.
    """

    reference_exp_sha256: str | None = Field(
        default=None,
        pattern=_SHA256,
        description=CLAIMED + "SHA-256 of the bits of the reference namespace's float32 exp "
        "over the probe's fixed vector; replay judges with its own recomputation. Null: "
        "not probed.",
    )
    candidate_exp_sha256: str | None = Field(
        default=None,
        pattern=_SHA256,
        description=CLAIMED + "SHA-256 of the bits of the candidate namespace's float32 exp "
        "over the probe's fixed vector. Null: not probed.",
    )
    reference_matmul_sha256: str | None = Field(
        default=None,
        pattern=_SHA256,
        description=CLAIMED + "SHA-256 of the bits of the reference namespace's float32 "
        "matmul of the probe's fixed 48x48 matrix by itself; replay judges with its own "
        "recomputation. Null: not probed.",
    )
    candidate_matmul_sha256: str | None = Field(
        default=None,
        pattern=_SHA256,
        description=CLAIMED + "SHA-256 of the bits of the candidate namespace's float32 "
        "matmul of the probe's fixed 48x48 matrix by itself. Null: not probed.",
    )

    def probes(self) -> tuple[ProbeBits, ProbeBits]:
        """Both sides' probes as :class:`~diffcheck.provenance.ProbeBits`."""
        reference = ProbeBits(
            _hex_bytes(self.reference_sum_bits),
            _digest(self.reference_exp_sha256),
            _digest(self.reference_matmul_sha256),
        )
        candidate = ProbeBits(
            _hex_bytes(self.candidate_sum_bits),
            _digest(self.candidate_exp_sha256),
            _digest(self.candidate_matmul_sha256),
        )
        return reference, candidate


class ComputedByV4(ComputedBy):
    """``computed_by`` of a v4 report: as v3, with the probes of :class:`ProbeRecordV4`."""

    probe: ProbeRecordV4 | None = Field(
        description=CLAIMED + "The independence probes (the sums, exp and matmul); null when "
        "a side's namespace could not sum the probe's vector, or both sides are one module "
        "(nothing left to probe)."
    )
