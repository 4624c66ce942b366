"""locate judges a call whose values the standard leaves unspecified (``empty``,
``empty_like``) by its shape and dtype alone: any values are right, a wrong shape or dtype
is not."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.localize import locate


class _Namespace:
    __name__ = "garbage_namespace"

    def __init__(self, replaced: dict[str, Any]) -> None:
        self._replaced = replaced
        self.linalg = cnp.linalg

    def __getattr__(self, name: str) -> Any:
        return self._replaced.get(name) or getattr(cnp, name)


class _Adapter(NumpyAdapter):
    """A NumPy candidate whose ``empty`` and ``empty_like`` are replaced."""

    name = "garbage"
    namespace_label = "garbage_namespace"  # another library than NumPy's: no self-test

    def __init__(self, label: str, replaced: dict[str, Any]) -> None:
        super().__init__(None)
        self.label = label
        self._namespace = _Namespace(replaced)

    @property
    def spec(self) -> str:
        return f"garbage[{self.label}]"

    def namespace(self) -> Any:
        return self._namespace


def _filled(value: float, grow: int = 0, dtype: str | None = None) -> dict[str, Any]:
    """``empty``/``empty_like`` that fill ``value`` (the standard allows any), ``grow``
    elements longer on the last axis and in ``dtype`` when given (which it does not)."""

    def shape_of(shape: Any) -> tuple[int, ...]:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return (*shape[:-1], shape[-1] + grow) if shape else shape

    def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
        return np.full(shape_of(shape), value, dtype=_dtype or dtype or np.float64)

    def empty_like(x: Any, *, dtype: Any = None, device: Any = None) -> Any:
        return np.full(shape_of(x.shape), value, dtype=_dtype or dtype or x.dtype)

    _dtype = dtype
    return {"empty": empty, "empty_like": empty_like}


def _program(function: str) -> Any:
    def program(xp: Any, x: Any) -> Any:
        e = xp.empty(x.shape, dtype=x.dtype) if function == "empty" else xp.empty_like(x)
        return x + xp.zeros_like(e)  # the result never reads e's values

    return program


CASES = [
    (function, value, dtype, shape)
    for function in ("empty", "empty_like")
    for value in (np.nan, 7.0, -np.inf, 1e30)
    for dtype in ("float32", "float64")
    for shape in ((5,), (3, 4), (2, 1, 3))
]


@pytest.mark.parametrize(("function", "value", "dtype", "shape"), CASES)
def test_any_values_of_an_unspecified_output_are_right(
    function: str, value: float, dtype: str, shape: tuple[int, ...]
) -> None:
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    result = locate(_program(function), x, candidate=_Adapter(str(value), _filled(value)))
    assert result.passed, str(result)
    (call,) = [c for c in result.calls if c.function == function]
    assert call.status == "ok", result.table()
    assert call.local.passed
    assert call.bound == "shape, dtype"


@pytest.mark.parametrize("function", ["empty", "empty_like"])
def test_a_wrong_shape_of_an_unspecified_output_is_wrong(function: str) -> None:
    x = np.ones((3, 4), np.float32)
    result = locate(_program(function), x, candidate=_Adapter("grown", _filled(0.0, grow=1)))
    first = result.first_wrong
    assert first is not None, result.table()
    assert first.function == function
    assert "shape (3, 5), but the reference's is (3, 4)" in (first.local.reason or "")


@pytest.mark.parametrize("function", ["empty", "empty_like"])
def test_a_wrong_dtype_of_an_unspecified_output_is_wrong(function: str) -> None:
    x = np.ones((3, 4), np.float32)
    result = locate(
        _program(function), x, candidate=_Adapter("wide", _filled(0.0, dtype="float64"))
    )
    wrong = [c for c in result.calls if c.function == function]
    assert wrong, result.table()
    assert wrong[0].status == "wrong", result.table()
    assert "result dtype float64" in (wrong[0].local.reason or "")
