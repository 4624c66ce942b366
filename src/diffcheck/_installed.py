"""Installed distributions' versions, read once for as long as the import path is unchanged.

``importlib.metadata.version`` scans the path's distribution folders and parses a metadata
file on every call (0.3-1 ms each here): a small ``compare`` asked for six of them, half of
its time. What it reads can change only when a distribution is installed or removed, which
adds or removes a metadata folder and so changes its path entry's mtime, or when the path
itself changes: :func:`path_state` is that key, and the versions are cached under it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Hashable
from importlib import metadata

__all__ = ["installed_version", "installed_versions", "path_state"]

_versions: tuple[Hashable, dict[str, str | None]] | None = None


def path_state() -> Hashable:
    """The import path with each entry's mtime: equal states see the same distributions."""
    state: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


def installed_versions(*names: str) -> dict[str, str | None]:
    """Each distribution's installed version, or None where it is not installed."""
    global _versions
    key = (metadata.version, path_state())  # a test replacing the reader is always called
    if _versions is None or _versions[0] != key:
        _versions = (key, {})
    known = _versions[1]
    for name in names:
        if name not in known:
            try:
                known[name] = metadata.version(name)
            except (metadata.PackageNotFoundError, ValueError):  # ValueError: an invalid name
                known[name] = None
    return {name: known[name] for name in names}


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None where none is installed."""
    return installed_versions(name)[name]
