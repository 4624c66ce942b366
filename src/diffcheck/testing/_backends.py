"""Which backends a test run covers by default: every registered adapter's device variants."""

from __future__ import annotations

from ..adapters import adapter_entry_points, parse_backend, resolve
from ..errors import UnknownBackendError

__all__ = ["registered_backends"]


def registered_backends(*, reference: str = "numpy") -> list[str]:
    """Every registered adapter's device variants, except the reference's library.

    An adapter with device variants contributes ``name:device`` for each (``mlx:cpu``,
    ``mlx:gpu``), not its bare name, which only aliases one of them. An adapter without
    variants contributes its name. An adapter that fails to load still contributes its name,
    so a test run reports the failure instead of silently leaving the backend out.

    Parameters
    ----------
    reference
        The reference backend; its library is left out (a backend cannot vouch for itself).

    Returns
    -------
    list of str
        Backend names in registry order, importing no backend library.
    """
    reference_library = parse_backend(reference).library
    names: list[str] = []
    for name in sorted(adapter_entry_points()):
        if name == reference_library:
            continue
        try:
            devices = resolve(name).devices
        except UnknownBackendError:
            names.append(name)
            continue
        names += [f"{name}:{device}" for device in devices] if devices else [name]
    return names
