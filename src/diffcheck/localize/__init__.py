"""Where inside a program does a candidate diverge? The first wrong Array API call.

``diffcheck.locate(fn, *inputs, candidate=...)`` runs ``fn(xp, *arrays)`` on the reference
and the candidate through recording proxies and judges every call twice: its carried error
(each side fed its own inputs) and its local error (the candidate's call re-run on the
reference's exact inputs). The first call whose local error breaks its bound is the first
wrong call; the calls after it whose carried error is large only inherit the divergence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._guard import LocateTimeout, check_arguments
from ._locate import DEFAULT_MAX_MEMORY, locate_on
from ._repro import ReducedCall, Reduction
from ._result import CallError, CandidateRaised, Localization, LocatedCall, PathSplit

if TYPE_CHECKING:
    from ..adapters import Adapter

#: Seconds a ``locate`` may take before it stops the program (``time_limit``).
DEFAULT_TIME_LIMIT = 600.0

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_TIME_LIMIT",
    "CallError",
    "CandidateRaised",
    "Localization",
    "LocateTimeout",
    "LocatedCall",
    "PathSplit",
    "ReducedCall",
    "Reduction",
    "locate",
    "reduce",
]


def locate(
    fn: Callable[..., Any],
    *inputs: Any,
    candidate: str | Adapter,
    reference: str | Adapter = "numpy",
    precision: str = "f32",
    max_memory: int = DEFAULT_MAX_MEMORY,
    nmse_bounds: Mapping[str, float] | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    allow_self_test: bool = False,
) -> Localization:
    """Find the first call of ``fn`` whose result is wrong on ``candidate``.

    Parameters
    ----------
    fn
        ``fn(xp, *arrays)``, written against the Array API, or ``fn(*arrays)`` that finds
        its namespace through its arrays (``array_api_compat.array_namespace(x)``), as
        scikit-learn, SciPy and array-api-extra do (see :func:`diffcheck._program.takes_namespace`
        for how the two are told apart); it must be deterministic.
    inputs
        Host arrays (any library) or Python scalars, in their own dtypes; on the candidate,
        floating inputs are cast to ``precision`` first.
    candidate, reference
        Backend names (``mlx:cpu``, ``torch:cuda``) or adapter instances.
    precision
        ``f32`` (inputs as given), ``f16`` or ``bf16`` (floating inputs cast on the candidate).
    max_memory
        Host bytes for the reference's kept arrays; a larger program runs again per window.
    nmse_bounds
        An NMSE bound per function name (``{"matmul": 1e-6}``) replacing the values model's.
    time_limit
        Seconds for the whole run (both sides, every window); a program still running then
        is stopped with :class:`LocateTimeout`. None: no limit.
    allow_self_test
        Let the candidate be the reference's own backend (refused otherwise: a backend
        cannot vouch for itself).

    Returns
    -------
    Localization
        Every compared call with both errors, the first wrong call, any path split, a call
        that raised on the candidate only; it is true only when none of these is found.

    Raises
    ------
    ConfigError, BackendError
        On misuse or an unavailable backend (a divergence is never an exception); a program
        that raises on the reference, returns no arrays or is not deterministic is misuse.
    LocateTimeout
        When the program runs past ``time_limit``.
    """
    from .._program import as_program
    from ..adapters._registry import entry_point_snapshot
    from ..adapters.identity import same_backend
    from ..api import _adapter
    from ..errors import BackendError, ConfigError

    check_arguments(fn, inputs, candidate, reference, nmse_bounds, precision, time_limit)
    if callable(fn):
        fn = as_program(fn, len(inputs))

    with entry_point_snapshot():  # one scan of the installed plugins for both names
        reference_adapter = _adapter(reference, "reference")
        candidate_adapter = _adapter(candidate, "candidate")
        if not allow_self_test and same_backend(candidate_adapter, reference_adapter):
            raise ConfigError(
                f"candidate {candidate_adapter.spec!r} is the reference "
                f"{reference_adapter.spec!r}'s own backend; a backend cannot vouch for itself "
                "(pass allow_self_test=True for a self-test)"
            )
    executes = candidate_adapter.capabilities().precisions
    if precision in ("f32", "f16", "bf16") and precision not in executes:
        raise BackendError(
            candidate_adapter.spec,
            f"it does not execute precision {precision} (it executes: {', '.join(executes)})",
        )
    return locate_on(
        fn,
        inputs,
        reference_adapter,
        candidate_adapter,
        precision=precision,
        max_memory=max_memory,
        nmse_bounds=nmse_bounds,
        time_limit=time_limit,
    )


def reduce(
    fn: Callable[..., Any],
    *inputs: Any,
    candidate: str | Adapter,
    reference: str | Adapter = "numpy",
) -> Reduction:
    """Locate ``fn``'s divergence on ``candidate`` and reduce it to the fewest calls.

    The target is the first wrong call (else the first call whose carried error breaks its
    bound). The program's prefix up to it is recorded on the reference, and programs of
    growing size are tried: the target alone on the reference's exact inputs of that call,
    then with the calls that produced its inputs, one level more each time. The first that
    still diverges on the candidate is the reduction; ``reduction.write(path)`` writes it as
    a standalone script (NumPy and the two namespaces only) with its inputs beside it.

    Parameters
    ----------
    fn, inputs, candidate, reference
        As for :func:`locate`, at precision ``f32`` (inputs in their own dtypes).

    Returns
    -------
    Reduction
        The reduced calls, the prefix they come from, the script's own verdict on them.

    Raises
    ------
    ConfigError
        When no call diverges, a namespace is not an importable module, the target cannot
        be written as a script, or no reduced program diverges.
    """
    from .._program import as_program
    from ..adapters._registry import entry_point_snapshot
    from ..api import _adapter
    from ._repro import reduce_on

    if callable(fn):
        fn = as_program(fn, len(inputs))
    with entry_point_snapshot():
        reference_adapter = _adapter(reference, "reference")
        candidate_adapter = _adapter(candidate, "candidate")
    located = locate(fn, *inputs, candidate=candidate_adapter, reference=reference_adapter)
    return reduce_on(fn, inputs, reference_adapter, candidate_adapter, located)
