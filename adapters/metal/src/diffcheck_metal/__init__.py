"""diffcheck's Metal adapter: MSL kernels, command buffers and blits through PyObjC.

Registered as the ``metal`` backend (entry point group ``diffcheck.adapters``). Importing
this package imports neither PyObjC nor Metal; the first probe on macOS does.

What could not be run where this was written (Linux, no GPU, no PyObjC): the PyObjC calls
in ``_runtime`` and ``_commands`` and the MSL sources in ``kernels/``. They are exercised on
Linux only against a NumPy stand-in of the bindings (tests/fake_metal.py). The launch plans
they use (``diffcheck.gpu_plan``) and the phase order (``diffcheck.programs``) are the ones the
wgpu adapter runs on real hardware.
"""

from __future__ import annotations

from ._adapter import PYOBJC_INSTALL, MetalAdapter
from ._commands import MetalCommandContext, MetalCommandDevice
from ._runtime import (
    MTL_COMMAND_BUFFER_STATUS_COMPLETED,
    MetalExecutionError,
    MetalRuntime,
    NoDeviceError,
    check_completed,
    open_runtime,
)

__all__ = [
    "MTL_COMMAND_BUFFER_STATUS_COMPLETED",
    "PYOBJC_INSTALL",
    "MetalAdapter",
    "MetalCommandContext",
    "MetalCommandDevice",
    "MetalExecutionError",
    "MetalRuntime",
    "NoDeviceError",
    "check_completed",
    "open_runtime",
]
