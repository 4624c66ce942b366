"""Recompute a bundle's NumPy side from its stored inputs and compare it with the stored output.

NumPy is always installed, so a side a bundle says NumPy computed is *derived*, not claimed:
replay calls NumPy on the stored inputs and the stored output must be what NumPy returns.
That is what catches a bundle whose two outputs were swapped (the stored reference is the
candidate's wrong answer) or whose reference was rewritten to agree with the candidate.

The comparison is bit-exact (dtype, shape, bytes): NumPy's element-wise functions, sorts and
reductions are deterministic on one build. Functions that go through BLAS or LAPACK
(:data:`LIBRARY_DEPENDENT`) may round differently across builds; for those a stored output
that differs in bits is accepted when the value model judges it equal to NumPy's result
within that function's bound (the bound the search itself applies), and not otherwise.
A side on another backend is compared when that backend runs here (the reference), or
left to the replay's own run (the candidate).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..adapters.numpy_ref import NumpyAdapter
from ..values.call import Outcome, call_on, host_inputs
from ..values.compare import compare_values, host_value
from .bundle import Bundle, Output, decode_array
from .recipes import Example, call_for

__all__ = ["LIBRARY_DEPENDENT", "Side", "is_numpy", "recompute_side"]

#: Functions whose NumPy result depends on the BLAS/LAPACK build, not only on NumPy.
LIBRARY_DEPENDENT = frozenset(
    {"matmul", "tensordot", "vecdot", "linalg.matmul", "linalg.tensordot", "linalg.vecdot"}
)


def is_numpy(backend: str) -> bool:
    """Whether a backend name is NumPy's own (``numpy``, ``numpy:cpu``)."""
    return backend.split(":", 1)[0] == "numpy"


def _library_dependent(function: str) -> bool:
    return function in LIBRARY_DEPENDENT or function.startswith("linalg.")


def _arrays(value: Any) -> list[Any]:
    several = isinstance(value, tuple) and not (len(value) == 2 and isinstance(value[1], str))
    return list(value) if several else [value]


Side = Literal["reference", "candidate"]


def recompute_side(bundle: Bundle, example: Example, side: Side, adapter: Any = None) -> str | None:
    """Why the stored output of ``side`` is not what its backend returns now (None: it is).

    ``adapter`` computes the side (default: NumPy, for a side the bundle says NumPy ran).
    """
    adapter = adapter or NumpyAdapter("cpu")
    function = bundle.function
    stored: Output = bundle.outputs[side]
    now: Outcome = call_on(
        adapter, call_for(function, example), host_inputs(example.args), dict(example.kwargs)
    )
    who = f"outputs.{side}: {adapter.spec} recomputed from the stored inputs"
    if stored.arrays is None:
        if now.ok:
            state = "missing" if stored.missing is not None else "raised"
            return f"{who} returns a result, but the bundle says the call {state}"
        if (stored.missing is None) != (now.missing is None):
            return f"{who} {'lacks it' if now.missing else 'raises'}, unlike the stored outcome"
        return None
    if not now.ok:
        return f"{who} {'lacks the function' if now.missing else 'raises'}: {now.missing or now.raised}"
    values = _arrays(now.value)
    if len(values) != len(stored.arrays):
        return f"{who} returns {len(values)} arrays, the bundle stores {len(stored.arrays)}"
    for index, (value, data) in enumerate(zip(values, stored.arrays, strict=True)):
        array, dtype = host_value(value)
        kept = decode_array(data, where=f"outputs.{side} {index}")
        if dtype != (data.stored_as or data.dtype) or tuple(array.shape) != tuple(kept.shape):
            return (
                f"{who}: output {index} is {dtype} {list(array.shape)}, the bundle stores "
                f"{data.stored_as or data.dtype} {list(kept.shape)}"
            )
        if np.asarray(array).tobytes() == kept.tobytes():
            continue
        if _library_dependent(function):
            verdict = compare_values(kept, array, function=function)
            if verdict.passed:
                continue  # another BLAS build, within the function's bound
        return f"{who}: output {index} differs from the stored bits"
    return None
