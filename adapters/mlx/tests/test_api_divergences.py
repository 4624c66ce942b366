"""MLX's declared API divergences: valid data, declared for the CPU, and met by the search."""

from __future__ import annotations

import pytest
from diffcheck.adapters import resolve
from diffcheck.search.table import all_functions

from diffcheck_mlx import MlxAdapter


def test_the_cpu_declares_its_api_divergences_and_the_gpu_does_not() -> None:
    cpu = resolve("mlx:cpu").known_api_divergences()
    assert cpu
    assert resolve("mlx:gpu").known_api_divergences() == ()
    assert {d.function for d in cpu} <= set(all_functions())
    assert all(d.upstream == "none known" for d in cpu)  # no upstream report is known
    assert isinstance(resolve("mlx:cpu"), MlxAdapter)


def test_the_search_meets_what_mlx_declares() -> None:
    pytest.importorskip("mlx.core", reason="the search runs MLX")
    from diffcheck.search import search_api

    result = search_api(
        "mlx:cpu", functions=["argmax", "bitwise_left_shift", "hypot"], examples=25, seed=0
    )
    kinds = {(f.function, f.kind) for f in result.document.findings}
    assert {("argmax", "dtype"), ("bitwise_left_shift", "value"), ("hypot", "missing")} <= kinds
    assert all(f.known is not None for f in result.document.findings), [
        (f.function, f.kind, f.dtype) for f in result.document.findings if f.known is None
    ]
