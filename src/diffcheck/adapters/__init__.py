"""Backend adapters: the protocol, the registry, the NumPy reference and the generic path."""

from __future__ import annotations

from .._installed import installed_version, installed_versions
from ._protocol import Adapter, Capabilities, Execution, Probe, ProbeStatus, Role, storage_name
from ._registry import (
    ENTRY_POINT_GROUP,
    BackendName,
    adapter_entry_points,
    known_backends,
    parse_backend,
    resolve,
)
from .api_divergences import KnownApiDivergence, matching_api_divergence
from .api_inputs import ApiCase, InputClass
from .divergences import (
    Failure,
    KnownDivergence,
    KnownDivergenceFailure,
    failure_of,
    matching_divergence,
)
from .identity import same_backend

__all__ = [
    "ENTRY_POINT_GROUP",
    "Adapter",
    "ApiCase",
    "BackendName",
    "Capabilities",
    "Execution",
    "Failure",
    "InputClass",
    "KnownApiDivergence",
    "KnownDivergence",
    "KnownDivergenceFailure",
    "Probe",
    "ProbeStatus",
    "Role",
    "adapter_entry_points",
    "failure_of",
    "installed_version",
    "installed_versions",
    "known_backends",
    "matching_api_divergence",
    "matching_divergence",
    "parse_backend",
    "resolve",
    "same_backend",
    "storage_name",
]
