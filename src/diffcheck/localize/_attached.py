"""A failed verdict of ``compare(..., locate=True)``, with where inside ``fn`` it diverged.

The verdicts stay what they are (the same fields, the same reports): these subclasses only
carry a :class:`~diffcheck.localize.Localization` beside them, as ``verdict.located``, and
show its summary (the first wrong call) under the verdict's own text. ``located`` is not a
dataclass field, so nothing that serializes a verdict sees it.
"""

from __future__ import annotations

import html
from typing import Any

from ..differ import Verdict
from ..values import ValueVerdict
from ._result import Localization

__all__ = ["LocatedValueVerdict", "LocatedVerdict", "attach"]


def _located_text(verdict: Any) -> str:
    located: Localization | None = verdict.located
    if located is not None:
        return "located: " + located.summary().replace("\n", "\n  ")
    note = verdict.locate_note
    return f"located: not run ({note})" if note else ""


class _Located:
    located: Localization | None
    #: Why ``located`` is None: the comparison passed (nothing to locate), or locate failed.
    locate_note: str


class LocatedVerdict(Verdict, _Located):
    """A :class:`~diffcheck.Verdict` with ``located``: where inside ``fn`` it diverged."""

    def __str__(self) -> str:
        extra = _located_text(self)
        return f"{super().__str__()}\n{extra}" if extra else super().__str__()

    def _repr_html_(self) -> str:
        extra = _located_text(self)
        base = super()._repr_html_()
        return f"{base}<pre>{html.escape(extra)}</pre>" if extra else base


class LocatedValueVerdict(ValueVerdict, _Located):
    """A :class:`~diffcheck.values.ValueVerdict` with ``located`` (see :class:`LocatedVerdict`)."""

    def __str__(self) -> str:
        extra = _located_text(self)
        return f"{super().__str__()}\n{extra}" if extra else super().__str__()


def attach(
    verdict: Verdict | ValueVerdict, located: Localization | None, note: str = ""
) -> Verdict | ValueVerdict:
    """``verdict`` as its located subclass, carrying ``located`` (or why there is none)."""
    kind: type[Any] = LocatedVerdict if isinstance(verdict, Verdict) else LocatedValueVerdict
    copy = object.__new__(kind)
    copy.__dict__.update(verdict.__dict__)
    object.__setattr__(copy, "located", located)
    object.__setattr__(copy, "locate_note", note)
    result: Verdict | ValueVerdict = copy
    return result
