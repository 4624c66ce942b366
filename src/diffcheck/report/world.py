"""Replay against the world: the reference recomputed from config, the candidate re-run.

A report's bits agreeing with its own figures proves nothing: a forger can write any two
outputs that agree. So replay regenerates the inputs from ``config`` (op, params, seed) with
the op's own generator, recomputes the reference with ``reference_backend`` exactly as the
runner ran it, and requires the stored reference to be that recomputation before it judges
the candidate's bits. An edited seed, op parameter, reference or pair of outputs then no
longer matches the world.

The bound. A reference that accumulates in float32 is compared bit for bit. A reference that
accumulates in float64 (``Op.wide_reference_accumulation``: GEMM through BLAS, reductions)
rounds once to float32 at the end; two float64 computations of the same sum (another BLAS
build, thread count or summation order) differ by a few float64 ULPs, far below half a
float32 ULP, so after that one rounding they differ by at most :data:`WIDE_ULP_BOUND`
float32 ULP per element. Non-finite elements must match bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..adapters import resolve
from ..config import Check
from ..provenance import Fingerprint

__all__ = [
    "WIDE_ULP_BOUND",
    "Recomputed",
    "compare_reference",
    "recompute_reference",
    "rerun_candidate",
    "ulp_distance",
]

#: Most float32 ULPs an element of a float64-accumulated reference may differ by.
WIDE_ULP_BOUND = 1


@dataclass(frozen=True)
class Recomputed:
    """The reference recomputed from a config, or why it could not be."""

    output: npt.NDArray[np.float32] | None
    storage: str | None = None
    problem: str | None = None
    #: The library whose arrays the recomputation returned (None: host values only).
    computed_by: Fingerprint | None = None


def _error_text(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def recompute_reference(check: Check) -> Recomputed:
    """Regenerate the inputs of ``check`` and run its reference backend on them.

    Never raises: a backend that is unknown or unavailable here, or one that raises, gives a
    :class:`Recomputed` whose ``problem`` says so (the stored reference is then unverified).
    """
    try:
        adapter = resolve(check.reference)
        probe = adapter.probe()
        if not probe.is_available:
            return Recomputed(None, problem=f"backend {check.reference} here: {probe.reason}")
        inputs = check.op.inputs(check.params, check.seed)
        run = adapter.execute(check.op, check.params, inputs, "f32", role="reference")
    except Exception as error:  # a missing or broken backend is a finding, not a crash
        return Recomputed(None, problem=f"backend {check.reference}: {_error_text(error)}")
    return Recomputed(
        np.ascontiguousarray(run.output, np.float32).reshape(-1),
        run.output_storage,
        computed_by=run.computed_by,
    )


def ulp_distance(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """Elementwise distance in float32 ULPs (-0.0 and +0.0 are 0 apart)."""

    def ordered(x: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        bits = x.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)

    distance: npt.NDArray[np.int64] = np.abs(ordered(a) - ordered(b))
    return distance


def compare_reference(
    stored: npt.NDArray[np.float32], recomputed: npt.NDArray[np.float32], wide: bool
) -> tuple[str | None, str]:
    """(disagreement or None, what was found) for a stored reference and its recomputation."""
    if stored.size != recomputed.size:
        return (
            f"result.reference: {stored.size} elements stored, {recomputed.size} recomputed "
            "from config",
            "",
        )
    differs = stored.view(np.uint32) != recomputed.view(np.uint32)
    count = int(np.count_nonzero(differs))
    if count == 0:
        return None, "reference recomputed from config: bit-exact"
    first = int(np.argmax(differs))
    finite = np.isfinite(stored) & np.isfinite(recomputed)
    distance = ulp_distance(stored, recomputed)
    worst = int(distance[finite].max()) if finite.any() else 0
    bound = WIDE_ULP_BOUND if wide else 0
    within = bool(np.all(finite[differs])) and worst <= bound
    found = (
        f"{count} of {stored.size} elements differ (max {worst} ULP; first at flat index "
        f"{first}: stored {stored[first]!r}, recomputed {recomputed[first]!r})"
    )
    if within:
        return None, f"reference recomputed from config: within {bound} ULP ({found})"
    allowed = "bit-exact" if bound == 0 else f"within {bound} float32 ULP"
    return (
        f"result.reference is not the reference recomputed from config "
        f"(must be {allowed}): {found}",
        "",
    )


@dataclass(frozen=True)
class Rerun:
    """What re-running the candidate found."""

    line: str
    status: str | None = None
    #: The library whose arrays the re-run candidate returned (None: host values only).
    computed_by: Fingerprint | None = None
    #: Why the re-run does not confirm the stored output (a disagreement), or None.
    problem: str | None = None
    #: Whether the re-run reproduced the stored output bit for bit.
    reproduced: bool = False
    #: The storages the re-run reported (input, output); None when it left no output.
    storages: tuple[str, str] | None = None


def _declares_deterministic(adapter: Any) -> bool:
    """Whether the candidate's adapter says its output bits reproduce (the default)."""
    try:
        return bool(adapter.capabilities().deterministic)
    except Exception:  # a capability query that fails declares nothing: bits must reproduce
        return True


def rerun_candidate(check: Check, stored: npt.NDArray[np.float32] | None) -> Rerun:
    """Run the candidate of ``check`` again and say whether its stored bits reproduce.

    ``--rerun`` decides: a stored output the re-run does not reproduce bit for bit is a
    disagreement (``problem``), unless the candidate's adapter declares its output
    non-deterministic (:attr:`~diffcheck.adapters.Capabilities.deterministic`), when the
    re-run's own verdict must be the stored one instead (the caller compares statuses). A
    stored output the candidate cannot re-run here is not confirmed either.
    """
    from ..runner import bind, execute_check  # lazily: the runner imports this package

    try:
        adapter = resolve(check.require_backend)
    except Exception:  # unknown here: execute_check says so in its outcome
        adapter = None
    outcome = execute_check(check, candidate=adapter)
    verdict = bind(outcome, check)
    status = verdict.status if verdict is not None else outcome.status
    if outcome.actual is None:
        line = f"candidate not re-run to an output: {outcome.status} ({outcome.reason})"
        problem = (
            None
            if stored is None
            else f"re-run: the candidate {check.require_backend} did not run to an output here "
            f"({outcome.status}: {outcome.reason}), so its stored output is not confirmed"
        )
        return Rerun(line, problem=problem)
    fresh = np.ascontiguousarray(outcome.actual, np.float32).reshape(-1)
    run = outcome.candidate_execution
    library = None if run is None else run.computed_by
    storages = None if run is None else (run.input_storage, run.output_storage)
    found = _reproduction(check, stored, fresh, status, library, adapter)
    return replace(found, storages=storages)


def _reproduction(
    check: Check,
    stored: npt.NDArray[np.float32] | None,
    fresh: npt.NDArray[np.float32],
    status: str,
    library: Fingerprint | None,
    adapter: Any,
) -> Rerun:
    """Whether the re-run's output ``fresh`` is the ``stored`` one (see rerun_candidate)."""
    if stored is None:
        return Rerun(
            f"candidate re-run: {status}; no stored output to compare with", status, library
        )
    if stored.size != fresh.size:
        line = f"candidate re-run: {status}; {fresh.size} elements, {stored.size} stored"
        return Rerun(line, status, library, f"re-run: {fresh.size} elements, {stored.size} stored")
    differs = int(np.count_nonzero(stored.view(np.uint32) != fresh.view(np.uint32)))
    if differs == 0:
        return Rerun(
            f"candidate re-run: {status}; stored bits reproduce bit-exact",
            status,
            library,
            reproduced=True,
        )
    wide_stored, wide_fresh = stored.astype(np.float64), fresh.astype(np.float64)
    with np.errstate(all="ignore"):
        nmse = float(np.mean((wide_stored - wide_fresh) ** 2) / np.mean(wide_stored**2))
    found = f"{differs} of {fresh.size} elements differ, NMSE between stored and re-run {nmse:.3e}"
    deterministic = adapter is None or _declares_deterministic(adapter)
    problem = (
        f"re-run: stored bits do not reproduce ({found}), and {check.require_backend} "
        "declares its output deterministic"
        if deterministic
        else None
    )
    declared = "" if deterministic else " (declared non-deterministic: the verdict must hold)"
    return Rerun(
        f"candidate re-run: {status}; stored bits do not reproduce: {found}{declared}",
        status,
        library,
        problem,
    )
