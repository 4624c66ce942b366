"""The sweep matrix file (TOML), schema version 1: which ops and shapes, on which backend pairs.

A matrix names backend *pairs* (a reference and a candidate), *ops* with lists of *shapes*
(each shape a table of that op's own parameters), and defaults for seeds, precisions and
tolerances. :mod:`diffcheck.sweep.plan` expands it into the cross product
op x shape x precision x seed x pair. The format is documented in ``docs/matrix.md`` and its
JSON Schema is generated into ``reports/schema/matrix-v1.json``.

The per-op shape tables are built from each op's params model, so a new op is usable in a
matrix with no change here, and a misspelt parameter is rejected with its location.

Types are strict where TOML would otherwise be coerced: a boolean where a number is
expected (``m = true``, ``seeds = [false]``) is an error, never 1 or 0. The file is read
bounded (:data:`~diffcheck.files.MAX_MATRIX_BYTES`), as a regular file only, so a
FIFO, a device, binary data or pathological nesting is a one-line error, and the text is
pre-scanned (:mod:`.matrix_scan`) so a key the TOML parser would spend minutes on is too.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from .._numbers import U64_MAX
from ..config import DEFAULT_REFERENCE, DEFAULT_SEED
from ..errors import ConfigError, ReportError, UnknownOpError
from ..files import MAX_MATRIX_BYTES, read_regular
from ..ops import OPS, get_op
from ..precision import PrecisionName
from ..text import check_name, one_line
from .matrix_scan import check_matrix_text

__all__ = [
    "MATRIX_SCHEMA_VERSION",
    "Defaults",
    "MatrixFile",
    "OpEntry",
    "PairEntry",
    "ShapeEntry",
    "Tolerances",
    "load_matrix",
    "op_field_name",
    "ops_table_model",
    "parse_matrix",
]

MATRIX_SCHEMA_VERSION: Literal[1] = 1

Seed = Annotated[int, Field(ge=0, le=U64_MAX)]
PositiveFinite = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


def _accepts_bool(annotation: Any) -> bool:
    if annotation is bool or annotation is Any:
        return True
    return any(_accepts_bool(arg) for arg in get_args(annotation))


class _Strict(BaseModel):
    # strict: TOML has real integers, floats and strings; `m = "4"` or `m = 4.0` is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        # pydantic's lax mode reads true as 1; a matrix saying `m = true` is a mistake.
        if not isinstance(data, dict):
            return data
        for name, info in cls.model_fields.items():
            key = info.alias or name
            value = data.get(key, data.get(name))
            values = value if isinstance(value, list) else [value]
            if any(isinstance(v, bool) for v in values) and not _accepts_bool(info.annotation):
                shown = str(value).lower() if isinstance(value, bool) else "a list with a boolean"
                raise ValueError(
                    f"{key} = {shown}: a boolean where a number is expected; write a number"
                )
        return data


class Tolerances(_Strict):
    """NMSE tolerances by candidate precision; a precision left out keeps the layer below."""

    f32: PositiveFinite | None = Field(None, description="Tolerance of f32 checks.")
    f16: PositiveFinite | None = Field(None, description="Tolerance of f16 checks.")
    bf16: PositiveFinite | None = Field(None, description="Tolerance of bf16 checks.")

    def get(self, precision: PrecisionName) -> float | None:
        """The tolerance this table sets for ``precision``, if any."""
        value: float | None = getattr(self, precision)
        return value


class _ToleranceLayer(_Strict):
    """One layer of tolerance settings: an explicit ``max_nmse`` or a table by precision."""

    max_nmse: PositiveFinite | None = Field(
        None, description="One NMSE tolerance for every precision (excludes `tolerances`)."
    )
    tolerances: Tolerances | None = Field(
        None, description="NMSE tolerances by precision (excludes `max_nmse`)."
    )

    @model_validator(mode="after")
    def _one_kind(self) -> _ToleranceLayer:
        if self.max_nmse is not None and self.tolerances is not None:
            raise ValueError("set either max_nmse or tolerances, not both")
        return self

    def tolerance(self, precision: PrecisionName) -> float | None:
        """This layer's tolerance for ``precision``, or None to fall through."""
        if self.max_nmse is not None:
            return self.max_nmse
        return None if self.tolerances is None else self.tolerances.get(precision)


def _default_precisions() -> list[PrecisionName]:
    return ["f32"]


class Defaults(_ToleranceLayer):
    """Settings every check starts from."""

    seeds: list[Seed] = Field(
        default_factory=lambda: [DEFAULT_SEED],
        min_length=1,
        description="Input seeds (u64); each shape runs once per seed unless it names its own.",
    )
    precisions: list[PrecisionName] = Field(
        default_factory=_default_precisions,
        min_length=1,
        description="Candidate storage precisions; a pair may run only some of them.",
    )
    timeout_s: PositiveFinite | None = Field(
        None, description="Per-check worker timeout in seconds (the CLI's --timeout wins)."
    )


class PairEntry(_ToleranceLayer):
    """A reference backend and a candidate compared against it."""

    reference: str = Field(DEFAULT_REFERENCE, description="The trusted backend (default numpy).")
    candidate: str = Field(description="The backend under test, e.g. mlx:cpu, wgpu, metal.")
    required: bool = Field(
        False,
        description="When true, a not_run check of this pair fails the sweep (exit 1).",
    )
    precisions: list[PrecisionName] | None = Field(
        None,
        min_length=1,
        description="The precisions this pair runs; requested precisions outside it are skipped.",
    )

    @field_validator("reference", "candidate")
    @classmethod
    def _a_backend_name(cls, value: str) -> str:
        # The pair becomes a folder of the sweep's output and a label of every table.
        return check_name("backend", value, backend=True)


class ShapeEntry(_Strict):
    """Keys every shape table accepts besides its op's parameters."""

    seeds: list[Seed] | None = Field(
        None, min_length=1, description="Seeds for this shape only (replace the op's/defaults)."
    )
    max_nmse: PositiveFinite | None = Field(
        None, description="Tolerance for this shape only, at every precision."
    )


class OpEntry(_ToleranceLayer):
    """Keys every ``[ops.<name>]`` table accepts besides ``shapes``."""

    seeds: list[Seed] | None = Field(
        None, min_length=1, description="Seeds for this op (replace the defaults)."
    )
    precisions: list[PrecisionName] | None = Field(
        None, min_length=1, description="Precisions for this op (replace the defaults)."
    )


def op_field_name(op_name: str) -> str:
    """The Python field name of an op's table (``rms-norm`` -> ``rms_norm``)."""
    return op_name.replace("-", "_")


@cache
def _shape_model(op_name: str) -> type[ShapeEntry]:
    op = OPS[op_name]
    fields: dict[str, Any] = {
        name: (info.annotation, info) for name, info in op.params_model.model_fields.items()
    }
    model: type[ShapeEntry] = create_model(
        f"{type(op).__name__}Shape",
        __base__=ShapeEntry,
        __doc__=f"One {op.name} shape: its parameters (defaults fill the rest) and overrides.",
        **fields,
    )
    return model


@cache
def _op_entry_model(op_name: str) -> type[OpEntry]:
    shape = _shape_model(op_name)
    model: type[OpEntry] = create_model(
        f"{type(OPS[op_name]).__name__}Entry",
        __base__=OpEntry,
        __doc__=f"The {op_name} shapes to run.",
        shapes=(list[shape], Field(min_length=1, description="Shapes to run.")),  # type: ignore[valid-type]
    )
    return model


class _OpsBase(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _canonical_names(cls, data: Any) -> Any:
        # Accept aliases (metal-context) but give an unknown op a message naming the known ones.
        if not isinstance(data, dict):
            return data
        canonical: dict[str, Any] = {}
        for key, value in data.items():
            try:
                name = get_op(str(key)).name
            except UnknownOpError:
                known = ", ".join(OPS)
                raise ValueError(f"unknown op {key!r}; known ops: {known}") from None
            if name in canonical:
                raise ValueError(f"op {name!r} is listed twice (once under an alias)")
            canonical[name] = value
        return canonical

    @model_validator(mode="after")
    def _not_empty(self) -> _OpsBase:
        if all(getattr(self, op_field_name(name)) is None for name in OPS):
            raise ValueError("list at least one op")
        return self

    def entries(self) -> list[tuple[str, OpEntry]]:
        """The listed ops as (canonical name, entry), in registry order."""
        found = ((name, getattr(self, op_field_name(name))) for name in OPS)
        return [(name, entry) for name, entry in found if entry is not None]


@cache
def ops_table_model(names: tuple[str, ...] | None = None) -> type[_OpsBase]:
    """The ``[ops]`` table's model: one optional entry per registered op (or per ``names``)."""
    fields: dict[str, Any] = {
        op_field_name(name): (
            _op_entry_model(name) | None,
            Field(None, alias=name, description=f"Shapes of {name}."),
        )
        for name in (tuple(OPS) if names is None else names)
    }
    model: type[_OpsBase] = create_model(
        "Ops", __base__=_OpsBase, __doc__="Ops to run, by name.", **fields
    )
    return model


#: The ``[ops]`` table model of the ops registered now.
OpsTable = ops_table_model()


class MatrixFile(_Strict):
    """A sweep matrix, schema version 1."""

    schema_version: Literal[1] = Field(description="Always 1 for this layout.")

    @field_validator("schema_version", mode="before")
    @classmethod
    def _an_integer(cls, value: Any) -> Any:
        # 1.0 == 1 and true == 1 in Python, but neither is a schema version.
        if type(value) is not int:
            raise ValueError(
                f"schema_version = {str(value)[:40]!r} is not an integer; write schema_version = 1"
            )
        return value

    description: str = Field("", description="What this matrix is for (shown in the summary).")
    defaults: Defaults = Field(default_factory=Defaults)
    pairs: list[PairEntry] = Field(min_length=1, description="Backend pairs to compare.")
    ops: OpsTable = Field(  # type: ignore[valid-type]
        description="Ops and their shapes, as [ops.<name>] tables."
    )

    def op_entries(self) -> list[tuple[str, OpEntry]]:
        """The listed ops as (canonical name, entry), in registry order."""
        table = cast(_OpsBase, self.ops)
        return table.entries()


def _location(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    # A TOML key can hold any character: escape them so the error stays one line.
    return one_line(f"{where}: {message}" if where else message)


def parse_matrix(data: dict[str, Any], *, source: str = "matrix") -> MatrixFile:
    """Validate a decoded matrix document.

    Raises
    ------
    ConfigError
        One line naming ``source``, the first failing key and what was wrong with it.
    """
    try:
        return MatrixFile.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"{source}: {_location(error)}") from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be a matrix") from None


def load_matrix(path: Path) -> MatrixFile:
    """Read and validate a TOML matrix file.

    Parameters
    ----------
    path
        The ``.toml`` file.

    Returns
    -------
    MatrixFile
        The validated matrix (shapes are not yet checked against op limits: see ``plan``).

    Raises
    ------
    ConfigError
        When the file cannot be read, is not TOML, or does not match schema v1.
    """
    try:
        raw = read_regular(Path(path), limit=MAX_MATRIX_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"matrix {path}: cannot read it: No such file or directory") from None
    except ReportError as error:
        raise ConfigError(f"matrix {path}: cannot use it: {error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"matrix {path}: not UTF-8 text (byte {error.start}); a matrix is a TOML file"
        ) from None
    check_matrix_text(text, f"matrix {one_line(str(path))}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"matrix {path}: not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"matrix {path}: nested too deeply to be a matrix") from None
    return parse_matrix(data, source=f"matrix {path}")
