"""Values moved a given number of representable steps, for the bound and ULP tests."""

from __future__ import annotations

import numpy as np

#: The floating storage formats the bounds are stated in.
FLOAT_DTYPES = ["float16", "float32", "float64", "bfloat16"]


def nudge(values: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``values`` with each element moved ``steps`` representable values (signed) in its dtype."""
    out = values.copy()
    for _ in range(int(np.max(np.abs(steps), initial=0))):
        move = steps != 0
        direction = np.where(steps > 0, np.inf, -np.inf).astype(out.dtype)
        out = np.where(move, np.nextafter(out, direction), out)
        steps = steps - np.sign(steps)
    return out
