"""Segments and bindings: the differ's verdict over named slices of one output.

:func:`diff` judges every segment (and every range no segment covers) with the strict NMSE
of :mod:`diffcheck.differ.judge`; :func:`bind_shape`, :func:`bind_precision` and
:func:`bind_segments` downgrade a verdict whose shape, precision or segments do not match
what was asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy.typing as npt

from ..errors import ConfigError
from ..text import one_line
from .exact import exact_difference, measurable, refuse_below_floor
from .judge import _check_tolerance, _compare, compare_outputs, to_host
from .tolerance import strict_tolerance
from .verdict import Segment, SegmentVerdict, Verdict, _Failure

__all__ = ["bind_precision", "bind_segments", "bind_shape", "diff", "equal_segments"]


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


def _check_within(segments: Sequence[Segment], elements: int) -> None:
    """Every segment ends inside the reference: one past it names elements nobody has.

    A shorter *actual* output is a divergence (the verdict fails); a segment past the
    reference's own end is a mistake of the caller, refused before anything is judged.
    """
    for segment in segments:
        if segment.stop > elements:
            raise ConfigError(
                f"segment {one_line(repr(segment.name))[:80]} is [{segment.start}, "
                f"{segment.stop}), past the reference's {elements} elements; give segments "
                f"within [0, {elements})"
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
        Real floating arrays are measured by NMSE; integer and bool arrays are compared
        exactly (any differing element fails, see :mod:`diffcheck.differ.exact`).
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
        When ``segments`` or ``ulp_dtype`` is malformed (misuse, not a divergence); a
        segment past the reference's end is a ConfigError (a ValueError).
    ConfigError
        When ``max_nmse`` is not a number (``True`` and ``"0.5"`` are refused, not read as
        1.0 and 0.5); a NumPy scalar is taken as the Python float it equals. When an array
        is complex (its imaginary part would be dropped), holds integers beyond 2**53 beside
        a float array, or the reference is not all zero yet its energy is below the
        absolute-MSE floor (a 100% error would pass): the data must be changed, not judged.
    """
    max_nmse = strict_tolerance(max_nmse)
    ref, act = to_host(reference), to_host(actual)
    exact = measurable(ref, act)  # before any cast: complex and wide integers are refused
    verdict = compare_outputs(ref, act, max_nmse, ulp_dtype=ulp_dtype)
    if not exact:
        refuse_below_floor(ref, verdict.metrics)
    if expected_elements is not None:
        verdict = bind_shape(verdict, ref.size, act.size, expected_elements)
    if segments is not None:
        if isinstance(segments, int):
            _check_segment_count(segments, ref.size)
            segments = equal_segments(ref.size, [f"segment{i}" for i in range(segments)])
        segments = _as_segments(segments)
        _validate_segments(segments)
        _check_within(segments, ref.size)
        verdict = bind_segments(verdict, ref, act, segments, ulp_dtype=ulp_dtype)
    if exact and (problem := exact_difference(ref, act)) is not None:
        verdict = _downgrade(verdict, problem, verdict.segments)
    return verdict


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
