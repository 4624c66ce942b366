"""The value model's data: bounds, failure kinds, located elements and verdicts.

Everything here is plain frozen data, so a verdict can be stored, compared and rendered
without the arrays it was computed from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..provenance import Provenance
from ..text import ulps

__all__ = [
    "FAILURE_KINDS",
    "Blame",
    "Bound",
    "BoundKind",
    "Evidence",
    "FailureKind",
    "Location",
    "Side",
    "ValueVerdict",
]

BoundKind: TypeAlias = Literal["exact", "ulp", "reduction", "nmse"]
Side: TypeAlias = Literal["candidate", "reference", "both", "undecided"]
Evidence: TypeAlias = Literal["special-case", "oracle", "standard-rule", "vote", "none"]
FailureKind: TypeAlias = Literal[
    "missing", "raises", "dtype", "shape", "nan", "signed-zero", "inf", "value"
]
#: Every failure kind, in the order a comparison binds them.
FAILURE_KINDS: tuple[FailureKind, ...] = (
    "missing",
    "raises",
    "dtype",
    "shape",
    "nan",
    "inf",
    "signed-zero",
    "value",
)


@dataclass(frozen=True)
class Bound:
    """How far a candidate's finite values may be from the reference's.

    Attributes
    ----------
    kind
        ``exact`` (bit-equal values), ``ulp`` (elementwise, within ``ulps``), ``reduction``
        (within ``ulps``, or within ``atol`` when cancellation makes ULPs meaningless) or
        ``nmse`` (normalized mean squared error strictly below ``nmse``).
    ulps
        For ``ulp`` and ``reduction``: the largest distance allowed, in ULPs of the output
        dtype.
    nmse
        For ``nmse``: the NMSE bucket of the storage precision.
    provenance
        Where the bound comes from, in words a reader can check.
    atol
        For ``reduction``: an absolute error also allowed (``ulps * eps * sum |x|`` when the
        magnitude of the reduced terms is known), or None.
    """

    kind: BoundKind
    ulps: float | None
    nmse: float | None
    provenance: str
    atol: float | None = None

    def __str__(self) -> str:
        if self.kind == "exact":
            return f"exact ({self.provenance})"
        if self.kind == "nmse":
            return f"NMSE < {self.nmse:g} ({self.provenance})"
        extra = f" or |error| <= {self.atol:.3g}" if self.atol is not None else ""
        return f"<= {self.ulps:g} ULP{extra} ({self.provenance})"


@dataclass(frozen=True)
class Location:
    """One element of an output, with both sides' exact values.

    Attributes
    ----------
    index
        The element's index in the output (empty for a 0-d output).
    reference, candidate
        Exact value text: ``repr`` for bool and integers, ``float.hex`` for floats (with the
        decimal value alongside), ``real, imag`` pairs for complex values.
    ulp
        Their distance in ULPs of the output's dtype (the larger component for complex
        values); None for bool and integers, and when either side is NaN.
    output
        Which output it belongs to, for functions returning several arrays.
    """

    index: tuple[int, ...]
    reference: str
    candidate: str
    ulp: int | None
    output: int = 0

    def __str__(self) -> str:
        where = f"output {self.output} " if self.output else ""
        ulp = f" ({self.ulp} ULP)" if self.ulp is not None else ""
        return f"{where}{list(self.index)}: reference {self.reference}, candidate {self.candidate}{ulp}"


@dataclass(frozen=True)
class Blame:
    """Which side is wrong, the evidence that says so, and why in one line.

    Attributes
    ----------
    side
        ``candidate``, ``reference``, ``both`` or ``undecided``.
    why
        The reasoning, with the values and the rule or oracle result it rests on.
    evidence
        ``special-case``, ``oracle``, ``standard-rule``, ``vote`` (the last resort) or
        ``none`` (undecided).
    """

    side: Side
    why: str
    evidence: Evidence

    def __str__(self) -> str:
        return f"{self.side} ({self.evidence}): {self.why}"


@dataclass(frozen=True)
class ValueVerdict:
    """The outcome of one faithful comparison: dtype, then shape, then values.

    Attributes
    ----------
    status
        ``passed`` or ``failed``.
    kind
        The failure kind (None when passed).
    reason
        One line saying what differs (None when passed).
    bound
        The error bound the values were held to, with its provenance.
    first, worst
        The first failing element (row-major) and the one furthest off; None when the
        failure is not about elements (dtype, shape, missing, raises) or when passed.
    dtype
        The output dtype both sides were compared in (the reference's), when known; for
        several outputs, their dtypes in order, comma-separated.
    failing
        How many elements failed (0 when passed or not about elements).
    max_ulp
        The largest ULP distance among finite float elements, when measured.
    blame
        Which side is wrong, when the comparison was asked to judge it
        (:func:`diffcheck.compare` in ``values`` mode does); None otherwise.
    """

    status: Literal["passed", "failed"]
    kind: FailureKind | None
    reason: str | None
    bound: Bound
    first: Location | None
    worst: Location | None
    dtype: str | None = None
    failing: int = 0
    max_ulp: int | None = None
    blame: Blame | None = None
    #: Which library computed each side and whether they are independent.
    provenance: Provenance | None = None

    @property
    def passed(self) -> bool:
        """Whether the candidate agreed with the reference."""
        return self.status == "passed"

    def __bool__(self) -> bool:
        """Truth is :attr:`passed`: ``assert compare(..., mode="values")`` fails on a failure,
        and on a pass of one library on both sides (``provenance.one_library``)."""
        return self.passed and not (self.provenance is not None and self.provenance.one_library)

    def __str__(self) -> str:
        if self.passed:
            ulp = f", max {ulps(self.max_ulp)} ULP" if self.max_ulp is not None else ""
            return f"passed ({self.dtype or 'no output'}{ulp}; bound {self.bound})"
        blamed = f"; blame: {self.blame}" if self.blame is not None else ""
        return f"failed [{self.kind}]: {self.reason}{blamed}"
