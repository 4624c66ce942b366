"""The kit's failure line: where a failed report's worst element is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..differ import Verdict
    from ..report.models import ReportDocument

__all__ = ["failure_line_of"]


def failure_line_of(document: ReportDocument, verdict: Verdict | None) -> str | None:
    """Where ``verdict`` (re-derived from ``document``'s bits) fails: the worst element by its
    index in the output shape, its segment and neighbouring values; None when nothing was
    compared."""
    from ..differ.render import failure_line

    return None if verdict is None else failure_line(verdict, tuple(document.output_shape))
