"""The machine's memory and sizes in bytes: what is available, the default budget, and sizes as text.

Below the runner (which estimates a check against the budget) and the report readers (whose
read limit derives from it), so both take the same budget from one place.
"""

from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Final

from .errors import ConfigError

__all__ = [
    "DEFAULT_FRACTION",
    "MAX_SIZE",
    "available_memory",
    "default_budget",
    "format_bytes",
    "parse_size",
]

#: The share of available memory one check may use by default.
DEFAULT_FRACTION: Final = 0.5

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


_BEYOND_UNITS: Final = 1024**6


def format_bytes(size: float) -> str:
    """``size`` in the largest binary unit that keeps it at 1 or more (``1.5 GiB``).

    Sizes past what any unit here names (estimates of hostile inputs reach 2**80 and beyond,
    where float division overflows) read "over 1024 PiB"."""
    if abs(size) >= _BEYOND_UNITS:
        return "over 1024 PiB"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(size) < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
