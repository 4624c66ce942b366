"""Which backends a test run covers by default: every registered adapter's device variants."""

from __future__ import annotations

from ..adapters import adapter_entry_points, parse_backend, resolve
from ..errors import UnknownBackendError

__all__ = ["default_backends", "installed_libraries", "registered_backends"]


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


def installed_libraries(*, reference: str = "numpy") -> list[str]:
    """The array-api-compat libraries installed here (torch, jax, array_api_strict...), by name.

    Found by module search, importing none of them; a library that is also a registered
    adapter, or is the reference's, is left to :func:`registered_backends`.
    """
    import importlib.util

    from ..adapters.array_api import ARRAY_API_LIBRARIES

    reference_library = parse_backend(reference).library
    registered = set(adapter_entry_points())
    return [
        name
        for name, (module, _) in ARRAY_API_LIBRARIES.items()
        if name not in registered
        and name != reference_library
        and importlib.util.find_spec(module.split(".")[0]) is not None
    ]


def default_backends(*, reference: str = "numpy") -> list[str]:
    """What a test runs on by default: every registered adapter's device variants, then every
    installed array-api-compat library (its default device). A backend that cannot run the
    test here skips with its reason when the test runs."""
    return registered_backends(reference=reference) + installed_libraries(reference=reference)
