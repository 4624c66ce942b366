"""``diffcheck backends``: every adapter and device, probed, with how to install the rest."""

from __future__ import annotations

from collections.abc import Sequence

from ._parser import OneLineParser

__all__ = ["backends"]


def _library_row(name: str) -> tuple[str, str, str]:
    """An array-api-compat library, found without importing it (metadata and module search)."""
    import importlib.util
    from importlib.metadata import PackageNotFoundError, version

    from ..adapters.array_api import ARRAY_API_LIBRARIES

    root = ARRAY_API_LIBRARIES[name][0].split(".")[0]
    if importlib.util.find_spec(root) is None:
        return (
            name,
            "unavailable",
            f"{root} is not installed; install it (pip install {root.replace('_', '-')}) "
            "to use it as a backend",
        )
    try:
        found = f"{root} {version(root.replace('_', '-'))}"
    except PackageNotFoundError:
        found = root
    return (
        name,
        "installed",
        f"{found}, through array-api-compat (devices as {name}:DEVICE); not probed here, "
        "'diffcheck backends --all' probes it",
    )


def backends(argv: Sequence[str]) -> int:
    """``diffcheck backends``: every adapter and device, probed, then the array-api-compat libraries.

    Registered adapters are probed. The libraries usable by name through array-api-compat
    (torch, cupy, jax, dask, array_api_strict, ...) are listed as installed or not without
    importing them; ``--all`` probes them too (importing each installed one).
    """
    from ..adapters import adapter_entry_points, resolve
    from ..adapters.array_api import ARRAY_API_LIBRARIES
    from ..errors import UnknownBackendError
    from ..install import FIRST_PARTY_ADAPTERS

    parser = OneLineParser(prog="diffcheck backends", description=backends.__doc__)
    parser.add_argument(
        "--all", action="store_true", help="also probe the array-api-compat libraries"
    )
    options = parser.parse_args(argv)
    rows: list[tuple[str, str, str]] = []
    names: list[str] = []
    for name in sorted(adapter_entry_points()):
        try:
            adapter = resolve(name)
        except UnknownBackendError as error:
            rows.append((name, "error", str(error)))
            continue
        names += [name] + [f"{name}:{device}" for device in adapter.devices]
    for name in names:
        probe = resolve(name).probe()
        rows.append((name, probe.status, probe.reason or probe.detail))
    # A first-party adapter that is not installed is listed with its install command, so
    # that a reader who installed the core alone learns that mlx, wgpu and metal exist.
    for name, missing in sorted(FIRST_PARTY_ADAPTERS.items()):
        if name not in adapter_entry_points():
            rows.append((name, "unavailable", f"adapter not installed: {missing.install}"))
    for name in sorted(set(ARRAY_API_LIBRARIES) - set(adapter_entry_points())):
        if options.all:
            probe = resolve(name).probe()
            rows.append((name, probe.status, probe.reason or probe.detail))
        else:
            rows.append(_library_row(name))
    width = max(len(row[0]) for row in rows)
    print(f"{'backend'.ljust(width)}  {'status'.ljust(11)}  detail / reason")
    for name, status, text in rows:
        print(f"{name.ljust(width)}  {status.ljust(11)}  {text}")
    return 0
