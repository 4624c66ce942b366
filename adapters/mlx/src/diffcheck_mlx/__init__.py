"""The MLX backend adapter for diffcheck: ``mlx``, ``mlx:cpu`` and ``mlx:gpu``.

Registered through the ``diffcheck.adapters`` entry point. Importing this package does not
import MLX; the adapter imports ``mlx.core`` when it is probed or run.
"""

from __future__ import annotations

from ._adapter import TF32_DIVERGENCE, MlxAdapter, tf32_enabled
from ._probe import installed_builds, probe_mlx
from ._streams import MlxBuffer, MlxCommandContext, MlxCommandDevice, host_float32

__all__ = [
    "TF32_DIVERGENCE",
    "MlxAdapter",
    "MlxBuffer",
    "MlxCommandContext",
    "MlxCommandDevice",
    "host_float32",
    "installed_builds",
    "probe_mlx",
    "tf32_enabled",
]
