"""``diffcheck run`` argument parsing, with the reference tool's exact rules and messages.

The options are those :mod:`diffcheck.cli.run_parser` declares (argparse's help shows
them). Every option takes exactly one following value (``--key=value`` is not accepted),
except the flag ``--allow-self-test``; keys may not repeat, and errors are reported in the
contract's order, before any file exists, each in one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import annotated_types
from pydantic.fields import FieldInfo

from .._numbers import parse_f64, parse_u64
from ..adapters import parse_backend
from ..config import DEFAULT_REFERENCE, DEFAULT_SEED, Check, make_check
from ..errors import ConfigError
from ..ops import get_op
from ..precision import PRECISIONS
from ..runner.budget import parse_size
from .run_parser import flags, options

__all__ = ["ALLOWED", "SPELLINGS", "RunArgs", "one_line", "parse_run_args"]

#: Every option of ``run``, and those that take no value, as :mod:`.run_parser` declares them.
ALLOWED = options()
_FLAGS = flags()


def _respellings(options: frozenset[str]) -> dict[str, str]:
    """Each option's other spelling (``--head-dim`` for ``--head_dim``, ``--max_nmse`` for
    ``--max-nmse``) mapped to the option: a reader types either, and both mean one key."""
    spellings: dict[str, str] = {}
    for option in options:
        name = option[2:]
        for other in (name.replace("_", "-"), name.replace("-", "_")):
            if other != name and f"--{other}" not in options:
                spellings[f"--{other}"] = option
    return spellings


#: Other spellings accepted for the options, each mapped to its canonical one.
SPELLINGS = _respellings(ALLOWED)


@dataclass(frozen=True)
class RunArgs:
    """A parsed, validated ``run`` invocation."""

    check: Check
    report: Path
    #: The check's memory budget in bytes; None for the default.
    max_memory: int | None = None


def _pairs(argv: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    index = 0
    while index < len(argv):
        key = SPELLINGS.get(argv[index], argv[index])
        if key not in ALLOWED:
            from ..suggest import did_you_mean

            raise ConfigError(
                f"unknown option {json.dumps(key)}{did_you_mean(key, ALLOWED)}; "
                "run 'diffcheck run --help' for the options"
            )
        if key in _FLAGS:
            if key in values:
                raise ConfigError(f"duplicate option {key}")
            values[key] = ""
            index += 1
            continue
        if index + 1 >= len(argv):
            raise ConfigError(f"missing value for {key}")
        value = argv[index + 1]
        if not value or value.startswith("--"):
            raise ConfigError(f"missing value for {key}")
        if key in values:
            raise ConfigError(f"duplicate option {key}")
        values[key] = value
        index += 2
    return values


def parse_run_args(argv: Sequence[str]) -> RunArgs | None:
    """Parse ``run``'s arguments; None means help was asked for.

    Raises
    ------
    ConfigError
        With the first error in the contract's order, in one line (line breaks and
        unprintable characters a user typed are escaped).
    """
    if list(argv) in (["--help"], ["-h"]):
        return None
    try:
        return _parse(argv)
    except ConfigError as error:
        text = one_line(str(error))
        if text == str(error):
            raise
        raise ConfigError(text) from None


def one_line(text: str) -> str:
    """``text`` with line breaks, other control characters and lone surrogates escaped."""
    return "".join(
        c
        if c.isprintable() or c == " "
        else c.encode("unicode_escape", "backslashreplace").decode("ascii")
        for c in text
    )


def _allowed_range(field: FieldInfo) -> str:
    """``it must be a whole number from 0 to 18446744073709551615``, from the field's bounds."""
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    kind = "a whole number" if field.annotation is int else "a number"
    if low is not None and high is not None:
        return f"it must be {kind} from {low} to {high}"
    if low is not None:
        return f"it must be {kind} >= {low}"
    return f"it must be {kind}"


def _parse(argv: Sequence[str]) -> RunArgs:
    values = _pairs(argv)
    backend = values.pop("--require-backend", None)
    if backend is None:
        raise ConfigError(
            "--require-backend is required; the reference cannot substitute for the candidate"
        )
    parse_backend(backend)
    op_name = values.pop("--op", None)
    if op_name is None:
        raise ConfigError("--op is required")
    op = get_op(op_name)
    params: dict[str, float | int | bool | str] = {}
    for name in op.options:
        text = values.pop(f"--{name}", None)
        if text is None:
            continue
        value = op.parse_option(name, text)
        if value is None:
            kind = op.params_model.model_fields[name].annotation
            raise ConfigError(
                f"invalid value for --{name}: {json.dumps(text)}; it must be true or false"
                if kind is bool
                else f"invalid numeric value for --{name}: {json.dumps(text)}; "
                f"{_allowed_range(op.params_model.model_fields[name])}"
            )
        params[name] = value
    report = values.pop("--report", None)
    if report is None:
        raise ConfigError("--report is required")
    max_nmse: float | None = None
    if (text := values.pop("--max-nmse", None)) is not None:
        max_nmse = parse_f64(text)
        if max_nmse is None:
            raise ConfigError("--max-nmse must be a float")
    seed = DEFAULT_SEED
    if (text := values.pop("--seed", None)) is not None:
        parsed_seed = parse_u64(text)
        if parsed_seed is None:
            raise ConfigError(
                f"invalid numeric value for --seed: {json.dumps(text)}; "
                f"it must be a whole number from 0 to {2**64 - 1}"
            )
        seed = parsed_seed
    precision = values.pop("--precision", "f32")
    if precision not in PRECISIONS:
        raise ConfigError(
            f"--precision must be one of {', '.join(PRECISIONS)}, not {json.dumps(precision)}"
        )
    reference = values.pop("--reference", DEFAULT_REFERENCE)
    allow_self_test = values.pop("--allow-self-test", None) is not None
    max_memory = None
    if (text := values.pop("--max-memory", None)) is not None:
        max_memory = parse_size(text)
    if values:
        raise ConfigError(
            f"option {min(values, key=str.encode)} does not apply to the selected operator"
        )
    check = make_check(
        backend,
        op.name,
        reference=reference,
        precision=precision,
        seed=seed,
        max_nmse=max_nmse,
        allow_self_test=allow_self_test,
        **params,
    )
    return RunArgs(check, Path(report), max_memory)
