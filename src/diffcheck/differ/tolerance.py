"""Strict reading of a tolerance given through the Python API (``max_nmse=``).

Python and NumPy convert almost anything to a float: ``float(True)`` is 1.0 and
``float("0.5")`` is 0.5, so a tolerance read with ``float()`` turns a slip into a loose
check. Only real numbers are tolerances here: ``int``, ``float`` and NumPy's integer and
floating scalars, never ``bool`` (``True`` is an ``int`` to Python) nor text. A NumPy scalar
becomes a plain Python float, so every later formatting of it (reasons, renderings) sees
the one type it was written for.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ConfigError

__all__ = ["positive_tolerance", "strict_tolerance"]


def strict_tolerance(value: Any, name: str = "max_nmse") -> float:
    """``value`` as a Python float when it is a real number; ConfigError otherwise.

    Parameters
    ----------
    value
        What the caller passed.
    name
        The argument's name, for the message.

    Returns
    -------
    float
        The same number as a Python float (a ``np.float32`` keeps its exact value).

    Raises
    ------
    ConfigError
        For ``bool``, text, ``None`` and any other non-number: one line saying what was
        given and what to pass instead.
    """
    is_bool = isinstance(value, bool | np.bool_)
    if is_bool or not isinstance(value, int | float | np.integer | np.floating):
        raise ConfigError(
            f"{name}={value!r} ({type(value).__name__}) is not a number; pass a float such "
            f"as {name}=1e-7"
        )
    return float(value)


def positive_tolerance(value: Any, name: str = "max_nmse") -> float:
    """:func:`strict_tolerance`, also refusing a tolerance that is not finite and > 0."""
    tolerance = strict_tolerance(value, name)
    if not math.isfinite(tolerance) or tolerance <= 0.0:
        raise ConfigError(f"{name}={value!r}, but it must be finite and strictly positive")
    return tolerance
