"""An Array API namespace (a module, as a repro script imports it) with a fusion bug.

``matmul`` marks its result; ``exp`` of a marked array (or of a view of one) is computed in
float16, as a kernel that fuses the two would. ``exp`` of any other array is right, so the
bug shows only when the two calls run together: ``exp`` alone on stored inputs is right.
"""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as _cnp
import numpy as np
from array_api_compat.numpy import *  # noqa: F403  (the rest of the namespace as it is)


class _Fused(np.ndarray):
    """A matmul result, and every view of it."""


def matmul(x1: Any, x2: Any, /) -> Any:
    return np.asarray(_cnp.matmul(x1, x2)).view(_Fused)


def exp(x: Any, /) -> Any:
    if isinstance(x, _Fused):  # fused with the matmul before it: float16 inside
        with np.errstate(over="ignore"):
            return np.exp(np.asarray(x).astype(np.float16)).astype(x.dtype).view(np.ndarray)
    return _cnp.exp(x)
