"""The ``diffcheck.ops`` entry-point group: every op, first-party or a plugin's, found the same way.

A package registers an op with one line in its ``pyproject.toml``::

    [project.entry-points."diffcheck.ops"]
    gelu = "my_package.gelu:Gelu"

The name is the op's CLI token and must equal the class's ``name``; the value is an
:class:`~diffcheck.ops.Op` subclass, instantiated once. diffcheck's own ops register the same
way in its own ``pyproject.toml``.

Discovery is lazy and happens once per process: importing diffcheck reads no metadata;
the first lookup scans the group and imports the op modules (which must import their own
heavy dependencies inside methods, never at module level). A plugin that fails to load, is
not an Op, or claims a name (or alias) another package also claims is left out, and using
that name, or listing ops, gives a one-line error naming the package and the entry point.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Final

from .._distribution import DISTRIBUTION, IMPORT_PACKAGE
from ..errors import ConfigError, UnknownOpError
from ..text import check_name, one_line
from ._base import Op

__all__ = [
    "CORE_PACKAGE",
    "ENTRY_POINT_GROUP",
    "FIRST_PARTY",
    "OpPluginError",
    "OpRegistry",
    "OpSource",
]

ENTRY_POINT_GROUP: Final = "diffcheck.ops"
CORE_PACKAGE: Final = DISTRIBUTION

#: diffcheck's own ops, in listing order, exactly as its pyproject.toml registers them (a
#: test keeps the two equal). Used as the core's entries only when the installed metadata
#: lists none of them: a source tree run uninstalled, or installed before they were added.
FIRST_PARTY: Final[Mapping[str, str]] = {
    "rms-norm": "diffcheck.ops.rms_norm:RmsNorm",
    "gemm": "diffcheck.ops.gemm:Gemm",
    "silu-mul": "diffcheck.ops.silu_mul:SiluMul",
    "context-lifecycle": "diffcheck.ops.lifecycle:ContextLifecycle",
    "softmax": "diffcheck.ops.softmax:Softmax",
    "layer-norm": "diffcheck.ops.layer_norm:LayerNorm",
    "rope": "diffcheck.ops.rope:Rope",
    "attention": "diffcheck.ops.attention:Attention",
    "add-rms-norm": "diffcheck.ops.add_rms_norm:AddRmsNorm",
}


class OpPluginError(ConfigError):
    """An op plugin that cannot be used: it failed to load, or its name is claimed twice."""


@dataclass(frozen=True)
class OpSource:
    """Where one op comes from: its entry point and the package that declares it."""

    name: str
    #: ``module:attribute`` of the entry point.
    value: str
    #: The distribution that declares it (``diffcheck`` for the first-party ops).
    package: str

    @property
    def label(self) -> str:
        return f"{self.value} from package {self.package}"


def _package(entry: EntryPoint) -> str:
    # An entry point into the core's import package is the core's, whatever name the
    # distribution that declares it was installed under (an older tree installed as
    # ``diffcheck`` and this one side by side declare the same ops once).
    if entry.value.split(":")[0].split(".")[0] == IMPORT_PACKAGE:
        return CORE_PACKAGE
    dist = getattr(entry, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "an unknown package"


def _sources() -> list[OpSource]:
    """Every declared op, each (name, value, package) once, core first in its own order."""
    found: dict[tuple[str, str, str], OpSource] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        source = OpSource(entry.name, entry.value, _package(entry))
        found.setdefault((source.name, source.value, source.package), source)
    sources = list(found.values())
    if not any(s.package == CORE_PACKAGE for s in sources):
        sources += [OpSource(name, value, CORE_PACKAGE) for name, value in FIRST_PARTY.items()]
    core_order = {name: index for index, name in enumerate(FIRST_PARTY)}
    return sorted(
        sources,
        key=lambda s: (s.package != CORE_PACKAGE, core_order.get(s.name, 0), s.name, s.package),
    )


def _load(source: OpSource) -> Op[Any]:
    """Import and instantiate one op; OpPluginError (one line) when it cannot be used."""
    entry = EntryPoint(source.name, source.value, ENTRY_POINT_GROUP)
    try:
        loaded = entry.load()
    except Exception as error:  # a broken plugin must not take every command down
        raise OpPluginError(
            f'op "{source.name}" ({source.label}) failed to load: '
            f"{type(error).__name__}: {error}".replace("\n", " ")
        ) from None
    if not (isinstance(loaded, type) and issubclass(loaded, Op)):
        raise OpPluginError(
            f'op "{source.name}" ({source.label}) is not an diffcheck.ops.Op subclass'
        )
    try:
        op = loaded()
    except Exception as error:
        raise OpPluginError(
            f'op "{source.name}" ({source.label}) cannot be instantiated: '
            f"{type(error).__name__}: {error}".replace("\n", " ")
        ) from None
    for name in (source.name, *op.aliases):
        # An op's name becomes a folder of a sweep's output and is printed in listings.
        try:
            check_name("op", name)
        except ValueError as error:
            raise OpPluginError(
                f"op {one_line(repr(source.name)[:80])} ({source.label}) cannot be used: {error}"
            ) from None
    if op.name != source.name:
        raise OpPluginError(
            f'op "{source.name}" ({source.label}) names itself "{op.name}"; '
            "the entry point name must be the op's name"
        )
    return op


class OpRegistry(Mapping[str, Op[Any]]):
    """Every usable op by its canonical name, loaded from the entry points on first use.

    Iteration is in listing order: diffcheck's own ops first, then plugins by name.
    """

    def __init__(self) -> None:
        self._ops: dict[str, Op[Any]] | None = None
        self._aliases: dict[str, Op[Any]] = {}
        self._origin: dict[str, OpSource] = {}
        #: Names that cannot be used, each with its one-line error.
        self._problems: dict[str, OpPluginError] = {}

    def _discover(self) -> dict[str, Op[Any]]:
        if self._ops is not None:
            return self._ops
        claims: dict[str, list[OpSource]] = {}
        for source in _sources():
            claims.setdefault(source.name, []).append(source)
        ops: dict[str, Op[Any]] = {}
        for name, sources in claims.items():
            if len(sources) > 1:
                self._problems[name] = _clash(name, sources)
                continue
            try:
                ops[name] = _load(sources[0])
            except OpPluginError as error:
                self._problems[name] = error
                continue
            self._origin[name] = sources[0]
        self._claim_aliases(ops)
        self._ops = ops
        return ops

    def _claim_aliases(self, ops: dict[str, Op[Any]]) -> None:
        """Aliases answer to their op, unless another op or alias claims the same name.

        A clash disables the name on every side (an op's canonical name included), so a
        lookup never silently picks one package's op over another's.
        """
        owners: dict[str, list[str]] = {}
        for name, op in ops.items():
            for alias in op.aliases:
                owners.setdefault(alias, []).append(name)
        for alias, names in owners.items():
            clashing = alias in ops or alias in self._problems or len(names) > 1
            if not clashing:
                self._aliases[alias] = ops[names[0]]
                continue
            holders = ([alias] if alias in self._origin else []) + names
            self._problems[alias] = _clash(alias, [self._origin[n] for n in holders])
            ops.pop(alias, None)

    # -- Mapping -----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Op[Any]:
        return self._discover()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._discover())

    def __len__(self) -> int:
        return len(self._discover())

    def __repr__(self) -> str:
        return f"OpRegistry({list(self._discover())})"

    # -- lookups -----------------------------------------------------------------------------

    def get_op(self, name: str) -> Op[Any]:
        """The op called ``name`` (canonical or alias).

        Raises
        ------
        OpPluginError
            When a plugin of that name failed to load or the name is claimed twice.
        UnknownOpError
            When no op answers to ``name``.
        """
        ops = self._discover()
        op = ops.get(name) or self._aliases.get(name)
        if op is not None:
            return op
        if name in self._problems:
            raise self._problems[name]
        from ..suggest import did_you_mean

        known = [*ops, *self._aliases]
        raise UnknownOpError(
            name, hint=f"{did_you_mean(name, known)}; 'diffcheck ops' lists every op"
        )

    def source(self, name: str) -> OpSource:
        """Where the op ``name`` (canonical) comes from."""
        self._discover()
        return self._origin[name]

    def problems(self) -> list[OpPluginError]:
        """One error per plugin that cannot be used (load failures and name clashes)."""
        self._discover()
        return list(self._problems.values())

    def reset(self) -> None:
        """Forget what was discovered (tests that install or break a plugin)."""
        self.__init__()  # type: ignore[misc]


def _clash(name: str, sources: list[OpSource]) -> OpPluginError:
    listed = " and ".join(s.label for s in sources)
    return OpPluginError(
        f'op name "{name}" is claimed by {listed}; uninstall one of them to use it'
    )
