"""The small pieces :func:`diffcheck.compare` needs to offer the value model.

A spec name as a compare function, the reason of a candidate that cannot run a function,
voters given by backend name, and the refusal of options that belong to the NMSE mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = ["call_failure", "named_function", "refuse_nmse_options", "voter_calls"]


def named_function(name: str) -> Callable[..., Any]:
    """``xp.<name>(*arrays)`` as a compare function (``linalg.vecdot`` reaches into linalg)."""
    from .call import resolve_function

    def call(xp: Any, *arrays: Any) -> Any:
        return resolve_function(xp, name)(*arrays)

    return call


def call_failure(adapter: Adapter, error: Exception) -> str:
    """The reason of a verdict for a candidate that lacks a function or raises."""
    if isinstance(error, AttributeError):
        return f"missing: candidate {adapter.spec} lacks what the reference has: {error}"
    return f"raises: candidate {adapter.spec} raised {type(error).__name__}: {error}"


def voter_calls(
    voters: Sequence[str | Adapter | tuple[str, Callable[..., Any]]],
    fn: str | Callable[..., Any],
) -> list[tuple[str, Callable[..., Any]]]:
    """``(name, call)`` pairs for blame's vote: backend names and adapters run ``fn``."""
    from ..adapters import resolve
    from .call import backend_voter

    calls: list[tuple[str, Callable[..., Any]]] = []
    for voter in voters:
        if isinstance(voter, tuple):
            calls.append(voter)
        else:
            adapter = resolve(voter) if isinstance(voter, str) else voter
            calls.append((adapter.spec, backend_voter(adapter, fn)))
    return calls


def refuse_nmse_options(max_nmse: float | None, precision: str, segments: Any) -> None:
    """ConfigError when an option of the NMSE mode is given to the value mode."""
    given = [
        name
        for name, value, default in (
            ("max_nmse", max_nmse, None),
            ("precision", precision, "f32"),
            ("segments", segments, None),
        )
        if value != default
    ]
    if given:
        raise ConfigError(
            f'{", ".join(given)} belong to mode="nmse"; mode="values" keeps each input\'s own '
            'dtype (give an input as (values, "float16") or (values, "bfloat16") to store it '
            "so) and chooses the error bound per function"
        )
