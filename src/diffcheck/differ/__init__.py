"""The differ: strict segment-wise NMSE between a trusted reference and a candidate's output.

Pure and backend-agnostic: arrays in, a :class:`Verdict` out; it never names a backend.
The modules, each with one job:

``verdict``
    The records handed back: :class:`Verdict`, :class:`Metrics`, :class:`Segment`,
    :class:`Around` and :class:`DeviceDiff`.
``judge``
    The reference tool's comparator on host arrays (:func:`compare_outputs`).
``segments``
    :func:`diff` over named segments, and the ``bind_*`` downgrades of a verdict.
``device`` and ``device_mlx``
    The same verdict measured where a GPU output lives (:func:`diff_on_device`).
``render``
    A verdict as text (``str(verdict)``) and HTML, and the one-line failure summary.
``tolerance``
    Strict reading of a tolerance given through the Python API.
``_measure`` and ``_kernel``
    The one-pass measurement over both arrays, in NumPy blocks or a numba kernel.
"""

from __future__ import annotations

from .device import CHUNK, diff_on_device, on_device
from .device_mlx import MLX_BLOCK
from .judge import around, compare_outputs, host_array, reference_problem, to_host
from .segments import bind_precision, bind_segments, bind_shape, diff, equal_segments
from .verdict import (
    ABSOLUTE_MSE_FLOOR,
    AROUND_RADIUS,
    Around,
    DeviceDiff,
    Metrics,
    Segment,
    SegmentVerdict,
    Verdict,
)

__all__ = [
    "ABSOLUTE_MSE_FLOOR",
    "AROUND_RADIUS",
    "CHUNK",
    "MLX_BLOCK",
    "Around",
    "DeviceDiff",
    "Metrics",
    "Segment",
    "SegmentVerdict",
    "Verdict",
    "around",
    "bind_precision",
    "bind_segments",
    "bind_shape",
    "compare_outputs",
    "diff",
    "diff_on_device",
    "equal_segments",
    "host_array",
    "on_device",
    "reference_problem",
    "to_host",
]
