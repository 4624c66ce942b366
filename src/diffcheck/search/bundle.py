"""Replay bundles: one finding as data only, checked before any byte is used.

A bundle is a JSON document (no pickle, no code): the function, its arguments (arrays as
base64 of their little-endian bytes with dtype, shape, byte count and SHA-256; Python
scalars typed, floats as hex so NaN, infinities and -0.0 survive), both outputs stored the
same way, both backends' names, library versions and devices, the verdict's kind, reason,
blame and bound with its provenance.

Reading is hostile-input safe: a bounded read of a regular file
(:func:`~diffcheck.files.read_regular`), a strict model (an unknown field or kind is
an error), and every array's byte count (``prod(shape) * itemsize``) and digest checked
before its bytes are decoded. Every problem is one :class:`BundleError` line.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from ..errors import BundleError, ReportError
from ..files import create_new, read_regular
from ..report.arrays import checked_bytes, digest_and_text
from ..report.models import Version1
from ..text import one_line
from ..values.model import FAILURE_KINDS
from ..values.signatures import VERSIONS, functions_of
from ..values.spec import ADDED_2024_12, STANDARD_DTYPES, STANDARD_FUNCTIONS

__all__ = [
    "BUNDLE_FUNCTIONS",
    "BUNDLE_KIND",
    "BUNDLE_VERSION",
    "MAX_BUNDLE_BYTES",
    "Bundle",
    "bundle_in",
    "decode_value",
    "encode_value",
    "is_bundle",
    "read_bundle",
    "write_bundle",
]

BUNDLE_KIND = "diffcheck-finding"
BUNDLE_VERSION = 1
#: The largest bundle read (a minimal example is a few kilobytes; 64 MiB is generous).
MAX_BUNDLE_BYTES = 64 * 1024 * 1024
_DTYPES = (*STANDARD_DTYPES, "float16")
_MAX_DIMS = 32

#: The functions a bundle may name, by ``bundle_version``: exactly the standard's function
#: list the search draws from (2023.12 and the 2024.12 additions, :mod:`diffcheck.values.spec`).
#: A name is looked up in this set, never resolved as an attribute path: a bundle is data, and
#: ``getattr`` on a namespace reaches its module's loader, ``os`` and file writers. Bundles
#: never name diffcheck ops (those run through ``diffcheck run``), so no plugin adds names.
#: Every version's function list counts (2025.12 adds ``isin`` and more, which the search
#: draws under ``--api-version``), read from the standard's own stubs' data.
BUNDLE_FUNCTIONS: dict[int, frozenset[str]] = {
    1: frozenset([name for names in STANDARD_FUNCTIONS.values() for name in names])
    | frozenset(ADDED_2024_12)
    | frozenset(name for version in VERSIONS for name in functions_of(version)),
}


def standard_function(name: str, version: int = BUNDLE_VERSION) -> str:
    """``name`` when it is a function of the standard a bundle of ``version`` may call.

    Raises
    ------
    ValueError
        For any other name (a dunder, private or dotted attribute path, a module, a NumPy
        function the standard does not name), with the name escaped and what to give.
    """
    if name not in BUNDLE_FUNCTIONS.get(version, frozenset()):
        raise ValueError(
            f"{one_line(repr(name))} is not a function of the Array API standard (2023.12 "
            "and its 2024.12 additions); a bundle names one of them, e.g. 'exp' or "
            "'linalg.vecdot', and nothing else is ever called"
        )
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArrayData(_Strict):
    """An array's exact bytes (little-endian, C order) and what they must add up to."""

    dtype: Literal[_DTYPES]  # type: ignore[valid-type]
    shape: list[int] = Field(max_length=_MAX_DIMS)
    bytes: int = Field(ge=0, description="prod(shape) * itemsize; checked before decoding")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="digest of the decoded bytes")
    data: str = Field(description="base64 of the bytes")
    stored_as: str | None = Field(
        None, description="the dtype the values had on the device (bfloat16 comes home widened)"
    )


def _no_foreign_dtype(text: str | None) -> str | None:
    """A text NumPy would read as a dtype must be a standard dtype's name.

    A dtype reaches the call through ``call.dtypes`` (the standard's names only); a text
    argument is passed to NumPy as it is, and ``asarray(x, dtype="V400000000")`` makes each
    element 400 MB, past every estimate of :mod:`.bundle_memory` (which counts 16 bytes an
    element). Texts the standard passes (``"ortho"``, ``"left"``, ``"fro"``) are no dtype.
    """
    if text is None or text in _DTYPES:
        return text
    try:
        np.dtype(text)
    except Exception:
        return text
    raise ValueError(
        f"text {one_line(repr(text))} names a NumPy dtype outside the standard's; a bundle "
        "gives dtypes in call.dtypes, by the standard's names"
    )


class Value(_Strict):
    """One argument: exactly one of its fields is set."""

    array: ArrayData | None = None
    integer: int | None = None
    float_hex: str | None = Field(None, max_length=64, description="float.hex of a float")
    boolean: bool | None = None
    complex_hex: list[str] | None = Field(
        None, min_length=2, max_length=2, description="float.hex of the real and imaginary parts"
    )
    ints: list[int] | None = Field(None, max_length=_MAX_DIMS, description="a tuple of ints")
    text: Annotated[str | None, AfterValidator(_no_foreign_dtype)] = Field(None, max_length=64)
    none: Literal[True] | None = None


class Call(_Strict):
    """The call: ``xp.<function>(*args, *positional, *dtype positional, **kwargs)``."""

    args: list[Value]
    positional: list[Value] = []
    kwargs: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")], Value] = {}
    dtypes: dict[str, Literal[_DTYPES]] = {}  # type: ignore[valid-type]
    sequence: bool = False


class BackendIdentity(_Strict):
    """A backend as found when the bundle was written."""

    backend: str = Field(description="its name, as diffcheck resolves it (mlx:cpu)")
    library: str
    version: str
    device: str | None = None


class Output(_Strict):
    """One side's result: its arrays, or why there are none."""

    arrays: list[ArrayData] | None = None
    several: bool = Field(False, description="the function returned a tuple of arrays")
    missing: str | None = None
    raised: str | None = None


class BoundData(_Strict):
    kind: Literal["exact", "ulp", "reduction", "nmse"]
    ulps: float | None = None
    nmse: float | None = None
    atol: float | None = None
    provenance: str


class BlameData(_Strict):
    side: Literal["candidate", "reference", "both", "undecided"]
    evidence: Literal["special-case", "oracle", "standard-rule", "vote", "none"]
    why: str


#: A verdict's kinds, and the search's own: the call killed its worker, or outlived its timeout.
_FINDING_KINDS = (*FAILURE_KINDS, "crash", "hang")


class FindingData(_Strict):
    kind: Literal[_FINDING_KINDS]  # type: ignore[valid-type]
    dtype: str
    reason: str
    blame: BlameData | None = None


class Bundle(_Strict):
    """One finding, replayable: ``diffcheck replay BUNDLE``.

    Validated strictly: no JSON value is coerced (``true`` is not ``1``, ``"3"`` not ``3``,
    ``3.0`` not an integer), so every field is exactly the type the writer wrote.
    """

    kind: Literal["diffcheck-finding"]
    bundle_version: Version1
    function: Annotated[str, Field(max_length=64), AfterValidator(standard_function)] = Field(
        description="a function of the Array API standard, by name (linalg.vecdot); never "
        "resolved as an attribute path"
    )
    finding: FindingData
    bound: BoundData
    call: Call
    reference: BackendIdentity
    candidate: BackendIdentity
    outputs: dict[Literal["reference", "candidate"], Output]

    @field_validator("outputs")
    @classmethod
    def _both_sides(cls, outputs: dict[str, Output]) -> dict[str, Output]:
        lacking = [side for side in ("reference", "candidate") if side not in outputs]
        if lacking:
            raise ValueError(
                f"has no {' and no '.join(lacking)} output; a bundle stores both sides' "
                "outputs (arrays, missing or raised)"
            )
        return outputs


def encode_array(array: Any, stored_as: str | None = None) -> ArrayData:
    """An array's exact little-endian bytes with its dtype, shape, size and digest."""
    host = np.asarray(array, order="C")  # ascontiguousarray would make a 0-d array 1-d
    raw = host.astype(host.dtype.newbyteorder("<"), copy=False).tobytes()
    digest, text = digest_and_text(raw)
    return ArrayData(
        dtype=host.dtype.name,
        shape=[int(n) for n in host.shape],
        bytes=len(raw),
        sha256=digest,
        data=text,
        stored_as=stored_as,
    )


def decode_array(data: ArrayData, *, where: str) -> np.ndarray[Any, Any]:
    """The array, after its stated size and digest are checked; BundleError otherwise."""
    if any(n < 0 for n in data.shape):
        raise BundleError(f"{where}: shape {data.shape} has a negative length")
    dtype = np.dtype(data.dtype)
    count = math.prod(data.shape)
    if count * dtype.itemsize != data.bytes:
        raise BundleError(
            f"{where}: states {data.bytes} bytes, but shape {data.shape} of {data.dtype} "
            f"needs {count * dtype.itemsize}"
        )
    raw = checked_bytes(data.data, data.bytes, data.sha256, where, BundleError)
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(data.shape)


def encode_value(value: Any) -> Value:
    """One argument as typed JSON data (arrays by bytes, floats by hex)."""
    if isinstance(value, np.ndarray):
        return Value(array=encode_array(value))
    if isinstance(value, bool):
        return Value(boolean=value)
    if isinstance(value, int):
        return Value(integer=value)
    if isinstance(value, float):
        return Value(float_hex=value.hex())
    if isinstance(value, complex):
        return Value(complex_hex=[value.real.hex(), value.imag.hex()])
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return Value(ints=list(value))
    if isinstance(value, str):
        return Value(text=value)
    if value is None:
        return Value(none=True)
    raise BundleError(f"an argument of type {type(value).__name__} cannot be stored")


def decode_value(value: Value, *, where: str) -> Any:
    """The argument back, exactly; BundleError when not exactly one field is set."""
    fields = [name for name in Value.model_fields if getattr(value, name) is not None]
    if len(fields) != 1:
        raise BundleError(f"{where}: must set exactly one of {', '.join(Value.model_fields)}")
    name = fields[0]
    item = getattr(value, name)
    try:
        if name == "array":
            return decode_array(item, where=where)
        if name == "float_hex":
            return float.fromhex(item)
        if name == "complex_hex":
            return complex(float.fromhex(item[0]), float.fromhex(item[1]))
    except (ValueError, OverflowError):
        raise BundleError(f"{where}: {item!r} is not a float's hex text") from None
    if name == "ints":
        return tuple(item)
    if name == "none":
        return None
    return item


def _one_line(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the document"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    message = first["msg"].removeprefix("Value error, ")  # a validator's own sentence
    # A key of the bundle can hold any character: escape them so the error stays one line.
    return one_line(f"{where}: {message}{more}")


def is_bundle(document: Any) -> bool:
    """Whether a decoded JSON value claims to be a finding bundle."""
    return isinstance(document, dict) and document.get("kind") == BUNDLE_KIND


def parse_bundle(data: bytes, *, where: str) -> Bundle:
    """The bundle in ``data``; BundleError (one line) for anything else."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise BundleError(f"{where} is not a JSON document") from None
    return bundle_from(document, where=where)


def bundle_from(document: Any, *, where: str) -> Bundle:
    """A decoded JSON value validated as a bundle; BundleError (one line) for anything else."""
    if not isinstance(document, dict) or document.get("kind") != BUNDLE_KIND:
        raise BundleError(f'{where} is not a finding bundle (no "kind": "{BUNDLE_KIND}")')
    version = document.get("bundle_version")
    if type(version) is not int or version != BUNDLE_VERSION:  # exactly: True == 1
        raise BundleError(
            f"{where}: bundle_version {one_line(repr(version))[:80]}, but this diffcheck "
            f"reads version {BUNDLE_VERSION}"
        )
    try:
        # Strict: a JSON true is not the integer 1, nor "3" the integer 3.
        return Bundle.model_validate(document, strict=True)
    except ValidationError as error:
        raise BundleError(f"{where}: {_one_line(error)}") from None


def read_bundle(path: Path) -> Bundle:
    """Read and check the bundle at ``path`` (a regular file of at most 64 MiB)."""
    try:
        data = read_regular(Path(path), limit=MAX_BUNDLE_BYTES)
    except FileNotFoundError:
        raise BundleError(f"{path}: no such file") from None
    except ReportError as error:  # not a regular file, over the limit, unreadable
        raise BundleError(str(error)) from None
    return checked_bundle(parse_bundle(data, where=str(path)), where=str(path))


def bundle_in(document: Any, size: int, *, where: str) -> Bundle:
    """The bundle a decoded file of ``size`` bytes holds, with every array checked."""
    if size > MAX_BUNDLE_BYTES:
        raise BundleError(f"{where} is {size} bytes, over the {MAX_BUNDLE_BYTES}-byte limit")
    return checked_bundle(bundle_from(document, where=where), where=where)


def checked_bundle(bundle: Bundle, *, where: str) -> Bundle:
    """``bundle`` once every array in it decodes (a bad size or digest fails before use)."""
    check_arrays(bundle, where=where)
    return bundle


def check_arrays(bundle: Bundle, *, where: str) -> None:
    """Decode every array once, so a bad size or digest fails before anything runs."""
    for index, value in enumerate([*bundle.call.args, *bundle.call.positional]):
        decode_value(value, where=f"{where}: argument {index}")
    for key, value in bundle.call.kwargs.items():
        decode_value(value, where=f"{where}: keyword {key}")
    for side, output in bundle.outputs.items():
        for index, array in enumerate(output.arrays or []):
            decode_array(array, where=f"{where}: {side} output {index}")


def write_bundle(path: Path, bundle: Bundle) -> None:
    """Write ``bundle`` as a new file, whole or not at all (never over a file or a link)."""
    data = (json.dumps(bundle.model_dump(mode="json", exclude_none=True), indent=1) + "\n").encode()
    try:
        create_new(path, data)
    except OSError as error:
        raise BundleError(f"cannot create {path}: {error.strerror}") from None
