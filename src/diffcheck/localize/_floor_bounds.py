"""A matmul call's bound from its precision floor (docs/precision-floor.md).

The NMSE bucket of a storage precision (1e-7 at float32) sits seven decades above an honest
float32 matmul and within a factor of three of a TF32 or float16 one: judged by it, a
candidate whose matmuls round their operands to TF32 passed ``locate``. A contraction's
bound is instead a multiple of its own floor, as a check's is: the call runs once in
float64 (its truth) and once as an honest implementation at the output's precision
(float32 arithmetic, the output stored in its dtype), on the inputs the re-run received;
the floor is the larger of that twin's NMSE against the truth and correct rounding's, and
the bound is :data:`~diffcheck.floor.FLOOR_MULTIPLE` times it. An honest candidate lands
within a few times its floor; a TF32 one 10^5 times or more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np

from ..floor import FLOOR_MULTIPLE, ratio, round_to, rounding_error
from ..floor.sums import span_sums
from ..precision import PrecisionName
from ..values.model import Bound

__all__ = ["matmul_bounds", "with_floor"]

_PRECISION: Final[dict[str, PrecisionName]] = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
}


def _numpy() -> Any:
    import array_api_compat.numpy

    return array_api_compat.numpy


def _floor(
    name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any], precision: PrecisionName
) -> float | None:
    xp = _numpy()
    function = getattr(xp, name.removeprefix("linalg."))
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    if not arrays or any(isinstance(v, np.ndarray) for v in kwargs.values()):
        return None

    def run(dtype: Any) -> np.ndarray[Any, Any]:
        given = list(args)
        for i in arrays:
            given[i] = np.asarray(round_to(args[i], precision), dtype=dtype)
        with np.errstate(all="ignore"):
            return np.asarray(function(*given, **dict(kwargs)))

    truth = run(np.float64).reshape(-1)
    honest = round_to(run(np.float32), precision).reshape(-1)
    if truth.size == 0 or not np.isfinite(truth).all():
        return None
    spans = [(0, truth.size)]
    (energy,) = span_sums(truth, None, spans)
    (error,) = span_sums(np.ascontiguousarray(honest), truth, spans)
    rounding = rounding_error(energy, truth.size, precision)
    return max(ratio(error, energy, truth.size), ratio(rounding, energy, truth.size))


def matmul_bounds(
    name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> Callable[[str], Bound | None]:
    """The call's bound by output dtype: ``FLOOR_MULTIPLE`` times its floor at that
    precision; None (the storage precision's bucket stands) for float64 or inputs it
    cannot read. Worked out once per dtype."""
    found: dict[str, Bound | None] = {}

    def bound(dtype: str) -> Bound | None:
        if dtype not in found:
            found[dtype] = None
            precision = _PRECISION.get(dtype)
            if precision is not None:
                try:
                    floor = _floor(name, args, kwargs, precision)
                except Exception:  # inputs NumPy cannot take: the bucket stands
                    floor = None
                if floor is not None and floor > 0.0:
                    multiple = FLOOR_MULTIPLE[precision]
                    found[dtype] = Bound(
                        "nmse",
                        None,
                        multiple * floor,
                        f"{name}: {multiple:g}x this call's {dtype} precision floor "
                        f"{floor:.3g} (an honest {dtype} implementation's NMSE against "
                        "its float64 truth; docs/precision-floor.md)",
                    )
        return found[dtype]

    return bound


def with_floor(reason: str | None, contraction: bool, bound: Bound) -> str | None:
    """A contraction's failing reason with the floor its NMSE bound came from."""
    if reason is None or not contraction or bound.kind != "nmse":
        return reason
    return f"{reason} ({bound.provenance})"
