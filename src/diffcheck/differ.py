"""The generic differ: shape binding, then strict NMSE judged segment by segment.

Pure and backend-agnostic: host arrays in, a :class:`Verdict` out. It never names a backend.
The semantics are the reference tool's comparator, exactly:

1. the tolerance must be finite and > 0;
2. the reference must be non-empty and finite (the first non-finite index is reported);
3. the actual output must be non-empty, of the reference's length, and finite;
4. in float64, ``nmse = mean((ref - act)^2) / mean(ref^2)``, falling back to the absolute
   ``mean((ref - act)^2)`` when ``mean(ref^2) < 1e-30``;
5. it passes only when ``nmse < tolerance`` (equality fails); a numerical failure keeps its
   metrics, a validation failure has none.

All figures of one range (both sums, max |diff| and its first index, max ULP, the first
non-finite index of each array) come from one pass over both arrays, in parallel over the
cores, with extra memory bounded by a small constant (:mod:`diffcheck._measure` says how and
why). ULP distances are counted in the output's storage format (``ulp_dtype``): both values
are rounded to nearest-even into that format and mapped to ordered integers in which ``+0``
and ``-0`` coincide, so a pair on either side of zero counts the representable values
between them on both sides (the two smallest subnormals of opposite sign are 2 ulp apart).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from ._measure import Figures, default_ulp_format, measure, ulp_format
from ._measure import _first_bad as _first_bad
from ._numbers import rust_display
from ._tolerance import strict_tolerance
from .provenance import Provenance

__all__ = [
    "ABSOLUTE_MSE_FLOOR",
    "AROUND_RADIUS",
    "Around",
    "Metrics",
    "Segment",
    "SegmentVerdict",
    "Verdict",
    "around",
    "bind_precision",
    "bind_segments",
    "bind_shape",
    "compare_outputs",
    "diff",
    "equal_segments",
    "host_array",
    "reference_problem",
    "to_host",
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

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        """Truth is :attr:`passed`, so ``assert diffcheck.diff(...)`` fails on a failure."""
        return self.passed

    @property
    def first_failing_segment(self) -> SegmentVerdict | None:
        return next((s for s in self.segments if s.status == "failed"), None)

    @property
    def worst_segment(self) -> SegmentVerdict | None:
        measured = [s for s in self.segments if s.metrics is not None]
        return max(measured, key=lambda s: s.metrics.nmse if s.metrics else -1.0, default=None)

    def __str__(self) -> str:
        from ._verdict_render import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from ._verdict_render import render_html

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


def host_array(array: Any) -> npt.NDArray[Any]:
    """A host (NumPy) view of any array, in its own shape, copying only when required.

    NumPy arrays pass through; objects speaking DLPack on the CPU are wrapped without a copy;
    everything else goes through ``numpy.asarray`` (the buffer protocol where it exists).
    """
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "__dlpack__"):
        try:
            return np.from_dlpack(array)
        except (BufferError, TypeError, RuntimeError, ValueError):
            pass  # a device array or an unsupported dtype: let the library convert it
    return np.asarray(array)


def to_host(array: Any) -> npt.NDArray[Any]:
    """A flat host view of any array (see :func:`host_array`)."""
    return host_array(array).reshape(-1)


def _first_non_finite(values: npt.NDArray[Any]) -> int | None:
    """The first index of a NaN or infinity, read in blocks (no full-size temporary)."""
    return _first_bad(values)


def reference_problem(reference: npt.NDArray[Any]) -> str | None:
    """Why ``reference`` cannot be compared against (empty, or holding a NaN or infinity).

    None for a usable reference. The runner stops before dispatching the candidate with
    this reason, and replay re-derives it from a stored reference.
    """
    if reference.size == 0:
        return "reference output is empty"
    index = _first_non_finite(reference)
    return None if index is None else f"reference contains a non-finite value at {index}"


def _metrics(figures: Figures) -> Metrics:
    reference_mse = figures.sum_sq_ref / figures.elements
    mse = figures.sum_sq_diff / figures.elements
    uses_absolute = reference_mse < ABSOLUTE_MSE_FLOOR
    return Metrics(
        element_count=figures.elements,
        nmse=mse if uses_absolute else mse / reference_mse,
        max_abs=figures.max_abs,
        reference_mse=reference_mse,
        uses_absolute_mse=uses_absolute,
        max_abs_index=figures.max_abs_index,
        max_ulp=figures.max_ulp,
    )


def _check_tolerance(tolerance: float) -> None:
    if not math.isfinite(tolerance) or tolerance <= 0.0:
        raise _Failure("tolerance must be finite and strictly positive")


def _check_sizes(
    reference: npt.NDArray[Any], actual_size: int, first_bad: Callable[[], int | None]
) -> None:
    """The checks before measuring; ``first_bad`` finds the reference's first non-finite."""
    if reference.size == 0:
        raise _Failure("reference output is empty")
    if actual_size == 0 or reference.size != actual_size:
        if (index := first_bad()) is not None:
            raise _Failure(f"reference contains a non-finite value at {index}")
        if actual_size == 0:
            raise _Failure("required backend output is empty")
        raise _Failure(f"output length mismatch: reference={reference.size} actual={actual_size}")


def _judge(figures: Figures, tolerance: float) -> Metrics:
    """The verdict rule on measured figures (host or device): metrics, or a ``_Failure``."""
    if (index := figures.first_bad_reference) is not None:
        raise _Failure(
            f"reference contains a non-finite value at {index}",
            at=("first non-finite in reference", index),
        )
    if (index := figures.first_bad_actual) is not None:
        raise _Failure(
            f"required backend contains a non-finite value at {index}",
            at=("first non-finite in actual", index),
        )
    metrics = _metrics(figures)
    if (
        not math.isfinite(metrics.nmse)
        or metrics.nmse < 0.0
        or not math.isfinite(metrics.reference_mse)
        or not math.isfinite(metrics.max_abs)
    ):
        raise _Failure("numerical measurement is non-finite or invalid")
    if not metrics.nmse < tolerance:
        raise _Failure(
            f"NMSE {rust_display(metrics.nmse)} is not below tolerance "
            f"{rust_display(tolerance)}; max_abs={rust_display(metrics.max_abs)}",
            metrics,
        )
    return metrics


def _compare(
    reference: npt.NDArray[Any],
    actual: npt.NDArray[Any],
    tolerance: float,
    ulp_dtype: Any = None,
) -> Metrics:
    _check_tolerance(tolerance)
    _check_sizes(reference, actual.size, lambda: _first_non_finite(reference))
    fmt = default_ulp_format(actual) if ulp_dtype is None else ulp_format(ulp_dtype)
    # One pass measures everything, the first non-finite index of each array included.
    return _judge(measure(reference, actual, fmt), tolerance)


def compare_outputs(
    reference: Any, actual: Any, tolerance: float, *, ulp_dtype: Any = None
) -> Verdict:
    """The reference tool's ``compare_outputs``: one array against another, no segments.

    ``ulp_dtype`` is the storage format ULPs are counted in (``"f16"``, ``"bf16"``, ``"f32"``,
    ``"f64"`` or a dtype); None means the actual array's own floating dtype (float32 for
    anything else). It changes ``max_ulp`` only, never the verdict.
    """
    ref, act = to_host(reference), to_host(actual)
    if ulp_dtype is not None:
        ulp_format(ulp_dtype)  # misuse raises ValueError before anything is measured
    try:
        metrics = _compare(ref, act, tolerance, ulp_dtype)
    except _Failure as failure:
        shown = around(failure.metrics, failure.at, ref.size, ref.__getitem__, act.__getitem__)
        return Verdict("failed", failure.reason, failure.metrics, tolerance, around=shown)
    shown = around(metrics, None, ref.size, ref.__getitem__, act.__getitem__)
    return Verdict("passed", None, metrics, tolerance, around=shown)


def around(
    metrics: Metrics | None,
    at: tuple[str, int] | None,
    size: int,
    reference: Callable[[slice], Any],
    actual: Callable[[slice], Any],
) -> tuple[Around, ...]:
    """The :class:`Around` records of a verdict: next to ``metrics.max_abs_index`` and ``at``.

    ``reference`` and ``actual`` read a slice of each flat output (host or device); only
    those few values are read, so a device output brings back 2 * AROUND_RADIUS + 1 each.
    """
    points = [] if metrics is None else [("max |diff|", metrics.max_abs_index)]
    if at is not None:
        points.append(at)
    shown = []
    for what, index in points:
        window = slice(max(0, index - AROUND_RADIUS), min(size, index + AROUND_RADIUS + 1))
        shown.append(
            Around(
                what,
                index,
                window.start,
                tuple(_floats(reference(window))),
                tuple(_floats(actual(window))),
            )
        )
    return tuple(shown)


def _floats(values: Any) -> list[float]:
    """A few values of any array as Python floats (one conversion, not one per element)."""
    return list(np.asarray(to_host(values), dtype=np.float64).tolist())


def _uncovered(segments: Sequence[Segment], total: int) -> list[Segment]:
    """The ranges of ``[0, total)`` no segment covers, each as a segment named ``uncovered``."""
    gaps = []
    covered_to = 0
    for segment in sorted(segments, key=lambda s: s.start):
        if segment.start > covered_to:
            gaps.append((covered_to, segment.start))
        covered_to = max(covered_to, segment.stop)
    if covered_to < total:
        gaps.append((covered_to, total))
    return [Segment("uncovered", a, b, f"uncovered [{a}, {b})") for a, b in gaps]


def _judge_segments(
    reference: npt.NDArray[Any],
    actual: npt.NDArray[Any],
    segments: Sequence[Segment],
    tolerance: float,
    ulp_dtype: Any = None,
) -> tuple[tuple[SegmentVerdict, ...], str | None]:
    """Judge every segment, then every uncovered gap; return all verdicts and the first failure.

    Every element is judged: a range between segments (or before the first) that no segment
    covers is judged as a segment of its own, named ``uncovered`` (its label gives the range).
    """
    expected = max(s.stop for s in segments)
    if reference.size != expected or actual.size != expected:
        return (), (
            f"segmented output shape: expected {expected}, "
            f"reference {reference.size}, actual {actual.size}"
        )
    verdicts = []
    first_failure: str | None = None
    for segment in [*segments, *_uncovered(segments, expected)]:
        try:
            metrics = _compare(
                reference[segment.start : segment.stop],
                actual[segment.start : segment.stop],
                tolerance,
                ulp_dtype,
            )
            verdicts.append(SegmentVerdict(segment, "passed", None, metrics))
        except _Failure as failure:
            verdicts.append(SegmentVerdict(segment, "failed", failure.reason, failure.metrics))
            first_failure = first_failure or f"{segment.display}: {failure.reason}"
    return tuple(verdicts), first_failure


def _as_segments(segments: Sequence[Any]) -> list[Segment]:
    """``Segment`` objects from segments, ``(start, stop)`` or ``(name, start, stop)`` tuples."""
    result = []
    for item in segments:
        if isinstance(item, Segment):
            result.append(item)
        elif isinstance(item, tuple) and len(item) == 2 and all(type(v) is int for v in item):
            result.append(Segment(f"[{item[0]}, {item[1]})", item[0], item[1]))
        elif (
            isinstance(item, tuple)
            and len(item) == 3
            and isinstance(item[0], str)
            and all(type(v) is int for v in item[1:])
        ):
            result.append(Segment(item[0], item[1], item[2]))
        else:
            raise ValueError(
                f"segment {item!r} is neither a Segment, (start, stop) nor (name, start, stop)"
            )
    return result


def _validate_segments(segments: Sequence[Segment]) -> None:
    if not segments:
        raise ValueError("segments must name at least one segment")
    for segment in segments:
        if not 0 <= segment.start < segment.stop:
            raise ValueError(
                f"segment {segment.name!r} is [{segment.start}, {segment.stop}), "
                "but it must be a non-empty range starting at 0 or later"
            )


def _check_segment_count(count: int, elements: int) -> None:
    """A count of equal segments is checked before a name is made for any of them.

    Each segment holds at least one element, so more segments than elements cannot be
    judged; ``segments=10**9`` on 64 elements is refused here instead of building 10**9
    names (and ``True`` is not a count).
    """
    if isinstance(count, bool) or count < 1:
        raise ValueError(f"segments={count!r} is not a count of segments; give 1 or more")
    if count > elements:
        raise ValueError(
            f"segments={count} asks for more segments than the {elements} elements compared; "
            f"give at most {elements}"
        )


def equal_segments(total: int, names: Sequence[str], labels: Sequence[str] = ()) -> list[Segment]:
    """Split ``total`` elements into ``len(names)`` equal consecutive segments."""
    count = len(names)
    if count == 0 or total % count:
        raise ValueError(f"{total} elements cannot be split into {count} equal segments")
    size = total // count
    return [
        Segment(name, i * size, (i + 1) * size, labels[i] if labels else "")
        for i, name in enumerate(names)
    ]


def diff(
    reference: Any,
    actual: Any,
    *,
    max_nmse: float,
    expected_elements: int | None = None,
    segments: Sequence[Segment | tuple[int, int] | tuple[str, int, int]] | int | None = None,
    ulp_dtype: Any = None,
) -> Verdict:
    """Compare ``actual`` against ``reference`` with the strict NMSE rule.

    Parameters
    ----------
    reference, actual
        Arrays from any library (NumPy, DLPack or buffer-protocol objects); compared flat.
    max_nmse
        The tolerance; a check passes only when NMSE is strictly below it.
    expected_elements
        Shape binding: both outputs must have exactly this many elements, so a pair that is
        equally truncated cannot pass.
    segments
        Ranges judged on their own: :class:`Segment` objects, ``(start, stop)`` or
        ``(name, start, stop)`` tuples (or a count of equal segments), so a large correct
        region cannot hide a small wrong one. Every segment is measured; the first failing
        one names the reason. Ranges may overlap, and need not cover the output: every range
        that no segment covers is judged as a segment of its own named ``uncovered`` (so
        ``[(0, 4), (6, 8)]`` also judges ``[4, 6)``). The last segment must end at the
        output's end; an output of another length fails.
    ulp_dtype
        The storage format ``max_ulp`` counts in (``"f16"``, ``"bf16"``, ``"f32"``, ``"f64"``
        or a dtype); None means the actual array's own floating dtype.

    Returns
    -------
    Verdict
        ``status`` is ``"passed"`` or ``"failed"``; failures carry a reason and, where the
        values were measurable, metrics.

    Raises
    ------
    ValueError
        When ``segments`` or ``ulp_dtype`` is malformed (misuse, not a divergence).
    ConfigError
        When ``max_nmse`` is not a number (``True`` and ``"0.5"`` are refused, not read as
        1.0 and 0.5); a NumPy scalar is taken as the Python float it equals.
    """
    max_nmse = strict_tolerance(max_nmse)
    ref, act = to_host(reference), to_host(actual)
    verdict = compare_outputs(ref, act, max_nmse, ulp_dtype=ulp_dtype)
    if expected_elements is not None:
        verdict = bind_shape(verdict, ref.size, act.size, expected_elements)
    if segments is None:
        return verdict
    if isinstance(segments, int):
        _check_segment_count(segments, ref.size)
        segments = equal_segments(ref.size, [f"segment{i}" for i in range(segments)])
    segments = _as_segments(segments)
    _validate_segments(segments)
    return bind_segments(verdict, ref, act, segments, ulp_dtype=ulp_dtype)


def bind_shape(
    verdict: Verdict, reference_count: int | None, actual_count: int | None, expected: int
) -> Verdict:
    """Fail a verdict whose outputs do not have the configured element count.

    ``None`` stands for a missing output, which fails only a verdict that claims a pass.
    """
    errors = []
    for label, count in (("reference", reference_count), ("actual", actual_count)):
        if count is None:
            if verdict.status == "passed":
                errors.append(f"passed result is missing {label} output")
        elif count != expected:
            errors.append(
                f"{label} output has {count} elements; configured shape requires {expected}"
            )
    if not errors:
        return verdict
    reason = "; ".join([verdict.reason, *errors] if verdict.reason else errors)
    return replace(verdict, status="failed", reason=reason)


def bind_precision(
    verdict: Verdict, configured: str, input_storage: str, output_storage: str
) -> Verdict:
    """Fail a verdict whose candidate stored anything but the ``configured`` precision.

    An adapter that ran f32 when f16 was asked would otherwise pass with f32 accuracy, and
    the check would claim an f16 result it never measured.
    """
    if (input_storage, output_storage) == (configured, configured):
        return verdict
    problem = (
        f"executed precision differs from the configured {configured}: the candidate "
        f"stored inputs as {input_storage} and its output as {output_storage}"
    )
    reason = f"{verdict.reason}; {problem}" if verdict.reason else problem
    return replace(verdict, status="failed", reason=reason)


def bind_segments(
    verdict: Verdict,
    reference: npt.NDArray[Any],
    actual: npt.NDArray[Any],
    segments: Sequence[Segment],
    *,
    ulp_dtype: Any = None,
) -> Verdict:
    """Judge each segment on its own; any failing segment downgrades the verdict.

    Runs even when the aggregate already failed, as the reference tool does, and appends
    the first segment failure to the existing reason.
    """
    try:
        _check_tolerance(verdict.tolerance)
    except _Failure as failure:
        return _downgrade(verdict, failure.reason, ())
    judged, failure_reason = _judge_segments(
        reference, actual, segments, verdict.tolerance, ulp_dtype
    )
    if failure_reason is None:
        return replace(verdict, segments=judged)
    return _downgrade(verdict, failure_reason, judged)


def _downgrade(verdict: Verdict, reason: str, judged: tuple[SegmentVerdict, ...]) -> Verdict:
    combined = f"{verdict.reason}; {reason}" if verdict.reason else reason
    return replace(verdict, status="failed", reason=combined, segments=judged)
