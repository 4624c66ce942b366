"""Known upstream divergences: data an adapter declares, never a looser tolerance.

A backend known to miss the default tolerance on some cases, for a reason outside diffcheck
(a library default, an upstream bug), lists those cases from
:meth:`Adapter.known_divergences <diffcheck.adapters.Adapter.known_divergences>`, each with
what diverges, why, and where it is tracked upstream. The check itself is unchanged: its
report still says ``failed``, with the metrics and the reason. What the list changes is how
the result is classified: a sweep counts a measured failure that matches as ``known`` (it
does not fail the sweep unless ``--strict-known``) and reports a matching check that passed
as a known divergence not seen; the conformance kit marks matching cases as non-strict
xfails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..precision import PRECISIONS, PrecisionName

__all__ = ["KnownDivergence", "matching_divergence"]


@dataclass(frozen=True, kw_only=True)
class KnownDivergence:
    """One known upstream divergence of a backend: which cases, why, and where it is tracked.

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
    active
        Asked at every match whether the divergence applies now (for example only while an
        environment variable has a value); None means always. It must not raise.

    Raises
    ------
    ValueError
        When ``ops`` or ``precisions`` is empty or a bare string, a precision is unknown, or
        ``reason`` or ``upstream`` is empty or more than one line.
    """

    ops: tuple[str, ...]
    precisions: tuple[PrecisionName, ...]
    devices: tuple[str, ...] = ()
    reason: str
    upstream: str
    active: Callable[[], bool] | None = None

    def __post_init__(self) -> None:
        for name in ("ops", "precisions", "devices"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(f"{name}={value!r}, but it must be a tuple of names, not a string")
            object.__setattr__(self, name, tuple(value))
        if not self.ops or not self.precisions:
            raise ValueError("a known divergence needs at least one op and one precision")
        unknown = [p for p in self.precisions if p not in PRECISIONS]
        if unknown:
            raise ValueError(
                f"precisions {unknown}, but each must be one of {', '.join(PRECISIONS)}"
            )
        for name in ("reason", "upstream"):
            text = getattr(self, name)
            if not text.strip() or "\n" in text:
                raise ValueError(f"{name}={text!r}, but it must be one non-empty line")

    def is_active(self) -> bool:
        """Whether the divergence applies now (``active`` says so, or there is none)."""
        return self.active is None or bool(self.active())

    def matches(self, spec_device: str | None, op_name: str, precision: str) -> bool:
        """Whether a check of ``op_name`` at ``precision`` on ``spec_device`` has it, now.

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
        """
        if op_name not in self.ops or precision not in self.precisions:
            return False
        if self.devices and (spec_device is None or spec_device not in self.devices):
            return False
        return self.is_active()


def matching_divergence(
    divergences: Iterable[KnownDivergence],
    spec_device: str | None,
    op_name: str,
    precision: str,
) -> KnownDivergence | None:
    """The first of ``divergences`` that :meth:`~KnownDivergence.matches` the check, or None.

    Parameters
    ----------
    divergences
        What the candidate's adapter declares (``adapter.known_divergences()``).
    spec_device, op_name, precision
        The check, as :meth:`KnownDivergence.matches` takes it.

    Returns
    -------
    KnownDivergence or None
        The matching, active divergence, if any.
    """
    return next((d for d in divergences if d.matches(spec_device, op_name, precision)), None)
