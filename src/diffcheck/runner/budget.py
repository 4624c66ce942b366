"""A check's memory, estimated before anything is allocated, and the budget it must fit.

A shape can pass every limit of its op and still need more memory than the machine has
(``gemm`` 46000x46000x46000: 25 GB of inputs, and the report of a 2.1e9-element output
holds both outputs as bit patterns). :func:`estimate_memory` adds up, from the validated
parameters alone, what one check holds at its peak; :func:`check_budget` refuses a check
whose estimate exceeds the budget, with both figures, before its report file exists.

The default budget is :data:`DEFAULT_FRACTION` of the memory available now (``MemAvailable``
in ``/proc/meminfo`` on Linux, free pages from ``os.sysconf`` elsewhere); where neither can
be read there is no default budget and only an explicit ``max_memory`` applies.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from ..errors import ConfigError

__all__ = [
    "DEFAULT_FRACTION",
    "MemoryEstimate",
    "available_memory",
    "check_budget",
    "default_budget",
    "estimate_memory",
    "format_bytes",
    "parse_size",
]

#: The share of available memory one check may use by default.
DEFAULT_FRACTION: Final = 0.5

# A v2 report holds each output's 4 bytes an element as raw bytes, their base64 text, the
# JSON document and its encoded bytes while it is written (4 + 3 x 5.34, rounded up).
_REPORT_BYTES_PER_OUTPUT: Final = 2 * 21

_UNITS: Final = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)")
#: The largest size --max-memory takes (8 EiB, past any machine's memory).
MAX_SIZE: Final = 2**63


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak bytes one check holds, by what holds them."""

    inputs: int
    device_inputs: int
    reference_wide: int
    outputs: int
    report: int

    @property
    def total(self) -> int:
        return self.inputs + self.device_inputs + self.reference_wide + self.outputs + self.report

    def describe(self) -> str:
        """One line: the total, then each part."""
        parts = (
            ("inputs", self.inputs),
            ("device copies", self.device_inputs),
            ("float64 reference", self.reference_wide),
            ("outputs", self.outputs),
            ("report", self.report),
        )
        return (
            f"{format_bytes(self.total)} ("
            + ", ".join(f"{name} {format_bytes(size)}" for name, size in parts)
            + ")"
        )


def _input_elements(op: Any, params: Any, outputs: int) -> int:
    """Float32 input elements of ``op`` at ``params``, computed, never allocated."""
    counter = getattr(op, "input_elements", None)
    if callable(counter):  # an op may say exactly (any op, including third-party ones)
        return int(counter(params))
    p = params
    if op.name == "gemm":
        return int(p.m * p.k + p.n * p.k)
    if op.name == "rms-norm":
        return int(p.tokens * p.dim + p.dim)
    if op.name == "silu-mul":
        return int(2 * p.tokens * p.intermediate)
    if op.name == "context-lifecycle":
        return int(4 * (p.tokens * p.k + 2 * p.intermediate * p.k))
    # An op that does not say: assume inputs three times its output, which covers the
    # element-wise and normalizing ops (and is refused in good time when it is larger).
    return 3 * outputs


def estimate_memory(check: Any) -> MemoryEstimate:
    """What ``check`` (a :class:`~diffcheck.config.Check`) holds at its peak, in bytes.

    Counts the float32 host inputs, one device copy of them (host memory on a CPU backend),
    the reference's float64 widening of inputs and output where the op accumulates wide,
    the float32 outputs (reference, candidate, and the candidate's storage copy), and the
    report, whose two outputs are serialized as base64 of their bytes. The differ's scratch is
    bounded by its chunk size and left out.
    """
    outputs = check.expected_elements
    inputs = _input_elements(check.op, check.params, outputs)
    wide = check.op.wide_reference_accumulation
    return MemoryEstimate(
        inputs=4 * inputs,
        device_inputs=4 * inputs,
        reference_wide=8 * (inputs + outputs) if wide else 0,
        outputs=3 * 4 * outputs,
        report=_REPORT_BYTES_PER_OUTPUT * outputs,
    )


def available_memory() -> int | None:
    """Bytes of memory available now, or None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def default_budget() -> int | None:
    """:data:`DEFAULT_FRACTION` of :func:`available_memory`, or None when unknown."""
    available = available_memory()
    return None if available is None else int(available * DEFAULT_FRACTION)


def parse_size(text: str) -> int:
    """Bytes from ``"8G"``, ``"512MiB"``, ``"1.5GB"`` or a plain count.

    Raises
    ------
    ConfigError
        When ``text`` is not a positive size.
    """
    match = _SIZE.fullmatch(text.strip())
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise ConfigError(
            f"--max-memory {text!r} is not a size; give bytes or a number with K, M, G, T "
            "(powers of 1000) or KiB, MiB, GiB, TiB, e.g. 8G"
        )
    # Decimal, not float: 400 nines is a number too large, never an overflow traceback.
    digits = match.group(1)
    if len(digits) > 40 or Decimal(digits) * _UNITS[unit] > MAX_SIZE:
        raise ConfigError(
            f"--max-memory {text[:60]!r} is over the largest size taken ({MAX_SIZE} bytes, "
            "8 EiB); give a size a machine can have, e.g. 64G"
        )
    size = int(Decimal(digits) * _UNITS[unit])
    if size <= 0:
        raise ConfigError(f"--max-memory {text!r} must be more than 0 bytes")
    return size


def format_bytes(size: float) -> str:
    """``size`` in the largest binary unit that keeps it at 1 or more (``1.5 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(size) < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def check_budget(check: Any, max_memory: int | None = None) -> MemoryEstimate:
    """Refuse ``check`` when its estimate exceeds ``max_memory`` (default: the default budget).

    Returns
    -------
    MemoryEstimate
        The estimate, when it fits (or when no budget is known).

    Raises
    ------
    ConfigError
        With the estimate, the budget and what to do, in one line.
    """
    estimate = estimate_memory(check)
    if max_memory is not None and max_memory <= 0:
        raise ConfigError(f"max_memory={max_memory}, but it must be more than 0 bytes")
    budget = default_budget() if max_memory is None else max_memory
    if budget is not None and estimate.total > budget:
        source = (
            "--max-memory"
            if max_memory is not None
            else f"{DEFAULT_FRACTION:.0%} of the memory available now"
        )
        raise ConfigError(
            f"check {check.op.name} {'x'.join(str(n) for n in check.output_shape)} needs about "
            f"{estimate.describe()}, over the budget of {format_bytes(budget)} ({source}); "
            "choose a smaller shape, or raise the budget (--max-memory, max_memory=)"
        )
    return estimate
