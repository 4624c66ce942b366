"""The check runner: one required check from its config to a completed report.

``run``
    The pipeline (:func:`run_check`, :func:`execute_check`): probe, inputs, reference,
    candidate, compare, bind; every step can end the check with a status and a reason.
``records``
    The report's documents and result records built from a check and its outcome.
``budget``
    The memory a check needs, estimated before anything is allocated, and the budget
    it is held to.

What a check is (:class:`~diffcheck.config.Check`) lives in :mod:`diffcheck.config`, below
the report models that store it; the runner sits above both.
"""

from __future__ import annotations

from .budget import (
    DEFAULT_FRACTION,
    MemoryEstimate,
    available_memory,
    check_budget,
    default_budget,
    estimate_memory,
    format_bytes,
    parse_size,
)
from .records import completed_document, initial_document, result_record
from .run import Outcome, bind, execute_check, run_check

__all__ = [
    "DEFAULT_FRACTION",
    "MemoryEstimate",
    "Outcome",
    "available_memory",
    "bind",
    "check_budget",
    "completed_document",
    "default_budget",
    "estimate_memory",
    "execute_check",
    "format_bytes",
    "initial_document",
    "parse_size",
    "result_record",
    "run_check",
]
