"""The read limit of a report: the largest report a check within the memory budget writes.

A reader must refuse, before reading it whole, a file that no legal check could have
written, and must read every report a legal check did write. Legal means admitted by the
runner's memory budget (:func:`diffcheck.runner.budget.check_budget`): half the memory available
now, or ``--max-memory``. So the limit is derived from that budget, not fixed:

- output elements: the budget's estimate holds at least
  :data:`RUN_BYTES_PER_OUTPUT_ELEMENT` bytes per output element (three float32 copies of the
  output and the report's serialized outputs), so a check within a budget of ``B`` bytes has
  at most ``B // 54`` output elements. Each stores both outputs as text: base64 of 4 bytes
  (16/3 characters) in schema v2, or an indented list of integers of up to 10 digits in
  schema v1, the larger; :data:`OUTPUT_TEXT_BYTES_PER_ELEMENT` takes v1's;
- segment records: one per segment in ``segments`` and one in ``submission_metrics``, at
  most :data:`SEGMENT_RECORD_BYTES` together. Running a check holds at least
  :data:`RUN_BYTES_PER_SEGMENT` bytes per segment at its peak (measured: about 5.7 KB a
  segment for a 200,000-head attention), so a check that fits ``B`` has at most
  ``B // 4096`` segments;
- everything else (config, precision records, coverage, environment, reasons): at most
  :data:`FIXED_BYTES`, room for several texts at the reader's per-text bound.

Where the available memory cannot be read and no budget is given, the limit is that of
:data:`FALLBACK_BUDGET`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..memory import default_budget, format_bytes

__all__ = [
    "FALLBACK_BUDGET",
    "FIXED_BYTES",
    "OUTPUT_TEXT_BYTES_PER_ELEMENT",
    "RUN_BYTES_PER_OUTPUT_ELEMENT",
    "RUN_BYTES_PER_SEGMENT",
    "SEGMENT_RECORD_BYTES",
    "ReadLimit",
    "largest_report_bytes",
    "report_read_limit",
]

#: The least the runner's estimate counts per output element: three float32 copies of the
#: output (12 bytes) and the report's serialized outputs (42 bytes); a test ties it to
#: :func:`diffcheck.runner.budget.estimate_memory`.
RUN_BYTES_PER_OUTPUT_ELEMENT: Final = 54
#: Both outputs' text per element, in the larger encoding: a v1 list of integers below 2**32
#: written with an indent of 2 (8 spaces, 10 digits, a comma, a newline), twice; v2's base64
#: takes 2 x 16/3.
OUTPUT_TEXT_BYTES_PER_ELEMENT: Final = 2 * 20
#: One segment's record and its submission-metrics entry, serialized (a real one is about
#: 577 bytes; the test of the worst case builds one with the longest names and floats).
SEGMENT_RECORD_BYTES: Final = 1024
#: The least a run holds per segment at its peak (verdict, record and metric objects).
RUN_BYTES_PER_SEGMENT: Final = 4096
#: Everything in a report but its outputs and segments, with room for texts at the
#: reader's per-text bound (1 MiB).
FIXED_BYTES: Final = 16 * 1024 * 1024
#: The budget assumed where the available memory cannot be read.
FALLBACK_BUDGET: Final = 8 * 1024**3


def largest_report_bytes(elements: int, segments: int) -> int:
    """The most bytes a report of ``elements`` output elements and ``segments`` segments has."""
    return FIXED_BYTES + elements * OUTPUT_TEXT_BYTES_PER_ELEMENT + segments * SEGMENT_RECORD_BYTES


@dataclass(frozen=True)
class ReadLimit:
    """A read limit, with the budget it derives from (for the one-line refusal)."""

    budget: int
    source: str

    @property
    def bytes(self) -> int:
        return largest_report_bytes(
            self.budget // RUN_BYTES_PER_OUTPUT_ELEMENT, self.budget // RUN_BYTES_PER_SEGMENT
        )

    def explain(self) -> str:
        """Why this limit: the budget behind it, and what to do about a larger report."""
        return (
            f"the largest report a check within the memory budget of "
            f"{format_bytes(self.budget)} ({self.source}) writes; raise it with --max-memory"
        )


def report_read_limit(max_memory: int | None = None) -> ReadLimit:
    """The read limit under ``max_memory`` (default: the runner's default budget)."""
    if max_memory is not None:
        return ReadLimit(max_memory, "--max-memory")
    budget = default_budget()
    if budget is None:
        return ReadLimit(FALLBACK_BUDGET, "assumed: the available memory cannot be read")
    return ReadLimit(budget, "half the memory available now")
