"""The floor of a registered op's check: truth and twins from the check's own inputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..precision import PrecisionName, TwinName
from .measure import Floor, Spans, judge_floor
from .twins import downgrades, op_truth, run_honest_twins, run_op_twin

if TYPE_CHECKING:
    from ..ops import HostInputs, Op, OpParams

__all__ = ["op_floor"]


def op_floor(
    op: Op[Any],
    params: OpParams,
    inputs: HostInputs,
    precision: PrecisionName,
    candidate: npt.NDArray[Any],
    *,
    segments: Spans = (),
    diagnose: bool = False,
    multiple: float | None = None,
) -> Floor:
    """Measure ``candidate`` (the flat output of the check) against its precision's floor.

    The truth and the honest twins always run (three host computations of the op); the
    downgraded twins run only when the candidate fails its floor or ``diagnose`` is set.
    """
    truth = op_truth(op, params, inputs, precision)
    honest = run_honest_twins(op, params, inputs, precision)

    def downgraded() -> dict[TwinName, npt.NDArray[np.float64]]:
        twins: Sequence[Any] = downgrades(precision)
        return {t.name: run_op_twin(op, params, inputs, precision, t) for t in twins}

    return judge_floor(
        truth,
        honest,
        np.asarray(candidate).reshape(-1),
        precision,
        segments=segments,
        downgraded=downgraded,
        diagnose=diagnose,
        multiple=multiple,
    )
