"""How a program is called: with the namespace first, ``fn(xp, *arrays)``, or on its arrays.

Code written for the Array API ecosystem mostly takes no namespace: it asks its arrays
(``array_api_compat.array_namespace(x)``, ``x.__array_namespace__()``), as scikit-learn,
SciPy and array-api-extra do. :func:`as_program` turns such a function into the
``fn(xp, *arrays)`` form that :func:`~diffcheck.compare` and :func:`~diffcheck.locate` run,
deciding from the function's signature alone, before anything runs.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

from .errors import ConfigError

__all__ = ["as_program", "takes_namespace"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _positional_range(signature: inspect.Signature) -> tuple[int, float]:
    """How many positional arguments the signature accepts: (at least, at most)."""
    least, most = 0, 0.0
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            most = math.inf
        elif parameter.kind in _POSITIONAL:
            most += 1
            if parameter.default is inspect.Parameter.empty:
                least += 1
    return least, most


def takes_namespace(fn: Callable[..., Any], count: int) -> bool:
    """Whether ``fn``, given ``count`` arrays, takes the namespace as its first argument.

    Decided in this order: a function whose signature cannot be read (a builtin) takes it;
    one whose first positional parameter is named ``xp`` takes it; one that accepts
    ``count + 1`` positional arguments but not ``count`` takes it; one that accepts
    ``count`` is called on its arrays alone (``lambda x: xpx.cov(x)``, ``xpx.sinc``).

    Raises
    ------
    ConfigError
        When ``fn`` accepts neither ``count`` nor ``count + 1`` positional arguments.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read: the documented form
        return True
    positional = [p for p in signature.parameters.values() if p.kind in _POSITIONAL]
    if positional and positional[0].name == "xp":
        return True
    least, most = _positional_range(signature)
    if least <= count <= most:
        return False
    if least <= count + 1 <= most:
        return True
    name = getattr(fn, "__qualname__", None) or repr(fn)
    upper = "more" if most == math.inf else str(int(most))
    accepts = f"{least}" if least == most else f"{least} to {upper}"
    raise ConfigError(
        f"{name} takes {accepts} positional arguments, but there are {count} inputs: it must "
        f"take the arrays alone (fn(*arrays)) or the namespace and the arrays "
        f"(fn(xp, *arrays)); pass one input per array parameter"
    )


def as_program(fn: Callable[..., Any], count: int) -> Callable[..., Any]:
    """``fn`` in the ``fn(xp, *arrays)`` form, for ``count`` arrays (see takes_namespace).

    A function of its arrays alone is wrapped so that it ignores the namespace: it finds the
    namespace through its arrays, which the recording proxy answers with the recording one.
    """
    if takes_namespace(fn, count):
        return fn

    def program(xp: Any, *arrays: Any, **kwargs: Any) -> Any:
        return fn(*arrays, **kwargs)

    # Named as the function it runs (reports and verdicts show the name); no __wrapped__,
    # so the wrapper's own signature (xp first) is what a second look reads.
    program.__name__ = getattr(fn, "__name__", "program")
    program.__qualname__ = getattr(fn, "__qualname__", program.__name__)
    program.__module__ = getattr(fn, "__module__", __name__)
    return program
