"""Finding adapters by name: entry points first, then array-api-compat libraries.

Listing names reads entry-point metadata only; no adapter module and no backend library is
imported until a backend is resolved, and none is initialized until it is probed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from .._installed import path_state
from ..errors import UnknownBackendError
from ..install import FIRST_PARTY_ADAPTERS
from ._protocol import Adapter
from .array_api import ARRAY_API_LIBRARIES, ArrayApiAdapter

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendName",
    "adapter_entry_points",
    "entry_point_snapshot",
    "known_backends",
    "parse_backend",
    "resolve",
]

ENTRY_POINT_GROUP = "diffcheck.adapters"


@dataclass(frozen=True)
class BackendName:
    """A parsed backend name: the library and an optional device suffix."""

    library: str
    device: str | None

    def __str__(self) -> str:
        return f"{self.library}:{self.device}" if self.device else self.library


_snapshot: dict[str, EntryPoint] | None = None
_scanned: tuple[Hashable, dict[str, EntryPoint]] | None = None


def _path_state() -> Hashable:
    """What the installed distributions depend on (:func:`diffcheck._installed.path_state`).

    The scan function is part of the key so that a test replacing it is always called.
    """
    return (entry_points, path_state())


def _scan() -> dict[str, EntryPoint]:
    """The adapter entry points, read again only when the installed distributions may differ.

    A scan reads every installed distribution's metadata (about 25 ms with 80 installed);
    a bundle replay or a ``compare`` resolves two names, so an unchanged path reuses it.
    """
    global _scanned
    key = _path_state()
    if _scanned is None or _scanned[0] != key:
        _scanned = (key, {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)})
    return _scanned[1]


@contextlib.contextmanager
def entry_point_snapshot() -> Iterator[None]:
    """Read the adapter entry points once for the duration of the block.

    Scanning installed distributions costs milliseconds; a sweep plan validates every check
    by backend name, so it scans once per plan instead of twice per check.
    """
    global _snapshot
    outer = _snapshot
    if outer is None:
        _snapshot = _scan()
    try:
        yield
    finally:
        _snapshot = outer


def adapter_entry_points() -> dict[str, EntryPoint]:
    """Registered adapters by name (metadata only; nothing is imported)."""
    return dict(_snapshot if _snapshot is not None else _scan())


def known_backends() -> list[str]:
    """Every name a backend can be addressed by, registered adapters first.

    A first-party adapter that is not installed is a name too: asking for it says how to
    install it, and a typo of it is answered with it.
    """
    registered = sorted(adapter_entry_points())
    return registered + sorted(
        (set(ARRAY_API_LIBRARIES) | set(FIRST_PARTY_ADAPTERS)) - set(registered)
    )


def parse_backend(text: str) -> BackendName:
    """Split ``library[:device]``; UnknownBackendError when no adapter answers to it."""
    library, _, device = text.partition(":")
    listing = "'diffcheck backends' lists every backend"
    if not library or (text.count(":") > 1) or (":" in text and not device):
        raise UnknownBackendError(text, hint=f"it must be LIBRARY or LIBRARY:DEVICE; {listing}")
    if library not in adapter_entry_points() and library not in ARRAY_API_LIBRARIES:
        if library in FIRST_PARTY_ADAPTERS:
            install = FIRST_PARTY_ADAPTERS[library].install
            raise UnknownBackendError(text, hint=f"its adapter is not installed: {install}")
        from ..suggest import nearest

        found = nearest(library, known_backends())
        guess = f'did you mean "{found}{text[len(library) :]}"? ' if found else ""
        raise UnknownBackendError(text, hint=f"{guess}{listing}")
    return BackendName(library, device or None)


def resolve(text: str) -> Adapter:
    """The adapter instance for a backend name (imports the adapter module, not the backend).

    Raises
    ------
    UnknownBackendError
        When the name or its device suffix is unknown, or the adapter cannot be loaded.
    """
    name = parse_backend(text)
    entry = adapter_entry_points().get(name.library)
    if entry is None:
        return ArrayApiAdapter(name.library, name.device)
    try:
        cls = entry.load()
    except Exception as error:  # a broken plugin must not take the CLI down with a traceback
        raise UnknownBackendError(
            text, hint=f"its adapter {entry.value} failed to load: {type(error).__name__}: {error}"
        ) from error
    if not (isinstance(cls, type) and issubclass(cls, Adapter)):
        raise UnknownBackendError(
            text, hint=f"entry point {entry.value} is not an Adapter subclass"
        )
    if name.device is not None and name.device not in cls.devices:
        from ..suggest import nearest

        devices = ", ".join(f"{name.library}:{d}" for d in cls.devices) or "none"
        found = nearest(name.device, cls.devices)
        guess = f'did you mean "{name.library}:{found}"? ' if found else ""
        raise UnknownBackendError(text, hint=f"{guess}known devices: {devices}")
    return cls(name.device)
