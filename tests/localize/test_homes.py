"""A window's device arrays come home joined per dtype (one by one on a CPU adapter), each
with its own values and shape."""

from __future__ import annotations

import numpy as np
import pytest

from diffcheck.adapters import resolve
from diffcheck.localize._homes import homes, on_host
from diffcheck.values.call import _home


@pytest.mark.parametrize("spec", ["mlx", "mlx:cpu"])  # joined; one by one (named for the CPU)
def test_joined_arrays_come_home_as_each_would_alone(spec: str) -> None:
    pytest.importorskip("mlx.core")
    mlx = resolve(spec)
    xp = mlx.namespace()
    rng = np.random.default_rng(3)
    hosts = [rng.standard_normal(shape).astype(np.float32) for shape in [(3, 4), (), (5,), (2, 0)]]
    with mlx.computing():
        arrays = [mlx.to_device(h) for h in hosts]
        arrays += [xp.astype(arrays[0] * 3, xp.bfloat16), xp.astype(arrays[2], xp.bfloat16)]
        arrays += [xp.astype(arrays[0], xp.int32), 2.5]
        arrays += [xp.permute_dims(arrays[0] * 2, (1, 0)), (arrays[2] + 1)[::2]]  # strided
        found = homes(mlx, arrays)
        alone = [_home(mlx, a) for a in arrays]
    assert len(found) == len(arrays)
    for got, want in zip(found, alone, strict=True):
        if isinstance(want, tuple):  # bfloat16, tagged
            assert got[1] == want[1] == "bfloat16"
            got, want = got[0], want[0]
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        assert np.array_equal(got, want)
    assert np.array_equal(found[0], hosts[0])
    assert found[1].shape == ()


@pytest.mark.parametrize(
    ("spec", "host"),
    [
        ("numpy", True),  # no device named, and no memory but the host's
        ("array_api_strict", True),
        ("torch:cpu", True),  # named for the CPU
        ("torch", False),  # no device named: torch's arrays may live on a GPU
    ],
)
def test_an_adapter_is_on_the_host_when_named_for_the_cpu_or_its_library_has_no_other_memory(
    spec: str, host: bool
) -> None:
    adapter = resolve(spec)
    if not adapter.probe().is_available:
        pytest.skip(f"{spec} does not run here")
    assert on_host(adapter) is host
