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

from dataclasses import dataclass
from typing import Any, Final

from ..errors import ConfigError
from ..memory import (
    DEFAULT_FRACTION,
    available_memory,
    default_budget,
    format_bytes,
    parse_size,
)

__all__ = [
    "BYTES_PER_SEGMENT",
    "DEFAULT_FRACTION",
    "MemoryEstimate",
    "available_memory",
    "check_budget",
    "default_budget",
    "estimate_memory",
    "format_bytes",
    "parse_size",
]

# A v2 report holds each output's 4 bytes an element as raw bytes, their base64 text, the
# JSON document and its encoded bytes while it is written (4 + 3 x 5.34, rounded up).
_REPORT_BYTES_PER_OUTPUT: Final = 2 * 21
#: What a run holds per judged segment at its peak: the segment, its verdict, its report and
#: submission-metrics records and their JSON text. Measured (peak RSS over the process's
#: own before the run, the differ's kernel loaded): 5.2 KB a segment for attention with
#: 2,000 to 40,000 heads of one element; a test re-measures it against this figure.
BYTES_PER_SEGMENT: Final = 6 * 1024
#: One segment's precision floor: its figures and its report record (a pydantic model
#: holding a name and three floats: about 1 KiB measured with tracemalloc, with headroom).
FLOOR_BYTES_PER_SEGMENT = 1536


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak bytes one check holds, by what holds them."""

    inputs: int
    device_inputs: int
    reference_wide: int
    outputs: int
    report: int
    #: The per-segment objects of the verdict and the report (one segment per head...).
    segments: int = 0
    #: The precision floor's float64 arrays: the inputs widened for the truth, then the
    #: truth, two honest twins, the candidate widened and one difference (outputs); and each
    #: segment's floor figures and record.
    floor: int = 0

    @property
    def total(self) -> int:
        return (
            self.inputs
            + self.device_inputs
            + self.reference_wide
            + self.outputs
            + self.report
            + self.segments
            + self.floor
        )

    def describe(self) -> str:
        """One line: the total, then each part."""
        parts = (
            ("inputs", self.inputs),
            ("device copies", self.device_inputs),
            ("float64 reference", self.reference_wide),
            ("outputs", self.outputs),
            ("report", self.report),
            ("segments", self.segments),
            ("precision floor", self.floor),
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
    the float32 outputs (reference, candidate, and the candidate's storage copy), the
    report, whose two outputs are serialized as base64 of their bytes, the precision floor's
    float64 arrays (inputs and five output-sized arrays), and
    :data:`BYTES_PER_SEGMENT` for each judged segment (counted by the op, never built: an
    attention check has one per head). The differ's scratch is bounded by its chunk size
    and left out, as is what a process loads once (the differ's compiled kernel, ~110 MB).
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
        segments=BYTES_PER_SEGMENT * check.op.segment_count(check.params),
        floor=8 * inputs
        + 5 * 8 * outputs
        + FLOOR_BYTES_PER_SEGMENT * check.op.segment_count(check.params),
    )


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
