"""Backend adapters: the protocol, the registry, the NumPy reference and the generic path."""

from __future__ import annotations

from ._protocol import Adapter, Capabilities, Execution, Probe, ProbeStatus, Role, storage_name
from ._registry import (
    ENTRY_POINT_GROUP,
    BackendName,
    adapter_entry_points,
    known_backends,
    parse_backend,
    resolve,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Adapter",
    "BackendName",
    "Capabilities",
    "Execution",
    "Probe",
    "ProbeStatus",
    "Role",
    "adapter_entry_points",
    "known_backends",
    "parse_backend",
    "resolve",
    "storage_name",
]
