"""compare (both modes) and the API search compute inside the adapter's ``computing()`` scope.

A library with a process-wide default device (MLX) binds its work to the named device only
inside that scope, so every call, transfer and read must happen within it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.adapters import Adapter, resolve
from diffcheck.search import search_api
from diffcheck.testing._perturb import WrappedAdapter

pytest.importorskip("array_api_strict", reason="the scope tests run on array-api-strict")


class ScopedAdapter(WrappedAdapter):
    """array-api-strict whose ``computing()`` scope is observable: it records work outside it."""

    def __init__(self, inner: Adapter) -> None:
        super().__init__(inner)
        self.inside = False
        self.entered = 0
        self.outside: list[str] = []

    @contextmanager
    def _scope(self) -> Iterator[None]:
        self.entered += 1
        self.inside = True
        try:
            yield
        finally:
            self.inside = False

    def computing(self) -> Any:
        return self._scope()

    def note(self, what: str) -> None:
        if not self.inside:
            self.outside.append(what)

    def to_device(self, host: Any) -> Any:
        self.note("to_device")
        return self.inner.to_device(host)

    def synchronize(self, array: Any) -> None:
        self.note("synchronize")
        self.inner.synchronize(array)

    def host_float32(self, array: Any) -> Any:
        self.note("host_float32")
        return self.inner.host_float32(array)


@pytest.fixture
def scoped() -> ScopedAdapter:
    return ScopedAdapter(resolve("array_api_strict"))


X = np.linspace(-1.0, 1.0, 16, dtype=np.float32)


def test_nmse_mode_calls_transfers_and_reads_inside_the_scope(scoped: ScopedAdapter) -> None:
    seen: list[bool] = []

    def record(xp: Any, x: Any) -> Any:
        if "array_api_strict" in xp.__name__:
            seen.append(scoped.inside)
        return x * 2

    assert diffcheck.compare(record, X, candidate=scoped)
    assert seen == [True]
    assert scoped.entered >= 1
    assert scoped.outside == []


def test_values_mode_runs_inside_the_scope(scoped: ScopedAdapter) -> None:
    seen: list[bool] = []

    def record(xp: Any, x: Any) -> Any:
        if "array_api_strict" in xp.__name__:
            seen.append(scoped.inside)
        return x + 1

    assert diffcheck.compare(record, X, candidate=scoped, mode="values", function="add")
    assert seen == [True]
    assert scoped.outside == []


def test_the_api_search_runs_inside_the_scope(scoped: ScopedAdapter) -> None:
    result = search_api(scoped, functions=["abs"], examples=5, budget_s=None)
    assert scoped.entered >= 5
    assert scoped.outside == []
    assert [run.function for run in result.document.functions_tried] == ["abs"]


def test_a_scope_that_is_skipped_is_seen(scoped: ScopedAdapter) -> None:
    """The recording adapter itself can fail: work outside the scope is recorded."""
    scoped.to_device(X)
    assert scoped.outside == ["to_device"]


# -- MLX: the scope is the named device's stream -------------------------------------------


def _mlx_recording(mx: Any, seen: list[Any]) -> Any:
    def record(xp: Any, x: Any) -> Any:
        if xp is mx:
            seen.append(mx.default_device())
        return x * 2

    return record


def test_mlx_cpu_computes_on_the_cpu() -> None:
    mx = pytest.importorskip("mlx.core")
    adapter = resolve("mlx:cpu")
    if not adapter.probe().is_available:
        pytest.skip("mlx:cpu is unavailable here")
    seen: list[Any] = []
    assert diffcheck.compare(_mlx_recording(mx, seen), X, candidate="mlx:cpu")
    assert seen == [mx.Device(mx.cpu)]


def test_mlx_cpu_computes_on_the_cpu_when_the_default_device_is_the_gpu() -> None:
    mx = pytest.importorskip("mlx.core")
    if not mx.is_available(mx.gpu):
        pytest.skip("no MLX GPU here: the CPU is the only device, nothing to tell apart")
    before = mx.default_device()
    mx.set_default_device(mx.gpu)
    try:
        seen: list[Any] = []
        assert diffcheck.compare(_mlx_recording(mx, seen), X, candidate="mlx:cpu")
        values: list[Any] = []
        diffcheck.compare(_mlx_recording(mx, values), X, candidate="mlx:cpu", mode="values")
    finally:
        mx.set_default_device(before)
    assert seen == [mx.Device(mx.cpu)]
    assert values == [mx.Device(mx.cpu)]
