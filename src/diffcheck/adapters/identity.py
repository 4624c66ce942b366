"""Whether two backends are the same computation: a backend cannot vouch for itself.

Names are not identity: ``numpy`` and ``numpy:cpu`` are one backend, and so is any name
whose adapter computes through the same library on the same device (an array-api-compat
name over the NumPy namespace, a test double that subclasses the NumPy adapter). Identity is
what :meth:`Adapter.identity <diffcheck.adapters.Adapter.identity>` says: the library that
computes and the device it computes on.
"""

from __future__ import annotations

from functools import lru_cache

from ._protocol import Adapter
from ._registry import resolve

__all__ = ["same_backend"]


@lru_cache(maxsize=256)
def _identity_of_name(name: str) -> tuple[str, str | None]:
    # Resolving imports the adapter module only (never the backend library); cached because
    # planners ask about the same few names for every check.
    return resolve(name).identity()


def _identity(backend: str | Adapter) -> tuple[str, str | None]:
    return _identity_of_name(backend) if isinstance(backend, str) else backend.identity()


def same_backend(a: str | Adapter, b: str | Adapter) -> bool:
    """Whether ``a`` and ``b`` compute with the same library on the same device.

    Parameters
    ----------
    a, b
        Backend names (``numpy``, ``mlx:gpu``) or adapter instances.

    Returns
    -------
    bool
        True when both adapters compute through the same library and either their devices
        are equal or one of them is a plain name whose device the library chooses at run
        time (it may be the other's device: name both devices to compare two of them).

    Raises
    ------
    UnknownBackendError
        When a name does not resolve to an adapter.

    Examples
    --------
    >>> same_backend("numpy", "numpy:cpu")
    True
    >>> same_backend("numpy", "array_api_strict")
    False
    """
    library_a, device_a = _identity(a)
    library_b, device_b = _identity(b)
    if library_a != library_b:
        return False
    return device_a is None or device_b is None or device_a == device_b
