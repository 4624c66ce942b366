"""Kernel identity: an open registry of hand-written GPU kernels, keyed by name.

A :class:`Kernel` is a name (unique in the process), the integer constants its sources must
declare (the tiles and workgroup sizes its launch plan assumes), and optionally its own
source per shading language. diffcheck's built-in kernels carry no source: the raw-GPU
adapters ship theirs (``diffcheck_wgpu/kernels/*.wgsl``, ``diffcheck_metal/kernels/*.metal``)
under the kernel's name. An op plugin's kernel brings its source with it, so a plugin adds a
raw-GPU kernel without an edit to diffcheck or to an adapter.

The registry exists so that a name means one kernel: adapters cache compiled pipelines and
reports label launches by name, so two different kernels under one name would silently run
the wrong code. :func:`register_kernel` refuses that.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "SHADING_LANGUAGES",
    "Kernel",
    "KernelSource",
    "ShadingLanguage",
    "check_kernel_source",
    "declared_constants",
    "kernel_named",
    "register_kernel",
    "registered_kernels",
    "source_for",
]

#: The shading languages of the raw-GPU adapters: WGSL (``wgpu``) and MSL (``metal``).
ShadingLanguage = Literal["wgsl", "msl"]
SHADING_LANGUAGES: Final[tuple[ShadingLanguage, ...]] = ("wgsl", "msl")


@dataclass(frozen=True)
class KernelSource:
    """A kernel's text in one shading language and its entry point.

    The entry point is the function the adapter compiles and the name reports give the
    launch (``kernel_entrypoint``), so it should say what runs (``gelu_f32``).
    """

    entry: str
    text: str = field(repr=False)


@dataclass(frozen=True)
class Kernel:
    """One hand-written kernel: its name, the constants its sources declare, and its sources.

    Parameters
    ----------
    name
        Unique in the process (see :func:`register_kernel`); also the pipeline cache key.
    constants
        ``const NAME: u32 = value;`` (WGSL) or ``constant uint NAME = value;`` (MSL) lines
        every source of this kernel must declare with these values (checked on load), so the
        launch plan and the kernel's indexing cannot drift apart.
    sources
        The kernel's own source per shading language. Empty for diffcheck's built-in
        kernels, whose sources the adapters ship; an op plugin gives its kernels' sources
        here. An adapter without a source for its language does not run the kernel's op.
    """

    name: str
    constants: Mapping[str, int] = field(default_factory=dict)
    sources: Mapping[ShadingLanguage, KernelSource] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(
                f"kernel name {self.name!r}: use lower-case letters, digits and underscores"
            )
        unknown = set(self.sources) - set(SHADING_LANGUAGES)
        if unknown:
            raise ValueError(
                f"kernel {self.name!r} has sources in {sorted(unknown)}; "
                f"the raw-GPU adapters read {' and '.join(SHADING_LANGUAGES)}"
            )

    # Hashed by name (equal kernels share it), so kernels key mappings and pipeline caches.
    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name


_REGISTRY: dict[str, Kernel] = {}


def register_kernel(kernel: Kernel) -> Kernel:
    """Add ``kernel`` to the registry and return it (registering an equal kernel again is a no-op).

    Raises
    ------
    ValueError
        When a different kernel already holds the name.
    """
    held = _REGISTRY.setdefault(kernel.name, kernel)
    if held != kernel:
        raise ValueError(
            f"kernel name {kernel.name!r} is already registered by a different kernel; "
            "give the new kernel a name of its own (for instance prefixed by its package)"
        )
    return held


def kernel_named(name: str) -> Kernel:
    """The registered kernel called ``name``.

    Raises
    ------
    KeyError
        Naming the registered kernels.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"no kernel is registered as {name!r} (registered: {known})") from None


def registered_kernels() -> tuple[Kernel, ...]:
    """Every registered kernel, in registration order (the built-in ones first)."""
    return tuple(_REGISTRY.values())


#: How messages name each language, and the file extension of its sources.
_LANGUAGE_NAMES: Final[Mapping[ShadingLanguage, tuple[str, str]]] = {
    "wgsl": ("WGSL", "wgsl"),
    "msl": ("MSL", "metal"),
}


def source_for(
    kernel: Kernel,
    language: ShadingLanguage,
    shipped: Mapping[str, tuple[str, str]],
    read: Callable[[str], str],
) -> tuple[KernelSource, str]:
    """The ``language`` source an adapter compiles for ``kernel``, and where it came from.

    The kernel's own source (an op plugin's) first, else the one the adapter ships:
    ``shipped`` maps kernel names to ``(filename, entry)`` and ``read`` returns a shipped
    file's text. The second value names the source in messages.

    Raises
    ------
    KeyError
        When neither exists.
    """
    label, extension = _LANGUAGE_NAMES[language]
    own = kernel.sources.get(language)
    if own is not None:
        return own, f"{kernel.name}.{extension} (the {kernel.name!r} kernel's own {label} source)"
    entry = shipped.get(kernel.name)
    if entry is None:
        raise KeyError(
            f"kernel {kernel.name!r} has no {label} source: its op gives none and none ships here"
        )
    filename, function = entry
    return KernelSource(function, read(filename)), filename


# `const TILE_M: u32 = 64u;` (WGSL) or `constant uint TILE_M = 64;` (MSL).
_CONSTANT = re.compile(
    r"^\s*(?:const|constant)\s+(?:uint\s+)?(\w+)\s*(?::\s*u32\s*)?=\s*(\d+)u?\s*;", re.M
)


def declared_constants(source: str) -> dict[str, int]:
    """The unsigned integer constants a WGSL or MSL kernel source declares at file scope."""
    return {name: int(value) for name, value in _CONSTANT.findall(source)}


def check_kernel_source(kernel: Kernel, source: str, *, origin: str) -> None:
    """Refuse a kernel source whose constants differ from ``kernel.constants``.

    Raises
    ------
    ValueError
        Naming the source, the constant, what it declares and what the launch plan uses.
    """
    declared = declared_constants(source)
    for name, expected in kernel.constants.items():
        if declared.get(name) != expected:
            raise ValueError(
                f"{origin} declares {name}={declared.get(name)}, but the launch plan of kernel "
                f"{kernel.name!r} uses {name}={expected}; update the kernel and its plan together"
            )
