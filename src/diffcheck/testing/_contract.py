"""What the conformance suite checks about a probe and about capabilities, as messages."""

from __future__ import annotations

from typing import cast, get_args

from ..adapters import Adapter, Probe, ProbeStatus
from ..ops import OPS
from ..precision import PRECISIONS

__all__ = ["capability_problems", "probe_problems"]


def probe_problems(probe: object) -> list[str]:
    """Every way ``probe`` breaks the Probe contract (empty when it keeps it)."""
    if not isinstance(probe, Probe):
        return [f"probe() returned {type(probe).__name__}, not a Probe"]
    problems = []
    if probe.status not in get_args(ProbeStatus):
        problems.append(f"probe status {probe.status!r} is not one of {get_args(ProbeStatus)}")
    if probe.status == "available" and probe.reason is not None:
        problems.append("an available probe carries a reason")
    if probe.status != "available" and not (isinstance(probe.reason, str) and probe.reason):
        problems.append(f"a {probe.status} probe must say why (reason is {probe.reason!r})")
    detail = cast(object, probe.detail)
    if not isinstance(detail, str):
        problems.append(f"probe detail is {type(detail).__name__}, not str")
    return problems


def capability_problems(adapter: Adapter) -> list[str]:
    """Every way ``adapter``'s capabilities are malformed (empty when they are valid)."""
    capabilities = adapter.capabilities()
    problems = []
    precisions = capabilities.precisions
    if not precisions or not set(precisions) <= set(PRECISIONS):
        problems.append(f"precisions {precisions!r} must be a non-empty subset of {PRECISIONS}")
    if capabilities.ops is not None and not capabilities.ops <= set(OPS):
        problems.append(f"ops {sorted(capabilities.ops - set(OPS))} are not registered ops")
    if not isinstance(cast(object, capabilities.float64), bool):
        problems.append("float64 must be a bool")
    if not all(isinstance(cast(object, note), str) for note in capabilities.notes):
        problems.append("notes must be strings")
    if type(adapter).execute is not Adapter.execute:
        # Hand-written kernels need no namespace; the op tests check what they store.
        return problems
    xp = adapter.namespace()
    for precision in precisions:
        try:
            adapter.storage_dtype(xp, precision)
        except Exception as error:
            problems.append(f"claims {precision} but has no storage dtype for it: {error}")
    return problems
