"""Registration through the entry point, and no MLX import until the adapter is probed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from diffcheck.adapters import Adapter, known_backends, resolve
from diffcheck.errors import UnknownBackendError

from diffcheck_mlx import MlxAdapter, host_float32


def test_entry_point_resolves_every_device() -> None:
    assert "mlx" in known_backends()
    for spec, device in (("mlx", None), ("mlx:cpu", "cpu"), ("mlx:gpu", "gpu")):
        adapter = resolve(spec)
        assert isinstance(adapter, MlxAdapter)
        assert adapter.device == device
        assert adapter.spec == spec


def test_unknown_device_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownBackendError, match="mlx:cpu, mlx:gpu"):
        resolve("mlx:tpu")


def test_importing_diffcheck_and_listing_backends_imports_no_mlx() -> None:
    code = textwrap.dedent(
        """
        import sys
        import diffcheck, diffcheck.adapters
        names = diffcheck.adapters.known_backends()
        assert "mlx" in names, names
        assert "mlx" not in sys.modules, "listing backends imported mlx"
        adapter = diffcheck.adapters.resolve("mlx:gpu")
        assert "mlx" not in sys.modules, "resolving the adapter imported mlx"
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )

    assert result.returncode == 0, result.stderr


def test_host_transfer_shares_mlx_memory_and_keeps_exact_bits(mlx_cpu: Adapter) -> None:
    mx = pytest.importorskip("mlx.core")
    # Every bfloat16 value is a float32 whose low 16 bits are zero: widening must keep them.
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2**16, size=4096, dtype=np.uint32) << 16
    values = bits.view(np.float32)
    values = values[np.isfinite(values)]
    as_bf16 = mx.array(values).astype(mx.bfloat16)

    widened = host_float32(as_bf16, mx.Device(mx.cpu))
    host = mlx_cpu.to_host(mx.array(values))

    np.testing.assert_array_equal(widened.view(np.uint32), values.view(np.uint32))
    # A copy would own its data; the DLPack view borrows MLX's buffer.
    assert not host.flags.owndata
    np.testing.assert_array_equal(host, values)
