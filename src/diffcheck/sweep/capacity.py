"""How many local workers this machine can hold at once (the cap on ``--jobs``).

Each local worker is a process of its own (a warm worker or a fresh interpreter) doing
CPU-bound numerical work, so more workers than usable CPUs only time-slice them, and each
needs memory: about 50 MiB once NumPy and a backend are loaded (measured with NumPy,
array-api-strict and MLX), plus a check's own arrays. The cap is the smaller of the CPUs
this process may run on and the memory available now divided by :data:`WORKER_BYTES`.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["WORKER_BYTES", "capped_jobs", "machine_jobs"]

#: Memory set aside per worker: its ~50 MiB baseline and room for a check's arrays.
WORKER_BYTES = 256 * 1024 * 1024


def _cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


def _available_bytes() -> int | None:
    """MemAvailable (Linux), else free physical pages; None where neither is known."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def machine_jobs() -> tuple[int, str]:
    """(how many workers this machine holds, why: the CPUs and memory it counted)."""
    cpus = _cpus()
    available = _available_bytes()
    if available is None:
        return cpus, f"{cpus} usable CPU{'s' if cpus != 1 else ''}"
    by_memory = max(1, available // WORKER_BYTES)
    why = (
        f"{cpus} usable CPU{'s' if cpus != 1 else ''} and {available / 2**30:.1f} GiB "
        f"available at {WORKER_BYTES >> 20} MiB per worker"
    )
    return min(cpus, by_memory), why


def capped_jobs(requested: int | None) -> tuple[int, str | None]:
    """The jobs to run: ``requested`` (the machine's figure when None), capped at what it holds.

    Returns the number and, when a requested value was lowered, a line saying so.
    """
    jobs, why = machine_jobs()
    if requested is None:
        return jobs, None
    if requested <= jobs:
        return requested, None
    return jobs, f"--jobs {requested} is more than this machine holds ({why}); running {jobs}"
