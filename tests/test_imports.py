"""Importing diffcheck and listing backends imports no optional backend."""

from __future__ import annotations

import subprocess
import sys

OPTIONAL = ("mlx", "wgpu", "torch", "jax", "cupy", "Metal", "objc", "dask", "array_api_strict")


def test_import_and_listing_import_no_backend() -> None:
    code = (
        "import sys, diffcheck, diffcheck.adapters, diffcheck.runner, diffcheck.cli.commands\n"
        "diffcheck.adapters.known_backends()\n"
        "for name in diffcheck.adapters.known_backends(): diffcheck.adapters.resolve(name)\n"
        # What a sweep parent does with each candidate: read and match its known divergences.
        "names = ['mlx', 'mlx:gpu'] if 'mlx' in diffcheck.adapters.known_backends() else []\n"
        "for a in map(diffcheck.adapters.resolve, ['numpy', *names]):\n"
        "    [d.matches(a.device, 'gemm', 'f32') for d in a.known_divergences()]\n"
        f"loaded = [m for m in {OPTIONAL!r} if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
