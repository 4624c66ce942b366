"""What crosses between the search and its worker: host data only, read by a strict reader.

A backend's own objects must never travel back from the worker. torch registers its own
reducers with multiprocessing's pickler, so a tensor pickled there is shared through file
descriptors that the receiving process must fetch with the sender's key: a different
process's key is refused (``AuthenticationError``) and the answer is lost. Any other
library object would make the search import and trust that library just to read an answer.
So the worker drops the device results an :class:`~diffcheck.values.call.Outcome` keeps
(their only use is provenance, which the search does not record), pickles its answer with
the standard pickler, and the search reads it with :class:`HostUnpickler`, which builds
only builtins, NumPy and diffcheck's own data: anything else is a :class:`WireError`, which
the search turns into a finding of that call, and the run goes on.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import fields, is_dataclass, replace
from multiprocessing.reduction import ForkingPickler
from typing import Any

from ..values.call import Outcome

__all__ = ["HostUnpickler", "WireError", "as_sent", "dump_answer", "host_only", "load_answer"]

#: Modules whose classes an answer may hold: the standard pickler's own helpers, NumPy's
#: arrays, dtypes and scalars, and diffcheck's verdicts and outcomes.
_ALLOWED_ROOTS = ("builtins", "copyreg", "collections", "_codecs", "numpy", "diffcheck")
#: Builtins that build data; never a callable like ``eval`` or ``getattr``.
_BUILTINS = frozenset(
    (
        "bool",
        "bytearray",
        "bytes",
        "complex",
        "dict",
        "float",
        "frozenset",
        "int",
        "list",
        "object",
        "range",
        "set",
        "slice",
        "str",
        "tuple",
        "type",
        "NoneType",
        "Ellipsis",
    )
)


class WireError(Exception):
    """An answer of the worker that cannot be brought home as host data."""


class HostUnpickler(pickle.Unpickler):
    """Reads an answer built of host data only; any other class raises :class:`WireError`."""

    def find_class(self, module: str, name: str) -> Any:
        root = module.split(".", 1)[0]
        allowed = root in _ALLOWED_ROOTS and (module != "builtins" or name in _BUILTINS)
        if not allowed:
            raise WireError(f"the answer holds a {module}.{name}, not host data")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise WireError("the answer refers to an object outside it")


def host_only(value: Any) -> Any:
    """``value`` with every :class:`Outcome`'s device result dropped (a library object)."""
    if isinstance(value, Outcome):
        return replace(value, device_result=None)
    if isinstance(value, tuple):
        return tuple(host_only(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        # a verdict holds no Outcome today; walked anyway, so one added later is cleaned
        changed = {f.name: host_only(getattr(value, f.name)) for f in fields(value) if f.init}
        return replace(value, **changed)
    return value


def as_sent(request: Any) -> Any:
    """``request`` as the worker receives it: pickled and read back (multiprocessing's
    pickler, as :class:`~multiprocessing.connection.Connection` sends it).

    A drawn array may be a view, read-only or strided; its copy in the worker is owned and
    C-ordered. A backend whose answer depends on more than the elements' values (MLX's
    ``prod`` and ``all`` of an empty array read memory they never wrote) may answer the two
    differently, so the in-process mode calls on the copy too: both modes see the same
    arrays.
    """
    return ForkingPickler.loads(ForkingPickler.dumps(request))


def dump_answer(answer: Any) -> bytes:
    """The worker's answer as bytes, with the standard pickler (no library's reducers)."""
    return pickle.dumps(host_only(answer), protocol=pickle.HIGHEST_PROTOCOL)


def load_answer(data: bytes) -> Any:
    """An answer read back; :class:`WireError` when it is not host data or not readable."""
    try:
        return HostUnpickler(io.BytesIO(data)).load()
    except WireError:
        raise
    except Exception as error:  # truncated or corrupt bytes: the answer is lost
        raise WireError(f"the answer cannot be read ({type(error).__name__}: {error})") from None
