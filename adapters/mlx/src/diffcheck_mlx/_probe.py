"""Whether MLX can run here, and if not, what to install or fix.

MLX ships its Python bindings (``mlx``) apart from its compiled library: ``mlx-metal`` on
macOS, and on Linux one of ``mlx-cpu``, ``mlx-cuda-12`` or ``mlx-cuda-13``. Most failures are
the wrong build being installed, so the reasons name the build found and the one to install.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING

from diffcheck.adapters import Probe, installed_versions
from diffcheck.install import FIRST_PARTY_ADAPTERS, plugin_install

if TYPE_CHECKING:
    import mlx.core as mx

__all__ = ["MLX_BUILDS", "installed_builds", "probe_mlx"]

#: The distributions that carry MLX's compiled library, by the backend they build.
MLX_BUILDS: dict[str, str] = {
    "mlx-metal": "Metal",
    "mlx-cpu": "CPU",
    "mlx-cuda-13": "CUDA 13",
    "mlx-cuda-12": "CUDA 12",
    # mlx 0.29/0.30.0 named its CUDA 12 build plainly.
    "mlx-cuda": "CUDA 12",
}

_INSTALL = f"install it with the adapter: {FIRST_PARTY_ADAPTERS['mlx'].install}"


def installed_builds() -> dict[str, str]:
    """The installed MLX library distributions and their versions (metadata only, read
    again only when the import path changes: every probe, so every ``compare``, asks)."""
    versions = installed_versions(*MLX_BUILDS)
    return {name: found for name, found in versions.items() if found is not None}


def _device_name(device: mx.Device) -> str:
    """The device's own name where MLX reports one (``mx.device_info`` from 0.30)."""
    import mlx.core as mx

    info_of = getattr(mx, "device_info", None)
    if info_of is None:
        return ""
    try:
        info = info_of(device)
    except (RuntimeError, ValueError, TypeError):
        return ""
    return str(info.get("device_name", "")) if isinstance(info, dict) else ""


def _describe(device: mx.Device, available: bool) -> str:
    import mlx.core as mx

    kind = "gpu" if device.type == mx.gpu else "cpu"
    if not available:
        return f"{kind}: none"
    name = _device_name(device)
    return f"{kind}: {name}" if name else kind


def _gpu_reason(builds: dict[str, str]) -> str:
    """Why ``mlx:gpu`` cannot run, for this platform and the MLX builds installed."""
    lead = "MLX has no GPU device here"
    if sys.platform == "darwin":
        return (
            f"{lead}: MLX uses Metal on macOS, which needs Apple silicon and macOS 14 or newer; "
            "run on such a Mac, or use mlx:cpu"
        )
    if not sys.platform.startswith("linux"):
        return f"{lead}: MLX has GPU builds for macOS (Metal) and Linux (CUDA) only; use mlx:cpu"
    cuda = [name for name in builds if MLX_BUILDS[name].startswith("CUDA")]
    if not cuda:
        found = ", ".join(builds) or "no MLX library"
        return (
            f"{lead}: MLX uses Metal on macOS and CUDA on Linux, and this environment has {found} "
            "without CUDA; on a Linux machine with an NVIDIA GPU install the mlx[cuda13] extra "
            f"instead (pip uninstall mlx-cpu, then {plugin_install('adapters/mlx', 'cuda')})"
        )
    reason = (
        f"{lead}: the CUDA build ({', '.join(cuda)}) is installed but found no usable NVIDIA GPU; "
        "check nvidia-smi, and that the driver supports the build's CUDA version "
        f"({plugin_install('adapters/mlx', 'cuda12')} for a CUDA 12 driver)"
    )
    if len(builds) > 1:
        # They share mlx/lib/libmlx.so: the one installed last is the one loaded.
        reason += (
            f"; several MLX builds are installed ({', '.join(builds)}) and overwrite each "
            "other's library: uninstall them all, then install one"
        )
    return reason


def probe_mlx(device: str | None) -> Probe:
    """Probe MLX for ``device`` (``"cpu"``, ``"gpu"`` or None for MLX's default device).

    Parameters
    ----------
    device
        The device suffix of the backend name.

    Returns
    -------
    Probe
        ``available`` with the MLX version and devices in ``detail``, or ``unavailable`` with
        a reason that says what to install or fix.
    """
    if importlib.util.find_spec("mlx") is None:
        return Probe.unavailable(f"mlx is not installed; {_INSTALL}")
    builds = installed_builds()
    try:
        import mlx.core as mx
    except ImportError as error:
        # On Linux the plain mlx wheel has no libmlx.so: the build comes from an extra.
        return Probe.unavailable(
            f"mlx is installed but mlx.core cannot load ({error}); the MLX library build is "
            f"missing or broken: {_INSTALL}",
            detail=", ".join(f"{n} {v}" for n, v in builds.items()),
        )
    has_gpu = bool(mx.is_available(mx.gpu))
    has_cpu = bool(mx.is_available(mx.cpu))
    devices = "; ".join(
        (_describe(mx.Device(mx.cpu), has_cpu), _describe(mx.Device(mx.gpu), has_gpu))
    )
    build = ", ".join(f"{n} {v}" for n, v in builds.items()) or "build unknown"
    version = getattr(mx, "__version__", "(version unknown)")
    detail = f"mlx {version} ({build}); devices: {devices}; default {mx.default_device()}"
    if device == "gpu" and not has_gpu:
        return Probe.unavailable(_gpu_reason(builds), detail)
    if device == "cpu" and not has_cpu:
        return Probe.unavailable(
            "this MLX build has no CPU backend; reinstall MLX with its CPU build "
            f"({plugin_install('adapters/mlx', 'cpu')} on Linux)",
            detail,
        )
    target = mx.default_device() if device is None else mx.Device(getattr(mx, device))
    try:
        # Availability is a flag; a driver or library mismatch only shows when work runs.
        with mx.stream(target):
            smoke = mx.array([1.0]) + 1.0
        mx.eval(smoke)
    except RuntimeError as error:
        return Probe.error(f"MLX could not run a one-element op on {target}: {error}", detail)
    return Probe.available(detail)
