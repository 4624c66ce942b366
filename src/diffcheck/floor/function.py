"""The floor of ``compare(fn, ...)``: the function's truth and twins, run through NumPy.

A function of arrays has no declared arithmetic: its twins are the function itself run on
NumPy arrays stored in a format. The truth runs it on float64 arrays through a namespace
whose float32 and float16 dtypes are float64 (so ``xp.astype(x, xp.float32)`` inside the
function keeps the truth exact). The honest twin runs it on arrays stored at the check's
precision, NumPy rounding every operation's result there (at f32 that is the NumPy
reference itself, reused). Matmul twins round the operands of ``xp.matmul``,
``xp.tensordot`` and ``xp.vecdot``, and of ``a @ b`` on the inputs and on what is computed
from them by NumPy's ufuncs (:class:`_MatmulOperands`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..precision import PrecisionName
from .measure import Floor, NoFloor, judge_floor
from .rounding import Format, round_to
from .twins import (
    MatmulCounter,
    ReductionWatch,
    SequentialNamespace,
    Twin,
    TwinOutputs,
    run_downgrades,
    twin_namespaces,
)

__all__ = ["FunctionTruth", "function_floor", "function_truth"]


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


class _MatmulOperands(np.ndarray):
    """An input array whose ``a @ b`` rounds its operands as the twin's ``xp.matmul`` does.

    ``a @ b`` on NumPy arrays never reaches the namespace; NumPy's matmul is a ufunc, so an
    input of this subclass sees it in ``__array_ufunc__``, and every ufunc result stays of
    this subclass so a product of products is seen too. ``_fmt`` and ``_product`` are set on
    a subclass made per twin (:func:`_operands`).
    """

    _fmt: Format | None = None
    _product: bool = False
    #: The run's matmul calls, ``xp.matmul`` and ``@`` alike: which ones round.
    _counter: MatmulCounter | None = None

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [np.asarray(x) if isinstance(x, _MatmulOperands) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) for o in kwargs["out"])
        if ufunc is np.matmul and method == "__call__" and self._fmt is not None:
            counted = self._counter is None or self._counter.next_rounds()
            fmt = self._fmt if counted else None
            dtype = np.result_type(*plain)
            if fmt is not None:
                plain = [round_to(x, fmt).astype(dtype, copy=False) for x in plain]
            result = np.asarray(ufunc(*plain, **kwargs))
            if self._product and fmt is not None:
                result = round_to(result, fmt).astype(dtype, copy=False)
        else:
            result = getattr(ufunc, method)(*plain, **kwargs)
        return result.view(type(self)) if isinstance(result, np.ndarray) else result


def _operands(
    twin: Twin, arrays: Sequence[npt.NDArray[Any]], counter: MatmulCounter | None
) -> list[npt.NDArray[Any]]:
    """``arrays`` as inputs whose ``@`` rounds like ``twin``'s matmuls, counted by the run's
    ``counter`` (as they are for a twin that leaves matmul operands alone)."""
    if twin.operands is None:
        return list(arrays)
    kind = type(
        "MatmulOperands",
        (_MatmulOperands,),
        {"_fmt": twin.operands, "_product": twin.product, "_counter": counter},
    )
    return [np.asarray(a).view(kind) for a in arrays]


def _twin(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[Any]],
    precision: PrecisionName,
    twin: Twin,
    count: MatmulCounter | None = None,
) -> tuple[npt.NDArray[np.float64], ...]:
    """``fn`` as ``twin`` computes it; then with its matmuls accumulated in float64 and with
    its sums in order (the twin's own spread, :func:`~.twins.run_op_twin`). ``count`` counts
    the first run's matmul calls."""
    storage = twin.storage or precision
    coarser = twin.arithmetic if twin.arithmetic != "f32" else storage
    stored = [round_to(round_to(h, storage), coarser) for h in hosts]
    # The accumulation's format is the twin when it is not float32: it runs once.
    namespaces = twin_namespaces(twin, orders=twin.arithmetic == "f32", count=count)
    return tuple(
        _run(fn, xp, _operands(twin, stored, getattr(xp, "counter", None))) for xp in namespaces
    )


def _downgraded(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[Any]],
    precision: PrecisionName,
    size: int,
) -> list[tuple[Twin, TwinOutputs]]:
    """Every downgraded twin of ``precision`` that ``fn`` runs as
    (:func:`~.twins.run_downgrades`); those whose outputs are not ``size`` elements are
    left out."""

    def run(twin: Twin, count: MatmulCounter | None) -> TwinOutputs | None:
        try:
            ran = _twin(fn, hosts, precision, twin, count)
        except Exception:  # a twin the function cannot run (no float16 op): not a model
            return None
        return ran if all(x.size == size for x in ran) else None

    return run_downgrades(precision, run)


@dataclass(frozen=True)
class FunctionTruth:
    """What the floor of ``compare(fn)`` needs before the candidate's output: the inputs as
    the precision stores them, the float64 truth (flat), the honest twin's own output where
    it is not the NumPy reference's (flat, else None) and whether ``fn`` reduced."""

    stored: list[npt.NDArray[Any]]
    truth: npt.NDArray[np.float64]
    honest: npt.NDArray[np.float64] | None
    reduced: bool


def function_truth(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[Any]],
    precision: PrecisionName,
    *,
    honest_needed: bool = True,
) -> FunctionTruth | NoFloor:
    """Run ``fn`` on NumPy in float64 (and as the honest twin of ``precision`` when
    ``honest_needed``); never raises: :class:`NoFloor` says why where it cannot.

    It reads nothing of the candidate, so ``compare`` runs it on a second thread while the
    candidate computes (it costs about one more reference run).
    """
    try:
        stored = [round_to(h, precision) for h in hosts]
        watch = ReductionWatch()
        truth = _run(fn, _TruthNamespace(watch), [s.astype(np.float64) for s in stored])
        honest = _run(fn, _namespace(), stored) if honest_needed else None
    except Exception as error:  # NumPy cannot run it in float64: the tolerance stands
        return NoFloor(
            f"the function does not run on NumPy in float64: {type(error).__name__}: {error}"
        )
    return FunctionTruth(stored, truth, honest, watch.reduced)


def function_floor(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[Any]],
    precision: PrecisionName,
    candidate: npt.NDArray[Any],
    *,
    honest: npt.NDArray[Any] | None = None,
    diagnose: bool = False,
    truth: FunctionTruth | NoFloor | None = None,
) -> Floor | NoFloor:
    """The floor of ``fn`` on ``hosts`` for the flat ``candidate``; :class:`NoFloor`, saying
    why, where it cannot be measured (the function does not run on NumPy in float64, or its
    truth is not finite).

    ``honest`` is the NumPy reference's own flat output, reused as the float32 twin;
    ``truth`` is :func:`function_truth`'s answer where it was run already (computed here
    otherwise).
    """
    reuse = honest is not None and precision == "f32"
    if truth is None or (not reuse and isinstance(truth, FunctionTruth) and truth.honest is None):
        truth = function_truth(fn, hosts, precision, honest_needed=not reuse)
    if isinstance(truth, NoFloor):
        return truth
    pairwise = np.asarray(honest if reuse else truth.honest).reshape(-1)
    stored, expected = truth.stored, truth.truth
    if expected.shape != candidate.reshape(-1).shape:
        return NoFloor(
            f"its float64 run gave {expected.size} elements, the candidate {candidate.size}"
        )
    if not np.isfinite(expected).all():
        return NoFloor("its float64 truth is not finite")

    def in_order() -> npt.NDArray[np.float64]:
        try:
            return _run(fn, SequentialNamespace(_namespace()), stored)
        except Exception:  # it ran pairwise: an in-order failure is not the function's
            return pairwise

    return judge_floor(
        expected,
        pairwise,
        np.asarray(candidate).reshape(-1),
        precision,
        in_order=in_order if truth.reduced else None,  # one that does not reduce: the same
        downgraded=lambda: _downgraded(fn, hosts, precision, expected.size),
        diagnose=diagnose,
    )
