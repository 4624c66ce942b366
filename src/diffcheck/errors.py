"""The error hierarchy: one root, subclasses that carry the data a caller acts on.

A numerical divergence is never an exception (it is a verdict); these are for misuse
(bad arguments, unknown names) and broken setups (a report that cannot be written).
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BundleError",
    "ConfigError",
    "DiffcheckError",
    "ReportError",
    "UnknownBackendError",
    "UnknownOpError",
]


class DiffcheckError(Exception):
    """Root of every error diffcheck raises on purpose."""


class ConfigError(DiffcheckError, ValueError):
    """A configuration value is malformed or out of range; the message says which and why."""


class UnknownOpError(ConfigError):
    """An operation name that no registered op answers to."""

    def __init__(self, op: str, *, hint: str = "") -> None:
        super().__init__(f'unsupported operator "{op}"{hint}')
        self.op = op


class UnknownBackendError(ConfigError):
    """A backend name that no adapter, entry point or array-api-compat library answers to."""

    def __init__(self, name: str, *, hint: str = "") -> None:
        message = f'unsupported required backend "{name}"'
        super().__init__(f"{message}; {hint}" if hint else message)
        self.name = name


class BackendError(DiffcheckError):
    """A backend cannot be used as asked; `.adapter` names it and `.reason` says why."""

    def __init__(self, adapter: str, reason: str) -> None:
        super().__init__(f"backend '{adapter}' is unavailable: {reason}; run 'diffcheck backends'")
        self.adapter = adapter
        self.reason = reason


class ReportError(DiffcheckError):
    """A report cannot be created, written or read back."""


class BundleError(ReportError):
    """A finding bundle cannot be written, or is not a bundle this diffcheck can replay."""
