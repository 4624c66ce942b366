"""A finding as a person reads it, on the console and from ``diffcheck show BUNDLE``.

``findings.json`` holds each finding's input and the oracle's "why"; the console printed only
its reason. :func:`finding_lines` gives all of it in a few lines, and :func:`repro` the call
as one line of Python against the candidate's namespace, ready for an upstream issue:
``xp.exp(xp.asarray([88.72282409667969], dtype=xp.float32))``. Arrays keep their shape and
every value exactly (a float32 value is written as the float64 that holds it exactly).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .bundle import Bundle, Call, Value, decode_value
from .recipes import _positional_only

__all__ = ["bundle_lines", "finding_lines", "repro", "repro_call"]


def _float(value: float) -> str:
    if math.isnan(value):
        return "float('nan')"
    if math.isinf(value):
        return "float('inf')" if value > 0 else "-float('inf')"
    return repr(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, complex):
        return f"complex({_float(value.real)}, {_float(value.imag)})"
    return repr(value)


def _nested(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested(item) for item in value) + "]"
    return _scalar(value)


def _literal(value: Any) -> str:
    """Python source that rebuilds ``value`` in the namespace ``xp``."""
    if isinstance(value, np.ndarray):
        dtype = value.dtype.name if value.dtype.name in _XP_DTYPES else None
        typed = f", dtype=xp.{dtype}" if dtype else ""
        if value.size == 0:  # nested lists cannot say (0, 3): the shape is given instead
            return f"xp.zeros({tuple(value.shape)}{typed})"
        values = value.tolist() if dtype else value.astype(np.float64).tolist()
        return f"xp.asarray({_nested(values)}{typed})"
    return _scalar(value)


_XP_DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]
)


def repro(bundle: Bundle) -> str:
    """The finding's call as one line of Python, ``xp`` being the candidate's namespace."""
    return repro_call(bundle.function, bundle.call)


def repro_call(function: str, call: Call) -> str:
    """``xp.<function>(...)`` rebuilding ``call`` (a bundle's) exactly, as the search made it."""

    def values(items: list[Value]) -> list[str]:
        return [_literal(decode_value(item, where="bundle")) for item in items]

    arrays = values(call.args)
    head = [f"[{', '.join(arrays)}]"] if call.sequence else arrays
    # As the search called it (recipes.SpecCall): a dtype the standard makes positional-only
    # goes by position, in the stub's order; "#" is positional by itself.
    order = _positional_only(function)
    by_position = sorted(
        (order.index(key) if key in order else -1, name)
        for key, name in call.dtypes.items()
        if key == "#" or key in order
    )
    trailing = [f"xp.{name}" for _, name in by_position]
    named = [
        f"{key}=xp.{name}"
        for key, name in sorted(call.dtypes.items())
        if key != "#" and key not in order
    ]
    options = [
        f"{key}={_literal(decode_value(v, where='bundle'))}" for key, v in call.kwargs.items()
    ]
    parts = [*head, *values(call.positional), *trailing, *named, *options]
    return f"xp.{function}({', '.join(parts)})"


def finding_lines(
    *,
    head: str,
    example: str,
    why: str,
    bundle: str | None,
    call: str | None,
    namespace: str | None,
) -> list[str]:
    """A finding's head line, then its input, the oracle's why, the repro and the bundle."""
    lines = [head, f"    input:  {example}"]
    if why:
        lines.append(f"    why:    {why}")
    if call is not None:
        where = f"import {namespace} as xp; " if namespace else ""
        lines.append(f"    repro:  {where}{call}")
    if bundle is not None:
        lines.append(f"    bundle: {bundle} (diffcheck replay re-checks it)")
    return lines


def bundle_lines(bundle: Bundle, path: str, namespace: str | None = None) -> list[str]:
    """What ``diffcheck show BUNDLE`` prints: the pair, then the finding as the console does."""
    finding = bundle.finding
    blame = finding.blame
    side = f": blame {blame.side} ({blame.evidence})" if blame is not None else ""
    from .output import describe_example
    from .record import example_of

    return [
        f"{path}: finding of {bundle.candidate.backend} ({bundle.candidate.library} "
        f"{bundle.candidate.version}) against {bundle.reference.backend} "
        f"({bundle.reference.library} {bundle.reference.version})",
        *finding_lines(
            head=f"{bundle.function} [{finding.kind}] {finding.dtype}{side}: {finding.reason}",
            example=describe_example(example_of(bundle)),
            why=blame.why if blame is not None else "",
            bundle=None,
            call=repro(bundle),
            namespace=namespace or bundle.candidate.library,
        ),
    ]
