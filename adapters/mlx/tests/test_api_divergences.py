"""MLX's declared API divergences: valid data, declared for the CPU, and met by the search."""

from __future__ import annotations

import numpy as np
import pytest
from diffcheck.adapters import ApiCase, matching_api_divergence, resolve
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


def _known(function: str, kind: str, dtype: str, case: ApiCase) -> bool:
    from diffcheck_mlx._api_divergences import MLX_API_DIVERGENCES

    return (
        matching_api_divergence(MLX_API_DIVERGENCES, function, kind, dtype, case=case) is not None
    )


def test_a_wrong_shift_by_zero_is_not_mlx_s_shift_past_the_width() -> None:
    x, counts = np.array([5, 5], np.int32), np.array([0, 40], np.int32)
    right = np.array([5, 0], np.int32)
    past = ApiCase(args=(x, counts), reference=right, candidate=np.array([5, 5 << 8], np.int32))
    assert _known("bitwise_left_shift", "value", "int32", past)
    by_zero = ApiCase(args=(x, counts), reference=right, candidate=np.array([6, 0], np.int32))
    assert not _known("bitwise_left_shift", "value", "int32", by_zero)


def test_a_wrong_non_empty_all_is_not_mlx_s_empty_all() -> None:
    empty = ApiCase(args=(np.zeros(0, bool),), reference=np.True_, candidate=np.False_)
    assert _known("all", "value", "bool", empty)
    full = ApiCase(args=(np.ones(4, bool),), reference=np.True_, candidate=np.False_)
    assert not _known("all", "value", "bool", full)
    assert not _known("any", "value", "bool", full)


def test_every_value_declaration_names_an_element_class() -> None:
    from diffcheck_mlx._api_divergences import MLX_API_DIVERGENCES

    for declared in MLX_API_DIVERGENCES:
        if declared.kind in ("value", "nan", "inf", "signed-zero"):
            assert declared.covers.elementwise, declared
