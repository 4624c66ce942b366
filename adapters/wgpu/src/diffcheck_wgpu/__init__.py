"""diffcheck's WebGPU adapter: WGSL kernels and command encoders through wgpu-py.

Registered as the ``wgpu`` backend (entry point group ``diffcheck.adapters``). Importing
this package does not import wgpu; the first probe does.
"""

from __future__ import annotations

from ._adapter import WgpuAdapter
from ._commands import WgpuCommandContext, WgpuCommandDevice
from ._runtime import NoAdapterError, WgpuExecutionError, WgpuRuntime, open_runtime

__all__ = [
    "NoAdapterError",
    "WgpuAdapter",
    "WgpuCommandContext",
    "WgpuCommandDevice",
    "WgpuExecutionError",
    "WgpuRuntime",
    "open_runtime",
]
