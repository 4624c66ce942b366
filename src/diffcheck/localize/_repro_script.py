"""A reduced program as the source of a standalone script (see :mod:`._repro`).

The calls are written as the program made them: ``xp.exp(a0)`` for a namespace function,
``(y0 @ a1)`` for an operator, ``y1[...]``, ``y1.T`` and ``y1.reshape(...)`` for the array's
own; the arrays it starts from are stored (``.npz``) and read back in their dtypes.
"""

from __future__ import annotations

import inspect
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..values.call import _home
from ..values.dtypes import dtype_name
from ..values.spec import STANDARD_DTYPES
from . import _repro_check
from ._proxy import RawCall, is_array

__all__ = ["Recorded", "Writer", "script_text", "shown_site"]


def shown_site(site: str) -> str:
    """``file:line`` relative to the working directory when the file is under it: a script
    kept beside the code names no machine's folders."""
    path, _, line = site.rpartition(":")
    try:
        return f"{Path(path).resolve().relative_to(Path.cwd().resolve())}:{line}"
    except ValueError:  # elsewhere: the full path
        return site


_BINARY = {
    "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
    "remainder": "%", "pow": "**", "matmul": "@", "bitwise_and": "&", "bitwise_or": "|",
    "bitwise_xor": "^", "bitwise_left_shift": "<<", "bitwise_right_shift": ">>", "less": "<",
    "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==", "not_equal": "!=",
}  # fmt: skip
_UNARY = {"negative": "-{}", "positive": "+{}", "bitwise_invert": "~{}", "abs": "abs({})"}
_DTYPES = frozenset((*STANDARD_DTYPES, "float16"))


@dataclass
class Recorded:
    """The reference's prefix: each call, and who produced each array it was given."""

    calls: list[RawCall] = field(default_factory=list)
    producers: dict[int, tuple[int, int]] = field(default_factory=dict)
    keep: list[Any] = field(default_factory=list)  # the arrays, so their ids stay theirs


class Writer:
    """The source of one candidate program: its calls, and the arrays it starts from."""

    def __init__(self, reference: Adapter, recorded: Recorded, kept: set[int]) -> None:
        self.reference, self.recorded, self.kept = reference, recorded, kept
        self.inputs: dict[str, Any] = {}
        self.names: dict[int, str] = {}
        self.lines: list[str] = []

    def value(self, value: Any) -> str | None:
        """``value`` as source, or None when it cannot be written."""
        if is_array(value):
            return self._array(value)
        if value is None or isinstance(value, bool | int | str):
            return repr(value)
        if isinstance(value, float):
            return repr(value) if math.isfinite(value) else f'float("{value}")'
        if value is Ellipsis:
            return "..."
        if isinstance(value, slice):
            parts = [self.value(p) for p in (value.start, value.stop, value.step)]
            return None if None in parts else f"slice({', '.join(parts)})"  # type: ignore[arg-type]
        if isinstance(value, tuple | list):
            items = [self.value(v) for v in value]
            if None in items:
                return None
            text = ", ".join(items)  # type: ignore[arg-type]
            return (
                f"[{text}]"
                if isinstance(value, list)
                else f"({text}{',' if len(items) == 1 else ''})"
            )
        try:
            name = dtype_name(value)
        except Exception:  # neither a literal nor a dtype (a device, an object)
            return None
        return f"xp.{name}" if name in _DTYPES else None

    def _array(self, array: Any) -> str | None:
        hit = self.recorded.producers.get(id(array))
        if hit is not None and hit[0] in self.kept:
            single = self.recorded.calls[hit[0]].single
            return f"y{hit[0]}" if single else f"y{hit[0]}[{hit[1]}]"
        if id(array) not in self.names:
            host = _home(self.reference, array)
            if isinstance(host, tuple):  # a tagged bfloat16 host array: no NumPy dtype
                return None
            key = f"a{len(self.inputs)}"
            self.inputs[key] = np.array(host)
            self.names[id(array)] = key
            # The dtype named: a library may narrow a float64 array it is handed (MLX).
            dtype = dtype_name(self.inputs[key].dtype)
            spelled = f", dtype=xp.{dtype}" if dtype in _DTYPES else ""
            self.lines.append(f"    {key} = xp.asarray(inputs[{key!r}]{spelled})")
        return self.names[id(array)]

    def call(self, call: RawCall) -> bool:
        """Add ``call`` as a line; False when an argument cannot be written."""
        args = [self.value(a) for a in call.args]
        kwargs = {k: self.value(v) for k, v in call.kwargs.items() if not _device_word(k)}
        if None in args or None in kwargs.values():
            return False
        expression = _expression(call, args, kwargs)  # type: ignore[arg-type]
        if expression is None:
            return False
        site = shown_site(call.site)
        self.lines.append(f"    y{call.index} = {expression}  # {call.name} at {site}")
        return True


def _device_word(key: str) -> bool:
    return key == "device"  # the script runs on each library's default device


def _expression(call: RawCall, args: list[str], kwargs: dict[str, str]) -> str | None:
    listed = ", ".join([*args, *(f"{k}={v}" for k, v in kwargs.items())])
    if call.via == "namespace":
        return f"xp.{call.name}({listed})"
    if call.via == "operator":
        if call.name in _BINARY and len(args) == 2:
            return f"({args[0]} {_BINARY[call.name]} {args[1]})"
        if call.name in _UNARY and len(args) == 1:
            return _UNARY[call.name].format(args[0])
        return None
    if call.function is operator.getitem:
        return f"{args[0]}[{args[1]}]"
    if isinstance(call.function, operator.attrgetter):
        return f"{args[0]}.{call.name}"
    if call.name.startswith("__"):  # an assignment, or another statement: no expression
        return None
    rest = ", ".join([*args[1:], *(f"{k}={v}" for k, v in kwargs.items())])
    return f"{args[0]}.{call.name}({rest})"


def script_text(
    writer: Writer, target: RawCall, bound: dict[str, Any], header: str, modules: tuple[str, str]
) -> str:
    check = inspect.getsource(_repro_check).split('"""', 2)[2].strip()
    return "\n".join(
        [
            f'"""{header}"""',
            "",
            "import sys",
            "from pathlib import Path",
            "",
            check,
            "",
            f"BOUND = {bound!r}",
            "",
            "",
            "def program(xp, inputs):",
            *writer.lines,
            f"    return y{target.index}",
            "",
            "",
            "def to_host(array):",
            "    try:",
            "        return np.asarray(array)",
            "    except Exception:  # a library without __array__: through DLPack",
            "        return np.from_dlpack(array)",
            "",
            "",
            "def compare(expected, got):",
            "    why = 'no outputs'",
            "    pairs = zip(expected, got) if isinstance(expected, tuple | list) else [(expected, got)]",
            "    for one, other in pairs:",
            "        diverges, why = beyond(to_host(one), to_host(other), **BOUND)",
            "        if diverges:",
            "            return True, why",
            "    return False, why",
            "",
            "",
            "def main(reference, candidate):",
            "    inputs = dict(np.load(Path(__file__).with_suffix('.npz')))",
            "    diverges, why = compare(program(reference, inputs), program(candidate, inputs))",
            "    print(('reproduced: ' if diverges else 'not reproduced: ') + why)",
            "    return 1 if diverges else 0",
            "",
            "",
            'if __name__ == "__main__":',
            f"    import {modules[0]} as reference_xp",
            f"    import {modules[1]} as candidate_xp",
            "",
            "    sys.exit(main(reference_xp, candidate_xp))",
            "",
        ]
    )
