"""The floor of ``compare(fn, ...)``: the function's truth and twins, run through NumPy.

A function of arrays has no declared arithmetic: its twins are the function itself run on
NumPy arrays stored in a format. The truth runs it on float64 arrays through a namespace
whose float32 and float16 dtypes are float64 (so ``xp.astype(x, xp.float32)`` inside the
function keeps the truth exact). The honest twin runs it on arrays stored at the check's
precision, NumPy rounding every operation's result there (at f32 that is the NumPy
reference itself, reused). Matmul twins round the operands of ``xp.matmul``,
``xp.tensordot`` and ``xp.vecdot``; a product written ``a @ b`` is not seen by them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..precision import PrecisionName, TwinName
from .measure import Floor, judge_floor
from .rounding import round_to
from .twins import RoundingNamespace, SequentialNamespace, Twin, downgrades

__all__ = ["function_floor"]


class _TruthNamespace:
    """NumPy's Array-API namespace with every floating dtype read as float64."""

    _WIDE = frozenset({"float16", "float32", "bfloat16", "float64"})

    def __init__(self, base: Any) -> None:
        self._base = base

    def __getattr__(self, name: str) -> Any:
        if name in self._WIDE:
            return self._base.float64
        return getattr(self._base, name)


def _namespace() -> Any:
    import array_api_compat.numpy

    return array_api_compat.numpy


def _flat(result: Any) -> npt.NDArray[np.float64]:
    outputs = list(result) if isinstance(result, tuple | list) else [result]
    parts = [np.asarray(o, dtype=np.float64).reshape(-1) for o in outputs]
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _run(fn: Callable[..., Any], xp: Any, arrays: Sequence[Any]) -> npt.NDArray[np.float64]:
    with np.errstate(all="ignore"):
        return _flat(fn(xp, *arrays))


def _twin(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[Any]],
    precision: PrecisionName,
    twin: Twin,
) -> npt.NDArray[np.float64]:
    storage = twin.storage or precision
    coarser = twin.arithmetic if twin.arithmetic != "f32" else storage
    arrays = [round_to(round_to(h, storage), coarser) for h in hosts]
    xp = _namespace()
    if twin.operands is not None:
        xp = RoundingNamespace(xp, twin.operands, product=twin.product)
    return _run(fn, xp, arrays)


def function_floor(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[Any]],
    precision: PrecisionName,
    candidate: npt.NDArray[Any],
    *,
    honest: npt.NDArray[Any] | None = None,
    diagnose: bool = False,
) -> Floor | None:
    """The floor of ``fn`` on ``hosts`` for the flat ``candidate``; None where it cannot be
    measured (the function does not run on NumPy in float64, or its truth is not finite).

    ``honest`` is the NumPy reference's own flat output, reused as the float32 twin.
    """
    try:
        stored = [round_to(h, precision) for h in hosts]
        truth = _run(fn, _TruthNamespace(_namespace()), [s.astype(np.float64) for s in stored])
        if honest is None or precision != "f32":
            honest = _run(fn, _namespace(), stored)
        ordered = _run(fn, SequentialNamespace(_namespace()), stored)
    except Exception:  # a function NumPy cannot run in float64: no floor, the tolerance stands
        return None
    if truth.shape != candidate.reshape(-1).shape or not np.isfinite(truth).all():
        return None

    def downgraded() -> dict[TwinName, npt.NDArray[np.float64]]:
        outputs = {}
        for twin in downgrades(precision):
            try:
                outputs[twin.name] = _twin(fn, hosts, precision, twin)
            except Exception:  # a twin the function cannot run (no float16 op): not a model
                continue
        return {n: o for n, o in outputs.items() if o.shape == truth.shape}

    return judge_floor(
        truth,
        [np.asarray(honest, dtype=np.float64).reshape(-1), ordered],
        np.asarray(candidate).reshape(-1),
        precision,
        downgraded=downgraded,
        diagnose=diagnose,
    )
