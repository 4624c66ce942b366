"""Probing backends for ``--only-available``, in a throwaway process.

Probing imports the backend library (mlx, wgpu...), which can crash or take a GPU driver
with it; doing it in ``python -m diffcheck.sweep.worker --probe`` keeps the sweep parent
free of every backend import, as the worker isolation does for checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .plan import Pair

__all__ = ["Availability", "probe_backends", "unavailable_pairs"]


@dataclass(frozen=True)
class Availability:
    """One backend's probe: ``available``, ``unavailable`` or ``error``, and why."""

    name: str
    status: str
    reason: str | None

    @property
    def is_available(self) -> bool:
        return self.status == "available"


def probe_backends(names: Sequence[str], *, timeout_s: float = 120.0) -> dict[str, Availability]:
    """Probe ``names`` in one subprocess; a crash or timeout there marks them ``error``."""
    unique = list(dict.fromkeys(names))
    if not unique:
        return {}
    command = [sys.executable, "-m", "diffcheck.sweep.worker", "--probe", *unique]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        return {n: Availability(n, "error", f"probe exceeded {timeout_s:g} s") for n in unique}
    found: dict[str, Availability] = {}
    for line in done.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        found[item["name"]] = Availability(item["name"], item["status"], item.get("reason"))
    why = f"probe process ended with status {done.returncode} before probing it"
    return {n: found.get(n, Availability(n, "error", why)) for n in unique}


def unavailable_pairs(pairs: Sequence[Pair]) -> list[tuple[Pair, str]]:
    """The non-required pairs that cannot run here, with why (for ``--only-available``).

    A required pair is never left out: its not_run checks must fail the sweep.
    """
    optional = [pair for pair in pairs if not pair.required]
    names = [n for p in optional if p.unresolved is None for n in (p.candidate, p.reference)]
    probes = probe_backends(names)
    left: list[tuple[Pair, str]] = []
    for pair in optional:
        if pair.unresolved is not None:
            left.append((pair, pair.unresolved))
            continue
        for name in (pair.candidate, pair.reference):
            probe = probes[name]
            if not probe.is_available:
                left.append((pair, f"{name} is {probe.status}: {probe.reason}"))
                break
    return left
