"""How to install diffcheck's packages, in the one wording every hint uses.

None of diffcheck's distributions is on the package index (the index name ``diffcheck``
belongs to another project), so a hint that said ``pip install diffcheck-mlx`` would send a
reader to a package that does not exist, or to someone else's. Every hint that names one of
them is built here, as an editable install from a copy of the repository, the command the
README's Install section gives; the README names the git-URL form beside it.

The first-party adapters are listed here too, so that a backend whose adapter is not
installed is still known by name: ``diffcheck backends`` lists it with its install command
and resolving it says how to install it, instead of "unknown backend".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["FIRST_PARTY_ADAPTERS", "FirstPartyAdapter", "core_install", "plugin_install"]

#: Where the commands run; said once per hint, since a path is meaningless without it.
WHERE: Final = "in a diffcheck checkout"


def _spec(folder: str, extras: tuple[str, ...]) -> str:
    return f"'{folder}[{','.join(extras)}]'" if extras else folder


def core_install(*extras: str) -> str:
    """The command that installs the core with ``extras``, e.g. ``core_install("fuzz")``."""
    return f"pip install -e {_spec('.', extras)} {WHERE}"


def plugin_install(folder: str, *extras: str) -> str:
    """The command that installs the plugin in ``folder`` (``adapters/mlx``) with ``extras``."""
    return f"pip install -e {_spec(folder, extras)} {WHERE}"


@dataclass(frozen=True)
class FirstPartyAdapter:
    """An adapter shipped in the repository's ``adapters/`` folder, known before it is installed."""

    name: str
    folder: str
    devices: tuple[str, ...]
    #: How to install it where it runs: one line, naming the extra for each platform.
    install: str


FIRST_PARTY_ADAPTERS: Final[dict[str, FirstPartyAdapter]] = {
    adapter.name: adapter
    for adapter in (
        FirstPartyAdapter(
            "mlx",
            "adapters/mlx",
            ("cpu", "gpu"),
            f"{plugin_install('adapters/mlx', 'cpu')} (Linux without a GPU; [cuda] with an "
            "NVIDIA GPU, no extra on macOS)",
        ),
        FirstPartyAdapter(
            "wgpu",
            "adapters/wgpu",
            ("vulkan", "metal", "d3d12", "opengl"),
            plugin_install("adapters/wgpu"),
        ),
        FirstPartyAdapter(
            "metal", "adapters/metal", (), f"{plugin_install('adapters/metal', 'pyobjc')} (macOS)"
        ),
        FirstPartyAdapter(
            "example", "adapters/example", ("cpu",), plugin_install("adapters/example")
        ),
    )
}
