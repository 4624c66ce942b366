"""Adapters wrapped around a real one, to prove that a check can fail.

:func:`perturb` keeps the wrapped adapter's execution and corrupts its output in one of the
ways a broken backend does (one segment off by a small factor, a NaN, a truncated output, a
skipped step that leaves a buffer's sentinel, elements in the wrong order).
:func:`unavailable` makes a working adapter's probe say it cannot run, so a test can check
that the pipeline records ``not_run`` and never dispatches it. Both delegate everything else
(name, capabilities, entrypoint labels), so the runner treats them as the adapter itself.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from ..adapters import Adapter, Capabilities, Execution, Probe, Role
from ..ops import HostInputs, Op, OpParams
from ..ops.lifecycle import OUTPUT_SENTINEL
from ..precision import PrecisionName, default_max_nmse

__all__ = ["PERTURBATIONS", "Perturbation", "WrappedAdapter", "perturb", "unavailable"]

Perturbation = Literal["scale_segment", "nan", "truncate", "skipped_step", "reversed"]
#: Every kind of wrong output :func:`perturb` can inject.
PERTURBATIONS: Final[tuple[Perturbation, ...]] = (
    "scale_segment",
    "nan",
    "truncate",
    "skipped_step",
    "reversed",
)

Transform = Callable[[npt.NDArray[np.float32], PrecisionName], npt.NDArray[np.float32]]


class WrappedAdapter(Adapter):
    """Delegates to ``inner``; ``transform`` rewrites outputs, ``probe`` replaces the probe.

    ``calls`` counts ``execute`` calls, so a test can prove a backend was never dispatched.
    """

    name = "wrapped"

    def __init__(
        self,
        inner: Adapter,
        *,
        transform: Transform | None = None,
        probe: Probe | None = None,
    ) -> None:
        super().__init__(inner.device)
        self.inner = inner
        self.transform = transform
        self.probe_override = probe
        self.calls = 0

    @property
    def spec(self) -> str:
        return self.inner.spec

    @property
    def has_command_contexts(self) -> bool:
        return self.inner.has_command_contexts

    def identity(self) -> tuple[str, str | None]:
        return self.inner.identity()

    def _probe(self) -> Probe:
        return self.probe_override or self.inner.probe()

    def namespace(self) -> Any:
        return self.inner.namespace()

    def computing(self) -> AbstractContextManager[Any]:
        return self.inner.computing()

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    def kernel_entrypoint(
        self, op: Op[OpParams], params: OpParams, precision: PrecisionName
    ) -> str:
        return self.inner.kernel_entrypoint(op, params, precision)

    def execution_path(self, op: Op[OpParams]) -> str:
        return self.inner.execution_path(op)

    def execute(
        self,
        op: Op[OpParams],
        params: OpParams,
        inputs: HostInputs,
        precision: PrecisionName,
        *,
        role: Role = "candidate",
    ) -> Execution:
        self.calls += 1
        run = self.inner.execute(op, params, inputs, precision, role=role)
        if self.transform is None:
            return run
        return dataclasses.replace(run, output=self.transform(run.output.copy(), precision))


def _last_quarter(values: npt.NDArray[np.float32]) -> slice:
    # The lifecycle's output is four equal phases, so its last quarter is exactly one phase;
    # for the other ops it is the last rows (or elements) of the output.
    return slice(values.size - max(1, values.size // 4), values.size)


def _scale(values: npt.NDArray[np.float32], precision: PrecisionName) -> npt.NDArray[np.float32]:
    part = _last_quarter(values)
    wide = values.astype(np.float64)
    total = float(np.dot(wide, wide))
    share = float(np.dot(wide[part], wide[part])) / total if total > 0 else 0.0
    if share == 0.0:
        values[part] = 1.0
        return values
    # Scaling a part holding `share` of the energy by (1 + e) gives an NMSE of e^2 * share.
    # Choosing e^2 * share = 100 x tolerance puts the error far above any precision's honest
    # rounding, yet the change stays small (about 0.6% on a quarter at f32): the kind of
    # error a large correct remainder can hide from an aggregate metric.
    factor = 1.0 + math.sqrt(100.0 * default_max_nmse(precision) / share)
    values[part] = (wide[part] * factor).astype(np.float32)
    return values


def _nan(values: npt.NDArray[np.float32], precision: PrecisionName) -> npt.NDArray[np.float32]:
    values[values.size // 2] = np.nan
    return values


def _truncate(values: npt.NDArray[np.float32], precision: PrecisionName) -> npt.NDArray[np.float32]:
    return values[:-1]


def _skipped(values: npt.NDArray[np.float32], precision: PrecisionName) -> npt.NDArray[np.float32]:
    values[_last_quarter(values)] = OUTPUT_SENTINEL
    return values


def _reversed(values: npt.NDArray[np.float32], precision: PrecisionName) -> npt.NDArray[np.float32]:
    return values[::-1].copy()


_TRANSFORMS: Final[dict[Perturbation, Transform]] = {
    "scale_segment": _scale,
    "nan": _nan,
    "truncate": _truncate,
    "skipped_step": _skipped,
    "reversed": _reversed,
}


def perturb(adapter: Adapter, kind: Perturbation) -> WrappedAdapter:
    """``adapter`` with its outputs corrupted in one way a broken backend corrupts them.

    Parameters
    ----------
    adapter
        The adapter whose real outputs are corrupted.
    kind
        ``scale_segment``: the last quarter of the output (one lifecycle phase) scaled by a
        small factor, about 100x the tolerance in NMSE; ``nan``: one NaN mid-output;
        ``truncate``: the last element dropped; ``skipped_step``: the last quarter left at
        the output buffer's sentinel value (13.0); ``reversed``: elements in reverse order.

    Returns
    -------
    WrappedAdapter
        Behaves as ``adapter`` in every other way.

    Raises
    ------
    ValueError
        When ``kind`` is not one of :data:`PERTURBATIONS`.
    """
    if kind not in _TRANSFORMS:
        raise ValueError(f"perturbation {kind!r} is unknown; it must be one of {PERTURBATIONS}")
    return WrappedAdapter(adapter, transform=_TRANSFORMS[kind])


def unavailable(adapter: Adapter, reason: str) -> WrappedAdapter:
    """``adapter`` with a probe that reports it unavailable for ``reason``."""
    return WrappedAdapter(adapter, probe=Probe.unavailable(reason))
