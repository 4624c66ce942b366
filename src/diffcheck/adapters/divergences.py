"""Known upstream divergences: data an adapter declares, never a looser tolerance.

A backend known to miss the default tolerance on some cases, for a reason outside diffcheck
(a library default, an upstream bug), lists those cases from
:meth:`Adapter.known_divergences <diffcheck.adapters.Adapter.known_divergences>`, each with
what diverges, why, where it is tracked upstream, the worst NMSE measured for it
(``measured_nmse``) and a ceiling (``max_nmse``, with ``bound_source`` saying where the
figure came from). The ceiling may exceed the measured figure by at most
:data:`CEILING_MULTIPLE` times: a declaration is data about a measurement, so a ceiling of
1.0 resting on 1e-9 measured is refused where it is declared, and can never turn a 1e-4
error into ``known``. The check itself is unchanged: its report still says ``failed``,
with the metrics and the reason.

A declaration is a model, not an excuse: it names the twin of :mod:`diffcheck.floor` that
computes what the backend does (``twin="tf32 operands"`` for TF32 tensor cores), and a
failure is excused only when the check's precision floor found the candidate's output
within the floor of that twin's (the report's ``result.floor``). A declaration without a
twin documents the divergence and excuses nothing; one whose twin does not reproduce the
candidate's error (a 1% error under a TF32 model) excuses nothing either.

What the list changes is how a failure is classified, and only a failure it explains: a
measured NMSE over the tolerance and at most the ceiling (:class:`Failure` of kind
``nmse``). A crash, a non-finite value, a length, shape or precision mismatch, a timeout, or
an NMSE above the ceiling (a sentinel left in a buffer measures thousands) is never excused.
A sweep counts an explained failure as ``known`` and reports a matching check that passed
as a known divergence not seen; the conformance kit marks matching cases as strict xfails
that expect exactly :class:`KnownDivergenceFailure`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ..precision import PRECISIONS, TWIN_NAMES, PrecisionName, TwinName

__all__ = [
    "CEILING_MULTIPLE",
    "Failure",
    "FailureKind",
    "KnownDivergence",
    "KnownDivergenceFailure",
    "failure_of",
    "matching_divergence",
]

#: The most a ceiling may exceed the worst NMSE measured for it: headroom for run-to-run and
#: machine-to-machine spread, not room for another bug.
CEILING_MULTIPLE = 10.0

#: ``nmse``: the comparator measured an NMSE that is not below the tolerance, and nothing
#: else went wrong; ``other``: anything else (crash, non-finite, length/shape/precision
#: mismatch, timeout, a reason that is not an NMSE measurement).
FailureKind = Literal["nmse", "other"]

# One clause of a measured-NMSE failure as the comparator words it, optionally prefixed by a
# segment label ("DropFlush: NMSE 2840.5 is not below tolerance 0.0000001"), and the max_abs
# clause that follows it. Any other clause in the reason makes the failure "other".
_NUMBER = r"(?:-?(?:[0-9]+(?:\.[0-9]*)?|inf|NaN)(?:e[-+]?[0-9]+)?)"
_NMSE_CLAUSE = re.compile(
    rf"(?:[A-Za-z0-9_ \[\),.-]+: )?NMSE {_NUMBER} is not below tolerance {_NUMBER}"
)
_MAX_ABS_CLAUSE = re.compile(rf"max_abs={_NUMBER}")
# The precision floor's clause (diffcheck.floor.Floor.reason): the same measurement against
# the float64 truth.
_FLOOR_CLAUSE = re.compile(r"precision floor: NMSE .*|precision floor: [^;]+: NMSE .*")


class KnownDivergenceFailure(AssertionError):
    """Raised by the conformance kit for a failure a declared divergence explains.

    Its known-divergence xfails are ``strict`` and expect exactly this exception
    (``raises=``), so any other failure of the same case (a crash, a NaN, an NMSE above the
    declared ceiling) fails the run, and a case that passes is an XPASS(strict) failure.
    """


@dataclass(frozen=True)
class Failure:
    """What kind of failure a check had, and the worst NMSE it measured (None if none).

    Build it with :func:`failure_of`.
    """

    kind: FailureKind
    nmse: float | None
    #: The twins that model the candidate's output within the precision floor (the
    #: report's ``result.floor``); empty when none does or no floor was measured.
    models: tuple[str, ...] = ()


def failure_of(
    reason: str | None,
    nmse: float | None,
    tolerance: float,
    segment_nmses: Iterable[float | None] = (),
    models: Iterable[str] = (),
) -> Failure:
    """Classify a failed check from its report's reason and measured NMSEs.

    Parameters
    ----------
    reason
        The failure's reason, as the report stores it.
    nmse
        The aggregate NMSE, or None when the comparator measured none.
    tolerance
        The check's tolerance.
    segment_nmses
        The NMSE of each failed segment (None where a segment was not measured).
    models
        The twins that model the candidate within its precision floor.

    Returns
    -------
    Failure
        Kind ``nmse`` only when an NMSE was measured, every measured value is finite, the
        worst one is not below ``tolerance``, and every clause of ``reason`` is an NMSE
        measurement (or its ``max_abs``); otherwise kind ``other``.
    """
    measured = [nmse, *segment_nmses]
    if nmse is None or any(v is None or not math.isfinite(v) for v in measured):
        return Failure("other", None if nmse is None or not math.isfinite(nmse) else nmse)
    worst = max(v for v in measured if v is not None)
    clauses = (reason or "").split("; ")
    words = (_NMSE_CLAUSE, _MAX_ABS_CLAUSE, _FLOOR_CLAUSE)
    words_nmse = all(any(w.fullmatch(c) for w in words) for c in clauses) and any(
        _NMSE_CLAUSE.fullmatch(c) or _FLOOR_CLAUSE.fullmatch(c) for c in clauses
    )
    floor_only = not any(_NMSE_CLAUSE.fullmatch(c) for c in clauses)
    if not words_nmse or not (worst >= tolerance or floor_only):
        return Failure("other", worst)
    return Failure("nmse", worst, tuple(models))


def _one_line(name: str, text: object) -> None:
    if not isinstance(text, str) or not text.strip() or len(text.splitlines()) != 1:
        raise ValueError(f"{name}={text!r}, but it must be one non-empty line of text")


@dataclass(frozen=True, kw_only=True)
class KnownDivergence:
    """One known upstream divergence of a backend: which cases, why, where, and how far.

    Parameters
    ----------
    ops
        Names of the ops it affects (``gemm``, ``context-lifecycle``: the CLI tokens).
    precisions
        The precisions it affects.
    devices
        The device suffixes it affects (``"gpu"`` of ``mlx:gpu``); empty for every device,
        the plain backend name included.
    reason
        One line: what diverges and why.
    upstream
        Where it is tracked: a URL or an issue reference.
    max_nmse
        The ceiling: the largest NMSE it excuses (finite, > 0). A measured NMSE above it is
        a failure of its own, never this divergence. At most :data:`CEILING_MULTIPLE` times
        ``measured_nmse``, e.g. 10x the worst NMSE observed.
    measured_nmse
        The worst NMSE measured for this divergence (finite, > 0): the figure the ceiling
        is bounded by. ``bound_source`` says where it was measured.
    bound_source
        One line: where ``measured_nmse`` was measured and the margin ``max_nmse`` adds.
    active
        Asked at every match whether the divergence applies now (for example only while an
        environment variable has a value); None means always. It must not raise.
    twin
        The twin of :mod:`diffcheck.floor` that models the divergence
        (:data:`diffcheck.precision.TWIN_NAMES`: ``"tf32 operands"``...). A failure is
        excused only when the candidate's output is within the precision floor of this
        twin's; None documents the divergence without excusing anything.

    Raises
    ------
    ValueError
        With one line, when ``ops`` or ``precisions`` is empty or a bare string, a name is
        not a string, a precision is unknown, ``twin`` is not a twin's name, ``max_nmse`` or
        ``measured_nmse`` is not a
        finite number > 0, ``max_nmse`` is more than :data:`CEILING_MULTIPLE` times
        ``measured_nmse``, or ``reason``, ``upstream`` or ``bound_source`` is empty or more
        than one line.
    """

    ops: tuple[str, ...]
    precisions: tuple[PrecisionName, ...]
    devices: tuple[str, ...] = ()
    reason: str
    upstream: str
    max_nmse: float
    measured_nmse: float
    bound_source: str
    active: Callable[[], bool] | None = None
    twin: TwinName | None = None

    def __post_init__(self) -> None:
        for name in ("ops", "precisions", "devices"):
            value = getattr(self, name)
            if isinstance(value, str | bytes):
                raise ValueError(f"{name}={value!r}, but it must be a tuple of names, not a string")
            try:
                names = tuple(value)
            except TypeError:
                raise ValueError(f"{name}={value!r}, but it must be a tuple of names") from None
            if not all(isinstance(item, str) and item for item in names):
                raise ValueError(f"{name}={names!r}, but each name must be a non-empty string")
            object.__setattr__(self, name, names)
        if not self.ops or not self.precisions:
            raise ValueError("a known divergence needs at least one op and one precision")
        unknown = [p for p in self.precisions if p not in PRECISIONS]
        if unknown:
            raise ValueError(
                f"precisions {unknown}, but each must be one of {', '.join(PRECISIONS)}"
            )
        for name in ("reason", "upstream", "bound_source"):
            _one_line(name, getattr(self, name))
        for name, what in (
            ("max_nmse", "the largest NMSE this divergence excuses"),
            ("measured_nmse", "the worst NMSE measured for this divergence"),
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ValueError(f"{name}={value!r}, but it must be a finite number > 0: {what}")
            object.__setattr__(self, name, float(value))
        # A relative 1e-9 absorbs the rounding of decimal figures (1e-10 over 1e-11).
        if self.max_nmse > CEILING_MULTIPLE * self.measured_nmse * (1 + 1e-9):
            raise ValueError(
                f"max_nmse={self.max_nmse!r} is more than {CEILING_MULTIPLE:g}x "
                f"measured_nmse={self.measured_nmse!r}; a ceiling may add at most that "
                "headroom to what was measured (measure the divergence again, or lower it)"
            )
        if self.twin is not None and self.twin not in TWIN_NAMES:
            raise ValueError(
                f"twin={self.twin!r}, but it must be one of {', '.join(TWIN_NAMES)} or None"
            )
        if self.active is not None and not callable(self.active):
            raise ValueError(f"active={self.active!r}, but it must be a callable or None")

    @property
    def bound(self) -> str:
        """The model and ceiling in words: ``modelled by tf32 operands, NMSE <= 1.4e-06
        (measured 1.4e-07: where it came from)``."""
        model = f"modelled by {self.twin}" if self.twin else "no model twin (excuses nothing)"
        return (
            f"{model}, NMSE <= {self.max_nmse:g} (measured {self.measured_nmse:g}: "
            f"{self.bound_source})"
        )

    def is_active(self) -> bool:
        """Whether the divergence applies now (``active`` says so, or there is none)."""
        return self.active is None or bool(self.active())

    def matches(self, spec_device: str | None, op_name: str, precision: str) -> bool:
        """Whether it is declared, and active now, for a check of ``op_name`` at ``precision``.

        Parameters
        ----------
        spec_device
            The device suffix of the candidate's backend name (``"gpu"`` of ``mlx:gpu``), or
            None for the plain name. The plain name runs on the backend's default device,
            which this data cannot know, so it matches only a divergence of every device
            (empty ``devices``): an adapter whose default device may diverge declares that
            from its plain-name instance, with an ``active`` that says when.
        op_name
            The op's name (its CLI token).
        precision
            The check's precision.

        Returns
        -------
        bool
            True when the op, the precision and the device are listed and :meth:`is_active`.
            This says nothing about a failure; :meth:`explains` does.
        """
        if op_name not in self.ops or precision not in self.precisions:
            return False
        if self.devices and (spec_device is None or spec_device not in self.devices):
            return False
        return self.is_active()

    def explains(self, failure: Failure) -> bool:
        """Whether ``failure`` is the kind this divergence excuses, within its ceiling, and
        its twin models the candidate within the precision floor (never without a twin)."""
        return (
            failure.kind == "nmse"
            and failure.nmse is not None
            and math.isfinite(failure.nmse)
            and failure.nmse <= self.max_nmse
            and self.twin is not None
            and self.twin in failure.models
        )


def matching_divergence(
    divergences: Iterable[KnownDivergence],
    spec_device: str | None,
    op_name: str,
    precision: str,
    *,
    failure: Failure | None,
) -> KnownDivergence | None:
    """The first of ``divergences`` declared for the check that explains ``failure``.

    Parameters
    ----------
    divergences
        What the candidate's adapter declares (``adapter.known_divergences()``).
    spec_device, op_name, precision
        The check, as :meth:`KnownDivergence.matches` takes it.
    failure
        The check's failure (:func:`failure_of`): only a divergence that
        :meth:`~KnownDivergence.explains` it is returned. None asks only which divergence is
        declared for the check (for a passed check: a known divergence not seen); it must
        be given explicitly, so no caller excuses a failure without looking at it.

    Returns
    -------
    KnownDivergence or None
        The matching, active divergence, if any.
    """
    return next(
        (
            d
            for d in divergences
            if d.matches(spec_device, op_name, precision)
            and (failure is None or d.explains(failure))
        ),
        None,
    )
