"""Which precision twin a wrong matmul's error matches (docs/precision-floor.md).

The first wrong call, when it multiplies matrices, runs once more through the precision
floor's machinery on the reference's own inputs: its float64 truth, the honest twin of the
check's precision and the downgraded twins (TF32, float16 and bfloat16 operands or
products), against the candidate's re-run on those inputs. ``locate`` then says "consistent
with TF32 matmul operands" beside the call, as a failing ``compare`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from ..adapters import Adapter
from ..floor import Floor, function_floor
from ..precision import PrecisionName
from ._homes import homes
from ._judge import Pending
from ._proxy import is_array

__all__ = ["MATMULS", "call_twin"]

#: The recorded names of calls whose operands a tensor core reads (``a @ b`` is "matmul").
MATMULS: Final = frozenset({"matmul", "tensordot", "vecdot", "linalg.matmul"})


def call_twin(
    function: str, pending: Pending, candidate: Adapter, precision: PrecisionName
) -> str | None:
    """``consistent with ...: twin NMSE ...`` for the call, or None where no twin applies
    (not a matmul, a re-run that raised, inputs or outputs NumPy cannot take)."""
    if function not in MATMULS or isinstance(pending.local, str) or len(pending.local) != 1:
        return None
    args, kwargs = pending.inputs
    where = [i for i, a in enumerate(args) if is_array(a) or isinstance(a, np.ndarray)]
    if not where or any(is_array(v) for v in kwargs.values()):
        return None
    name = function.removeprefix("linalg.")

    def call(xp: Any, *arrays: Any) -> Any:
        full: list[Any] = list(args)
        for index, array in zip(where, arrays, strict=True):
            full[index] = array
        return getattr(xp, name)(*full, **kwargs)

    try:
        (output,) = homes(candidate, pending.local)
        hosts: Sequence[Any] = [np.asarray(args[i]) for i in where]
        floor = function_floor(call, hosts, precision, np.asarray(output), diagnose=True)
    except Exception:  # a diagnosis is a help, never a new way for locate to fail
        return None
    if not isinstance(floor, Floor) or floor.passed or floor.match is None:
        return None
    return floor.diagnosis()
