"""The building blocks of report models: strict records, JSON floats, versions, field kinds."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

__all__ = [
    "BOUND",
    "CLAIMED",
    "DERIVED",
    "U32",
    "JsonFloat",
    "Phase",
    "Status",
    "Strict",
    "Version1",
    "Version2",
    "Version3",
    "Version4",
    "exact_int",
    "json_pair",
]

Status = Literal["passed", "failed", "not_run"]
Phase = Literal["initial", "reused_context", "independent_context", "drop_flush"]
U32 = Annotated[int, Field(ge=0, le=2**32 - 1)]

# Every field's description begins with how replay treats it (docs/evidence.md):
DERIVED = "Derived: replay recomputes it from config and the stored bits and must get the same. "
BOUND = "Bound: replay checks it against the bits, the config or this machine. "
CLAIMED = "Claimed: provenance replay cannot verify; printed as claimed, never part of agrees. "

_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _json_float(value: object) -> object:
    # Reports write non-finite floats as these three strings (ser_json_inf_nan="strings");
    # readers validate strictly, so no other string, and no boolean, becomes a float.
    return _NON_FINITE.get(value, value) if isinstance(value, str) else value


def json_pair(value: object) -> object:
    # A JSON array is the wire form of a tuple; strict validation wants the tuple.
    return tuple(value) if isinstance(value, list) else value


def exact_int(value: object) -> object:
    """``value`` when it is exactly an int: strict validation of ``Literal[1]`` takes ``True``
    (``True == 1``), so version fields run this first."""
    if type(value) is not int:
        raise ValueError(f"must be an integer, not {type(value).__name__}")
    return value


#: Schema versions, exactly ints (a JSON true or 1.0 is not a version).
Version1 = Annotated[Literal[1], BeforeValidator(exact_int)]
Version2 = Annotated[Literal[2], BeforeValidator(exact_int)]
Version3 = Annotated[Literal[3], BeforeValidator(exact_int)]
Version4 = Annotated[Literal[4], BeforeValidator(exact_int)]


#: A float as reports write it: a JSON number, or "NaN" / "Infinity" / "-Infinity".
JsonFloat = Annotated[
    float,
    BeforeValidator(_json_float),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"enum": list(_NON_FINITE)}]}),
]


class Strict(BaseModel):
    """A report record: unknown keys refused, immutable, non-finite floats as strings."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="strings")
