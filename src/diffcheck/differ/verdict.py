"""What the differ hands back: a :class:`Verdict` with its metrics, segments and neighbours.

Plain frozen records, no arithmetic: :mod:`diffcheck.differ.judge` measures and decides,
:mod:`diffcheck.differ.segments` splits an output into segments and binds shapes and
precisions, :mod:`diffcheck.differ.render` prints a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from ..provenance import Provenance

__all__ = [
    "ABSOLUTE_MSE_FLOOR",
    "AROUND_RADIUS",
    "Around",
    "DeviceDiff",
    "FloorFigures",
    "Metrics",
    "Segment",
    "SegmentVerdict",
    "Verdict",
]

#: Below this reference energy the NMSE denominator is meaningless; absolute MSE is used.
ABSOLUTE_MSE_FLOOR = 1e-30

Status = Literal["passed", "failed"]


@dataclass(frozen=True)
class Metrics:
    """What the comparator measured on one array or one segment of it."""

    element_count: int
    nmse: float
    max_abs: float
    reference_mse: float
    uses_absolute_mse: bool
    #: Flat index (within the compared range) of the first largest absolute difference.
    max_abs_index: int
    #: Largest distance between paired elements in units in the last place of the output's
    #: storage format (``ulp_dtype``); ``+0`` and ``-0`` coincide and a pair straddling zero
    #: counts the representable values on both sides of it.
    max_ulp: int


@dataclass(frozen=True)
class Segment:
    """A named slice ``[start, stop)`` of the flattened output, judged on its own.

    ``label`` prefixes failure messages (the lifecycle uses ``ReusedContext`` for the wire
    name ``reused_context``, as the reference tool does); it defaults to ``name``.
    """

    name: str
    start: int
    stop: int
    label: str = ""

    @property
    def display(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class SegmentVerdict:
    """One segment's own verdict."""

    segment: Segment
    status: Status
    reason: str | None
    metrics: Metrics | None


#: Elements shown on each side of an index of interest (:attr:`Verdict.around`).
AROUND_RADIUS: Final = 3


@dataclass(frozen=True, eq=False)
class Around:
    """Both outputs' values next to one index of interest: flat ``[start, start + len)``.

    ``what`` says why the index matters: ``"max |diff|"``, ``"first non-finite in
    reference"`` or ``"first non-finite in actual"``. Values are the outputs' own, widened
    to float (the report holds their exact bits). Two records are equal when their values
    have the same bits, so a NaN equals the same NaN (float equality would make a verdict
    that shows a NaN unequal to itself).
    """

    what: str
    index: int
    start: int
    reference: tuple[float, ...]
    actual: tuple[float, ...]

    def _key(self) -> tuple[str, int, int, bytes, bytes]:
        bits = [np.array(v, np.float64).tobytes() for v in (self.reference, self.actual)]
        return self.what, self.index, self.start, bits[0], bits[1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Around) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class FloorFigures(Protocol):
    """What a verdict shows of its precision floor (:class:`diffcheck.floor.Floor`)."""

    @property
    def passed(self) -> bool: ...

    def summary(self) -> str: ...


@dataclass(frozen=True)
class Verdict:
    """The outcome of one comparison. A divergence is data here, never an exception."""

    status: Status
    reason: str | None
    metrics: Metrics | None
    tolerance: float
    segments: tuple[SegmentVerdict, ...] = field(default=())
    #: The values around the largest difference and around a first non-finite value, so a
    #: failure can be read without the arrays (measured on a device, only these come back).
    around: tuple[Around, ...] = field(default=())
    #: Which library computed each side and whether they are independent (``compare``
    #: fills it; ``diff`` sees only arrays and leaves it None).
    provenance: Provenance | None = None
    #: The precision floor the candidate was also judged against (a check of a registered
    #: op, ``compare``); None where none was measured (``diff`` sees only two arrays).
    floor: FloorFigures | None = None
    #: Why no floor was measured where the check measures one (``compare`` of a function
    #: NumPy cannot run in float64, or whose truth is not finite); the tolerance stands.
    floor_note: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        """Truth is :attr:`passed`, so ``assert diffcheck.diff(...)`` fails on a failure,
        and a pass of one library on both sides (``provenance.one_library``) is false too:
        like a self-test, it is never a pass for the backend."""
        return self.passed and not (self.provenance is not None and self.provenance.one_library)

    @property
    def first_failing_segment(self) -> SegmentVerdict | None:
        return next((s for s in self.segments if s.status == "failed"), None)

    @property
    def worst_segment(self) -> SegmentVerdict | None:
        measured = [s for s in self.segments if s.metrics is not None]
        return max(measured, key=lambda s: s.metrics.nmse if s.metrics else -1.0, default=None)

    def __str__(self) -> str:
        from .render import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from .render import render_html

        return render_html(self)


class _Failure(Exception):
    """Internal: a comparator error, carrying metrics when they were measured."""

    def __init__(
        self, reason: str, metrics: Metrics | None = None, at: tuple[str, int] | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.metrics = metrics
        #: The index the failure is about (a first non-finite value), and what it is.
        self.at = at


@dataclass(frozen=True)
class DeviceDiff:
    """The verdict, the output's exact host copy (flat float32, or None when not asked for),
    and where it was measured."""

    verdict: Verdict
    actual: npt.NDArray[np.float32] | None
    where: str
