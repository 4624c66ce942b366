"""Reading a report file as hostile input: bounded, regular files only, one-line errors.

Every reader of reports (``diffcheck replay``, ``upgrade``, ``sweep --resume``, the sweep's
settling of worker records) goes through :func:`read_report`. It opens without blocking (a
FIFO cannot hang it), refuses anything but a regular file (``/dev/zero``, a directory, a
device), reads at most :func:`~.limits.report_read_limit` bytes (the largest report a check
within the memory budget writes; a larger file is refused from its size), and turns binary data, deep nesting, an
unknown schema version and every schema violation into one :class:`ReportError` line.

What a report *claims* is bounded by what it *stores*, before anything is built from it:

- while the JSON is decoded, every object may hold at most :data:`MAX_KEYS` keys (the
  largest report object has about 20) and every text value at most :data:`MAX_TEXT_CHARS`
  characters, except an output's ``base64`` or a bundle array's ``data`` (bounded by the
  file's size). An ``environment`` with a million extra keys is refused object by object
  as it is parsed, never validated key by key (pydantic builds one error per extra key:
  gigabytes for a 60 MB file).
- after validation, the output element count the ``config`` derives may exceed the
  elements the stored outputs hold by at most :data:`MAX_UNSTORED_ELEMENTS`
  (:func:`check_derived_sizes`): replay builds one segment per head, row or phase, so a
  3 KB report claiming 2e9 heads is refused in one line instead of building 2e9 segment
  objects. A passing report stores whole outputs (its derived count equals a stored one);
  a failed one with a short output still replays, and disagrees where it was edited.
- a MemoryError while decoding or validating becomes one line naming the file and its size.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, ReportError
from ..files import read_regular
from ..text import one_line
from .fields import check_fields
from .limits import report_read_limit
from .line import remember_path
from .models import MODELS, READABLE_VERSIONS, OutputArray, OutputBits, ReportDocument

__all__ = [
    "BYTES_PER_CONTAINER",
    "BYTES_PER_TEXT",
    "BYTES_PER_VALUE",
    "MAX_FIXED_CONTAINERS",
    "MAX_KEYS",
    "MAX_TEXT_CHARS",
    "MAX_UNSTORED_ELEMENTS",
    "check_derived_sizes",
    "load_json",
    "parse_report",
    "read_report",
    "report_from",
]

#: The most keys one JSON object of a report may hold (the largest model has about 20 fields).
MAX_KEYS = 64
#: The longest text value but an output's base64 (reasons, names, details, timestamps).
MAX_TEXT_CHARS = 1 << 20
#: How far a config may derive more output elements than the stored outputs hold. A real
#: failed check can store a short output (a reference that returned fewer elements); past
#: this many, what replay would build from the config is no longer bounded by the file.
MAX_UNSTORED_ELEMENTS = 1 << 16
#: Arrays and objects a report may open: a fixed allowance (room for any small report; a
#: 100,000-deep nesting still reads as nested too deeply) plus one per this many bytes. A
#: real report opens about three per segment record (577 bytes) and two for its outputs;
#: an empty list costs the decoder 64 bytes for its 3 bytes of text (10^7 ``[]`` in
#: ``config``, 30 MB, took 800 MB before the schema refused them), so they are counted in
#: the bytes, before anything is decoded.
MAX_FIXED_CONTAINERS = 131_072
BYTES_PER_CONTAINER = 64
#: Values (commas) and texts (quote pairs) likewise: a report written by diffcheck (indented,
#: outputs as base64 or one indented integer a line) has far fewer. A text costs the decoder
#: about 50 bytes and a number 32, plus the list's pointer, so a file of bare ``"ab",`` or
#: ``1000,`` held 12 or 7 times its size; at most one value per 8 bytes and one text per
#: 16, the decoded file holds at most a few times its size.
BYTES_PER_VALUE = 8
BYTES_PER_TEXT = 16
#: Keys whose text values are bounded only by the file's size: a report's outputs
#: (``base64``) and a replay bundle's arrays (``data``), which `diffcheck replay` decodes
#: through this reader too.
_UNBOUNDED_TEXT = frozenset({"base64", "data"})


class _Oversized(Exception):
    """Raised from inside the JSON decoder when an object breaks a bound."""


def _bounded_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Called by the decoder once per object, with its pairs, before the dict is made.
    if len(pairs) > MAX_KEYS:
        raise _Oversized(
            f"an object holds {len(pairs)} keys (first {pairs[0][0][:40]!r}), "
            f"over the {MAX_KEYS} any report object has"
        )
    for key, value in pairs:
        if len(key) > 256:
            raise _Oversized(f"a key is {len(key)} characters long, over the 256 allowed")
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS and key not in _UNBOUNDED_TEXT:
            raise _Oversized(
                f"the text of {key[:40]!r} is {len(value)} characters, over the "
                f"{MAX_TEXT_CHARS} allowed"
            )
    return dict(pairs)


def _schema_version(data: Any, source: str) -> int:
    if not isinstance(data, dict):
        raise ReportError(f"report {source} is not a JSON object")
    version = data.get("schema_version")
    # Exactly an int: 2.0 == 2 and True == 1 in Python, but neither is a schema version.
    if type(version) is not int or version not in READABLE_VERSIONS:
        readable = ", ".join(str(v) for v in READABLE_VERSIONS[:-1])
        readable += f" and {READABLE_VERSIONS[-1]}"
        raise ReportError(
            f"report {source} has schema_version {version!r}; this diffcheck reads {readable}"
        )
    return version


def load_json(data: bytes, source: str) -> Any:
    """The JSON value ``data`` holds (strict UTF-8); one ReportError line naming ``source``."""
    source = one_line(source)
    # Counted in the bytes: a bracket, comma or quote inside a text counts too, so each
    # bound is conservative.
    for what, count, per in (
        ("arrays and objects", data.count(b"[") + data.count(b"{"), BYTES_PER_CONTAINER),
        ("values", data.count(b","), BYTES_PER_VALUE),
        ("texts", data.count(b'"') // 2, BYTES_PER_TEXT),
    ):
        allowed = MAX_FIXED_CONTAINERS + len(data) // per
        if count > allowed:
            raise ReportError(
                f"report {source} holds {count} {what} in {len(data)} bytes, over the "
                f"{allowed} a report of its size has; it is refused before it is decoded"
            )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(
            f"report {source} is not UTF-8 text (byte {error.start} is {data[error.start]:#04x})"
        ) from None
    try:
        parsed = json.loads(text, object_pairs_hook=_bounded_object)
    except _Oversized as error:
        raise ReportError(f"report {source} is not a report: {one_line(str(error))}") from None
    except MemoryError:
        raise ReportError(_out_of_memory(source, len(data), "decoding")) from None
    except RecursionError:
        raise ReportError(f"report {source} is nested too deeply to be a report") from None
    except json.JSONDecodeError as error:
        raise ReportError(f"report {source} is not JSON: {error}") from None
    except ValueError as error:  # e.g. an integer past Python's digit limit
        raise ReportError(
            f"report {source} is not a readable report: {one_line(str(error))}"
        ) from None
    return parsed


def _out_of_memory(source: str, size: int | None, stage: str) -> str:
    sized = "" if size is None else f" ({size} bytes)"
    limit = report_read_limit()
    return (
        f"report {source}{sized} ran out of memory while {stage} it; a report this "
        f"size needs several times its size in memory (the read limit is {limit.bytes} "
        f"bytes, {limit.explain()}): give it more memory or replay a smaller report"
    )


def _stored_elements(record: OutputBits | OutputArray | None) -> int | None:
    """The elements an output really holds, from its stored text (not its stated count)."""
    if record is None:
        return None
    if isinstance(record, OutputBits):
        return len(record.f32_bits)
    return (len(record.base64) * 3 // 4) // 4


def check_derived_sizes(document: ReportDocument, source: str) -> None:
    """Refuse a report whose config derives far more output elements than its outputs hold.

    Replay builds per-element and per-segment structures from the config; this bounds them
    by the stored bytes first. A config that describes no valid check, or a report without
    stored outputs (nothing is judged then), passes through: replay reports those itself.

    Raises
    ------
    ReportError
        One line naming ``source``, the derived and the stored element counts.
    """
    from ..ops import get_op  # the op registry loads entry points: only once one is needed

    result = document.result
    if result is None:
        return
    stored = [n for n in map(_stored_elements, (result.reference, result.actual)) if n is not None]
    if not stored:
        return
    config: Any = document.config
    try:
        op = get_op(config.op)
        derived = op.validate(op.params(**{name: getattr(config, name) for name in op.options}))
    except (ConfigError, ValidationError, ValueError):
        return
    if derived > max(stored) and derived > MAX_UNSTORED_ELEMENTS:
        raise ReportError(
            f"report {source} has a config deriving {derived} output elements, but its stored "
            f"outputs hold at most {max(stored)} (more than {MAX_UNSTORED_ELEMENTS} past them); "
            "it is refused before anything is built from it"
        )


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The one model an annotation holds (``Model`` or ``Model | None``), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    models = [a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
    others = [a for a in get_args(annotation) if a is not type(None) and a not in models]
    return models[0] if len(models) == 1 and not others else None


def _unknown_key(data: Any, model: type[BaseModel], where: str) -> str | None:
    """The first key of ``data`` that ``model`` (or a nested model) does not name."""
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            return f"{where}{key}"
        nested = _model_of(field.annotation)
        if nested is not None:
            found = _unknown_key(value, nested, f"{where}{key}.")
            if found is not None:
                return found
    return None


def report_from(parsed: Any, source: str) -> ReportDocument:
    """A decoded JSON value validated as the report of its schema version (one-line errors).

    Validation is followed by :func:`check_derived_sizes`, so no reader builds from a
    config what its stored outputs could not hold.
    """
    source = one_line(source)
    version = _schema_version(parsed, source)
    # Unknown keys are refused by name before validation (pydantic would build one error
    # per extra key first).
    unknown = _unknown_key(parsed, MODELS[version], "")
    if unknown is not None:
        raise ReportError(
            f"report {source} does not match schema v{version} at {one_line(unknown)[:200]}: "
            "an unknown key (the schema names no such field)"
        )
    try:
        # Strict: a JSON true is not the integer 1, nor "0.5" the float 0.5.
        document = MODELS[version].model_validate(parsed, strict=True)
    except MemoryError:
        raise ReportError(_out_of_memory(source, None, "validating")) from None
    except RecursionError:
        raise ReportError(f"report {source} is nested too deeply to be a report") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReportError(
            f"report {source} does not match schema v{version} at {one_line(where)}: "
            f"{one_line(first['msg'])}"
        ) from None
    check_fields(document, source)
    check_derived_sizes(document, source)
    return document


def parse_report(data: bytes, source: str) -> ReportDocument:
    """The report that ``data`` holds, validated against the model of its schema version.

    Raises
    ------
    ReportError
        One line saying what is wrong, naming ``source``.
    """
    return report_from(load_json(data, source), source)


def read_report(
    path: Path, *, follow_symlinks: bool = True, limit: int | None = None
) -> ReportDocument:
    """Read and validate the report at ``path`` (a regular file of at most ``limit`` bytes).

    ``limit`` defaults to :func:`~.limits.report_read_limit`'s, under the default budget.

    Raises
    ------
    FileNotFoundError
        When nothing is at ``path`` (callers tell "missing" from "bad").
    ReportError
        One line for anything else that is not a readable, valid report.
    """
    if limit is None:
        derived = report_read_limit()
        data = read_regular(
            path,
            limit=derived.bytes,
            follow_symlinks=follow_symlinks,
            limit_reason=derived.explain(),
        )
    else:
        data = read_regular(path, limit=limit, follow_symlinks=follow_symlinks)
    return remember_path(parse_report(data, str(path)), path)
