"""Twins: an op run on the host at a known precision, honest or downgraded on purpose.

A twin is the op's own Array-API definition run through NumPy with the inputs stored in one
format, the arithmetic done in another, and the operands of every matmul optionally rounded
first. The honest twin of a precision (float32; float16 or bfloat16 storage with float32
arithmetic) measures what a correct implementation at that precision errs by: the floor.
The downgraded twins model what kernels quietly do instead (TF32 tensor cores, half-precision
operands or accumulation); a failing check names the one its error matches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from ..precision import PrecisionName, TwinName
from .rounding import FORMAT_DTYPES, Format, round_to

if TYPE_CHECKING:
    from ..ops import HostInputs, Op, OpParams

__all__ = [
    "HONEST_TWIN",
    "TWINS",
    "ReductionWatch",
    "RoundingNamespace",
    "SequentialNamespace",
    "Twin",
    "downgrades",
    "op_truth",
    "run_downgrades",
    "run_honest_twin",
    "run_in_order_twin",
    "run_op_twin",
    "twin_named",
]

# Functions of the standard that multiply matrices: a tensor core reads their operands.
_MATMULS: Final = ("matmul", "tensordot", "vecdot")


@dataclass(frozen=True)
class Twin:
    """One way of computing an op at a known precision.

    ``storage`` None means the check's own precision; ``operands`` None means matmul
    operands are used as they are.
    """

    name: TwinName
    storage: PrecisionName | None = None
    arithmetic: PrecisionName = "f32"
    operands: Format | None = None
    #: Whether each matmul's product is rounded to the operands' format too (a GEMM whose
    #: output is half precision).
    product: bool = False
    #: The one matmul call (1-based, in the order the computation makes them) whose operands
    #: are rounded, of ``matmuls`` calls; None rounds every call's.
    matmul: int | None = None
    matmuls: int | None = None

    def describe(self) -> str:
        """A phrase for a verdict: ``consistent with <this>``."""
        return _DESCRIPTIONS[self.name] + at_matmul(self.matmul, self.matmuls)

    def at_each_matmul(self, count: int) -> tuple[Twin, ...]:
        """This operand twin once per matmul call of a computation that makes ``count`` of
        them (2 to :data:`MAX_SINGLE_MATMULS`), each rounding that call's operands alone;
        none otherwise. A kernel library picks its path by shape: MLX on CUDA runs one of
        a small attention's two matmuls on TF32 tensor cores and the other not."""
        if self.operands is None or self.matmul is not None:
            return ()
        if not 2 <= count <= MAX_SINGLE_MATMULS:
            return ()
        return tuple(replace(self, matmul=i, matmuls=count) for i in range(1, count + 1))


#: The most matmul calls a computation may make for its operand twins to run once per call.
MAX_SINGLE_MATMULS: Final = 4


def at_matmul(matmul: int | None, matmuls: int | None) -> str:
    """`` at matmul 2 of 2 only`` for a twin of one matmul call; empty for every call."""
    return "" if matmul is None else f" at matmul {matmul} of {matmuls} only"


class MatmulCounter:
    """Counts the matmul calls of one run of a computation, and says which to round."""

    def __init__(self, only: int | None = None) -> None:
        self.count = 0
        self._only = only

    def next_rounds(self) -> bool:
        """Count one more call; whether its operands are rounded."""
        self.count += 1
        return self._only is None or self.count == self._only


TWINS: Final[tuple[Twin, ...]] = (
    # Honest storage first, then the downgrades from the most specific (one function's
    # operands) to the most general (every operation): a diagnosis names the first that fits.
    Twin("float32", storage="f32"),
    Twin("tf32 operands", operands="tf32"),
    Twin("tf32 truncated operands", operands="tf32t"),
    Twin("float16 operands", operands="f16"),
    Twin("bfloat16 operands", operands="bf16"),
    Twin("float16 matmuls", operands="f16", product=True),
    Twin("bfloat16 matmuls", operands="bf16", product=True),
    Twin("float16 storage", storage="f16"),
    Twin("bfloat16 storage", storage="bf16"),
    Twin("float16 arithmetic", arithmetic="f16"),
    Twin("bfloat16 arithmetic", arithmetic="bf16"),
)

_DESCRIPTIONS: Final[dict[str, str]] = {
    "float32": "float32 storage and arithmetic",
    "float16 storage": "float16 storage with float32 arithmetic",
    "bfloat16 storage": "bfloat16 storage with float32 arithmetic",
    "tf32 operands": "TF32 matmul operands (float32 rounded to a 10-bit significand)",
    "tf32 truncated operands": "TF32 matmul operands truncated (a float32's low 13 bits "
    "dropped, as a tensor core reads one not converted first)",
    "float16 operands": "float16 matmul operands with float32 accumulation",
    "bfloat16 operands": "bfloat16 matmul operands with float32 accumulation",
    "float16 matmuls": "float16 matmuls (float16 operands and product, float32 accumulation)",
    "bfloat16 matmuls": "bfloat16 matmuls (bfloat16 operands and product, float32 accumulation)",
    "float16 arithmetic": "every operation's result rounded to float16",
    "bfloat16 arithmetic": "every operation's result rounded to bfloat16",
}

#: The honest twin of each precision: what a correct implementation storing in it computes.
HONEST_TWIN: Final[dict[PrecisionName, TwinName]] = {
    "f32": "float32",
    "f16": "float16 storage",
    "bf16": "bfloat16 storage",
}

# Significand bits of each storage: a storage twin finer than the check's precision is no
# downgrade of it.
_BITS: Final[dict[str, int]] = {"f32": 24, "f16": 11, "bf16": 8}


def twin_named(name: str) -> Twin:
    """The twin called ``name``; KeyError for any other name."""
    for twin in TWINS:
        if twin.name == name:
            return twin
    raise KeyError(name)


def downgrades(precision: PrecisionName) -> tuple[Twin, ...]:
    """The twins coarser than ``precision``'s honest one, for diagnosis.

    Storage twins coarser than the precision and every operand or arithmetic twin; one that
    computes exactly what the honest twin does (TF32 operands of float16 storage) is dropped
    by the caller when its output is bit-identical.
    """
    honest = HONEST_TWIN[precision]
    return tuple(
        twin
        for twin in TWINS
        if twin.name != honest and (twin.storage is None or _BITS[twin.storage] < _BITS[precision])
    )


TwinOutputs = tuple[npt.NDArray[np.float64], ...]


def run_downgrades(
    precision: PrecisionName, run: Callable[[Twin, MatmulCounter | None], TwinOutputs | None]
) -> list[tuple[Twin, TwinOutputs]]:
    """Every downgraded twin of ``precision`` as ``run(twin, counter)`` computes it, each
    operand twin followed by itself at each of its matmul calls alone
    (:meth:`Twin.at_each_matmul`, from the calls ``counter`` counted in its run); a twin
    ``run`` gives None for is left out."""
    outputs = []
    for twin in downgrades(precision):
        count = MatmulCounter()
        ran = run(twin, count)
        if ran is not None:
            outputs.append((twin, ran))
        for single in twin.at_each_matmul(count.count):
            if (alone := run(single, None)) is not None:
                outputs.append((single, alone))
    return outputs


class RoundingNamespace:
    """A NumPy Array-API namespace whose matmuls round their operands to ``fmt`` first, and
    with ``product`` their result too; with ``wide`` they accumulate in float64 (then round
    to the operands' dtype), one end of a twin's own spread over accumulation orders.

    The product is returned in its operands' own dtype, so a twin whose arithmetic is
    bfloat16 keeps its matmul results in bfloat16 too (NumPy widens them otherwise).
    Everything else is the wrapped namespace's.
    """

    def __init__(
        self,
        base: Any,
        fmt: Format | None,
        *,
        product: bool = False,
        wide: bool = False,
        counter: MatmulCounter | None = None,
    ) -> None:
        self._base = base
        self._fmt = fmt
        self._product = product
        self._wide = wide
        #: Counts this run's matmul calls and says which are rounded (every one by default).
        self.counter = MatmulCounter() if counter is None else counter

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._base, name)
        if name in _MATMULS:
            return self._rounding(attribute)
        return attribute

    def _rounding(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
            dtype = np.result_type(x1, x2)
            x1, x2, product_fmt = self.read(x1, x2)
            if self._wide:  # the same operands, every product and sum exact in float64
                x1, x2 = np.asarray(x1, np.float64), np.asarray(x2, np.float64)
            product = np.asarray(function(x1, x2, **kwargs))
            if product_fmt is not None:
                product = round_to(product, product_fmt)
            return product.astype(dtype, copy=False)

        return call

    def read(self, x1: Any, x2: Any) -> tuple[Any, Any, Format | None]:
        """One matmul call, counted: its operands as this twin reads them (in their common
        dtype), and the format its product is rounded to (None: as computed)."""
        dtype = np.result_type(x1, x2)
        fmt = self._fmt if self.counter.next_rounds() else None
        if fmt is not None:
            x1 = round_to(x1, fmt).astype(dtype, copy=False)
            x2 = round_to(x2, fmt).astype(dtype, copy=False)
        return x1, x2, fmt if self._product else None


class SequentialNamespace:
    """A NumPy Array-API namespace whose sums accumulate one term at a time, in order.

    NumPy sums pairwise, which is unusually accurate (error ~ log n ulps); an honest
    float32 kernel that adds in order, or in a few SIMD lanes, errs by up to ~sqrt(n) ulps
    on random data. The floor takes the larger of the two, so an honest summation order
    is never a failure (measured: MLX's float32 ``sum`` of 10^4 values lands 3000x NumPy's
    error and 0.3-1x this one's). ``sum``, ``mean`` and ``vecdot`` accumulate in the
    arrays' dtype, float32 for half-precision storage, and round once to it.
    """

    def __init__(self, base: Any) -> None:
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    @staticmethod
    def _in_order(x: Any, axis: Any, keepdims: bool) -> Any:
        x = np.asarray(x)
        if x.dtype.kind != "f" and x.dtype != FORMAT_DTYPES["bf16"]:
            return None
        wide = np.float32 if x.dtype.itemsize < 4 else x.dtype
        chosen = tuple(range(x.ndim)) if axis is None else axis
        chosen = (chosen,) if isinstance(chosen, int) else tuple(chosen)
        axes = tuple(a % max(x.ndim, 1) for a in chosen)
        if x.ndim == 0 or not axes:
            return x
        kept = [a for a in range(x.ndim) if a not in axes]
        moved = np.transpose(x, (*kept, *axes)).reshape(*[x.shape[a] for a in kept], -1)
        if moved.shape[-1] == 0:
            total = np.zeros(moved.shape[:-1], dtype=wide)
        else:
            total = np.cumsum(moved, axis=-1, dtype=wide)[..., -1]
        if keepdims:
            total = total.reshape([1 if a in axes else x.shape[a] for a in range(x.ndim)])
        return np.asarray(total).astype(x.dtype)

    def sum(self, x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        total = None if dtype is not None else self._in_order(x, axis, keepdims)
        if total is None:
            return self._base.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)
        return total

    def mean(self, x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
        total = self._in_order(x, axis, keepdims)
        if total is None:
            return self._base.mean(x, axis=axis, keepdims=keepdims)
        count = np.asarray(x).size // max(np.asarray(total).size, 1)
        return (total / max(count, 1)).astype(total.dtype)

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
        # Over a twin's rounding namespace, its operands are read (and the call counted)
        # as that namespace's own vecdot would read them.
        read = getattr(self._base, "read", None)
        product_fmt = None
        if read is not None:
            x1, x2, product_fmt = read(x1, x2)
        product = self._base.multiply(self._base.conj(x1), x2)
        total = self._in_order(product, axis, False)
        if total is None:  # not a float: the order does not matter (operands read above)
            return _namespace().vecdot(x1, x2, axis=axis)
        if product_fmt is not None:
            total = round_to(total, product_fmt).astype(total.dtype, copy=False)
        return total


#: What :class:`SequentialNamespace` sums in order: code that calls none of them computes the
#: same in either summation order.
_REDUCTIONS: Final = frozenset({"sum", "mean", "vecdot"})


class ReductionWatch:
    """A namespace that notes whether the code it serves asked for a reduction that
    :class:`SequentialNamespace` sums in order; where it did not, the in-order twin would
    repeat the pairwise one bit for bit, and is not run."""

    def __init__(self, base: Any = None) -> None:
        self._base = _namespace() if base is None else base
        self.reduced = False

    def __getattr__(self, name: str) -> Any:
        if name in _REDUCTIONS:
            self.reduced = True
        return getattr(self._base, name)


def _namespace() -> Any:
    import array_api_compat.numpy

    return array_api_compat.numpy


def _stored(inputs: Mapping[str, npt.NDArray[Any]], fmt: PrecisionName) -> dict[str, Any]:
    return {name: round_to(values, fmt) for name, values in inputs.items()}


def op_truth(
    op: Op[Any],
    params: OpParams,
    inputs: HostInputs,
    precision: PrecisionName,
    *,
    xp: Any = None,
) -> npt.NDArray[np.float64]:
    """The op in float64 from the inputs as ``precision`` stores them: the truth, flat.

    ``xp`` is NumPy's Array-API namespace by default (a :class:`ReductionWatch` over it
    tells whether the op reduces).
    """
    arrays = {k: v.astype(np.float64) for k, v in _stored(inputs, precision).items()}
    xp = _namespace() if xp is None else xp
    with np.errstate(all="ignore"):
        out = op.compute(xp, arrays, params, accumulate=np.float64)
    return np.asarray(out, dtype=np.float64).reshape(-1)


def run_op_twin(
    op: Op[Any],
    params: OpParams,
    inputs: HostInputs,
    precision: PrecisionName,
    twin: Twin,
    *,
    orders: bool = False,
    count: MatmulCounter | None = None,
) -> tuple[npt.NDArray[np.float64], ...]:
    """The op computed as ``twin`` computes it, for a check at ``precision``; flat float64.

    With ``orders``, also the same twin with its matmuls accumulated in float64 and with its
    sums in order: three honest implementations of the twin, whose spread is the twin's own
    floor (a chain of roundings, TF32 operands of a product of a product, amplifies a
    difference of summation order into whole TF32 steps). A twin of float16 or bfloat16
    arithmetic is defined by where it accumulates, and runs once. ``count`` counts the
    matmul calls of the first run (a twin of every call's).
    """
    arithmetic = FORMAT_DTYPES[twin.arithmetic]
    arrays = _stored(inputs, twin.storage or precision)
    outputs = []
    with np.errstate(all="ignore"):
        # A narrower arithmetic is the twin's own accumulation order: it runs once.
        for xp in twin_namespaces(twin, orders=orders and twin.arithmetic == "f32", count=count):
            out = op.compute(xp, arrays, params, accumulate=arithmetic)
            outputs.append(np.asarray(out, dtype=np.float64).reshape(-1))
    return tuple(outputs)


def twin_namespaces(twin: Twin, *, orders: bool, count: MatmulCounter | None = None) -> list[Any]:
    """Fresh namespaces computing as ``twin`` does: as it is, then (``orders``) with its
    matmuls accumulated in float64 and with its sums in order. ``count``, for a twin of
    every matmul call, counts the first run's calls."""
    base = _namespace()
    if count is not None and twin.matmul is not None:
        raise ValueError("a twin of one matmul call counts with its own counter")

    def rounding(wide: bool = False, counter: MatmulCounter | None = None) -> RoundingNamespace:
        return RoundingNamespace(
            base,
            twin.operands,
            product=twin.product,
            wide=wide,
            counter=MatmulCounter(twin.matmul) if counter is None else counter,
        )

    plain = twin.operands is None and twin.arithmetic == "f32"  # NumPy's own namespace
    first = base if plain else rounding(counter=count)
    if not orders:
        return [first]
    return [first, rounding(wide=True), SequentialNamespace(base if plain else rounding())]


def run_honest_twin(
    op: Op[Any], params: OpParams, inputs: HostInputs, precision: PrecisionName
) -> npt.NDArray[np.float64]:
    """The honest twin of ``precision`` with NumPy's pairwise sums, flat."""
    (pairwise,) = run_op_twin(op, params, inputs, precision, twin_named(HONEST_TWIN[precision]))
    return pairwise


def run_in_order_twin(
    op: Op[Any], params: OpParams, inputs: HostInputs, precision: PrecisionName
) -> npt.NDArray[np.float64]:
    """The honest twin of ``precision`` with every sum in order, flat."""
    honest = twin_named(HONEST_TWIN[precision])
    arrays = _stored(inputs, honest.storage or precision)
    with np.errstate(all="ignore"):
        in_order = op.compute(
            SequentialNamespace(_namespace()), arrays, params, accumulate=np.float32
        )
    return np.asarray(in_order, dtype=np.float64).reshape(-1)
