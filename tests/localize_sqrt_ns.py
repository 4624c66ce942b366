"""An Array API namespace (a module, as a repro script imports it) whose ``sqrt`` is one ULP
high on arguments above 4: an elementwise bug that shows on some elements only."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as _cnp
import numpy as np
from array_api_compat.numpy import *  # noqa: F403  (the rest of the namespace as it is)


def sqrt(x: Any, /) -> Any:
    root = np.asarray(_cnp.sqrt(x))
    high = np.nextafter(root, np.asarray(np.inf, root.dtype))
    return np.where(np.asarray(x) > 4, high, root)
