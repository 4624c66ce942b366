"""The floor of a registered op's check: truth and twins from the check's own inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..precision import PrecisionName
from .measure import Floor, Spans, judge_floor
from .twins import (
    MatmulCounter,
    ReductionWatch,
    Twin,
    TwinOutputs,
    op_truth,
    run_downgrades,
    run_honest_twin,
    run_in_order_twin,
    run_op_twin,
)

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
    in_order: bool | None = None,
) -> Floor:
    """Measure ``candidate`` (the flat output of the check) against its precision's floor.

    The truth and the pairwise honest twin always run (two host computations of the op);
    the in-order honest twin runs for an op that reduces, when the pairwise floor fails the
    candidate (or as ``in_order`` says: replay follows the report); the downgraded twins run
    only when the candidate fails its floor or ``diagnose`` is set.
    """
    watch = ReductionWatch()
    truth = op_truth(op, params, inputs, precision, xp=watch)

    def twin_run(twin: Twin, count: MatmulCounter | None) -> TwinOutputs:
        return run_op_twin(op, params, inputs, precision, twin, orders=True, count=count)

    return judge_floor(
        truth,
        run_honest_twin(op, params, inputs, precision),
        np.asarray(candidate).reshape(-1),
        precision,
        segments=segments,
        in_order=(lambda: run_in_order_twin(op, params, inputs, precision))
        if watch.reduced
        else None,
        run_in_order=in_order,
        downgraded=lambda: run_downgrades(precision, twin_run),
        diagnose=diagnose,
        multiple=multiple,
    )
