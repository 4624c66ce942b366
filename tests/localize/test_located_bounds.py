"""locate's bounds: published accuracy for math functions, prefix bounds for scans, and the
absolute allowance of sums whose terms cancel."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.localize import locate
from diffcheck.localize._accuracy import CUDA_ULPS, GLIBC_ULPS, published_bound

RNG = np.random.default_rng(11)


class _Namespace:
    __name__ = "shifted_namespace"

    def __init__(self, replaced: dict[str, Any]) -> None:
        self._replaced = replaced
        self.linalg = cnp.linalg

    def __getattr__(self, name: str) -> Any:
        return self._replaced.get(name) or getattr(cnp, name)


class _Adapter(NumpyAdapter):
    name = "shifted"
    namespace_label = "shifted_namespace"

    def __init__(self, label: str, replaced: dict[str, Any]) -> None:
        super().__init__(None)
        self.label = label
        self._namespace = _Namespace(replaced)

    @property
    def spec(self) -> str:
        return f"shifted[{self.label}]"

    def namespace(self) -> Any:
        return self._namespace


def _ulps_away(function: Any, steps: int) -> Any:
    """``function``'s result moved ``steps`` ULPs up, every element."""

    def moved(*args: Any, **kwargs: Any) -> Any:
        out = np.asarray(function(*args, **kwargs))
        for _ in range(steps):
            out = np.nextafter(out, np.inf).astype(out.dtype)
        return out

    return moved


_TWO = {"atan2", "pow", "hypot"}


def _program(name: str) -> Any:
    def program(xp: Any, x: Any, y: Any) -> Any:
        if name in _TWO:
            return getattr(xp, name)(x, y) + 0.0
        return getattr(xp, name)(y if name == "acosh" else x) + 0.0

    return program


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CUDA_ULPS))
def test_a_math_function_may_differ_by_its_published_allowance_and_no_more(
    name: str, dtype: str
) -> None:
    bound = published_bound(name, dtype)
    assert bound is not None
    assert bound.ulps is not None
    column = 0 if dtype == "float32" else 1
    assert bound.ulps == max(2, CUDA_ULPS[name][column] + GLIBC_ULPS[name][column])
    x = RNG.uniform(0.1, 0.9, 64).astype(dtype)
    y = x + np.asarray(1.25, dtype)
    function = getattr(cnp, name)
    within = locate(
        _program(name),
        x,
        y,
        candidate=_Adapter(name, {name: _ulps_away(function, int(bound.ulps))}),
    )
    assert within.passed, within.table()
    beyond = locate(
        _program(name),
        x,
        y,
        candidate=_Adapter(name, {name: _ulps_away(function, int(bound.ulps) + 1)}),
    )
    assert [c.function for c in beyond.calls if c.status == "wrong"] == [name], beyond.table()
    reason = str(beyond.first_wrong.local.reason)  # type: ignore[union-attr]
    assert "CUDA Math API" in reason, reason
    assert "glibc libm-test-ulps" in reason, reason


def test_cuda_exp_at_three_ulp_from_numpy_is_within_its_published_accuracy() -> None:
    # The case: expf is documented within 2 ULP (CUDA) and 1 ULP (glibc).
    x = RNG.uniform(-20, 0, 256).astype(np.float32)
    shifted = _Adapter("exp", {"exp": _ulps_away(cnp.exp, 3)})
    result = locate(lambda xp, v: xp.exp(v) * 1.0, x, candidate=shifted)
    assert result.passed, result.table()
    assert result.calls[0].bound == "<= 3 ULP"


# Scans: the bound of element i grows with its prefix. ---------------------------------------


def _blocked_cumsum(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """A scan in blocks of 8 (as a parallel library does): other rounding, same sums."""
    data = np.asarray(x)
    axis = 0 if axis is None else axis
    moved = np.moveaxis(data, axis, -1)
    out = np.empty_like(moved)
    carry = np.zeros(moved.shape[:-1], moved.dtype)
    for start in range(0, moved.shape[-1], 8):
        block = np.cumsum(moved[..., start : start + 8], axis=-1, dtype=moved.dtype)
        out[..., start : start + 8] = block + carry[..., None]
        carry = out[..., min(start + 8, moved.shape[-1]) - 1]
    out = np.moveaxis(out, -1, axis)
    if include_initial:
        zeros = np.zeros_like(np.take(out, [0], axis=axis))
        out = np.concatenate([zeros, out], axis=axis)
    return out


def _one_wrong_cumsum(x: Any, /, *, axis: Any = None, **kwargs: Any) -> Any:
    out = np.array(cnp.cumulative_sum(x, axis=axis, **kwargs))
    out.reshape(-1)[5] *= 1.001  # one prefix off by 0.1%
    return out


def _scan(xp: Any, x: Any) -> Any:
    return xp.cumulative_sum(x * 1.0, axis=-1)


@pytest.mark.parametrize("shape", [(1000,), (4, 300), (3, 2, 64)])
def test_a_scan_in_another_order_is_within_its_prefix_bound(shape: tuple[int, ...]) -> None:
    x = RNG.standard_normal(shape).astype(np.float32) * 100  # terms of both signs: cancellation
    result = locate(_scan, x, candidate=_Adapter("blocked", {"cumulative_sum": _blocked_cumsum}))
    assert result.passed, result.table()
    assert result.calls[-1].bound == "prefix bound"
    differs = result.calls[-1].local.nmse
    assert differs > 0  # the blocked order rounds otherwise: the bound, not equality, passes it


def test_a_scan_with_one_wrong_prefix_is_wrong() -> None:
    x = RNG.standard_normal(1000).astype(np.float32) + 3
    result = locate(_scan, x, candidate=_Adapter("one", {"cumulative_sum": _one_wrong_cumsum}))
    assert [c.function for c in result.calls if c.status == "wrong"] == ["cumulative_sum"]
    assert "prefix bound" in str(result.first_wrong.local.reason)  # type: ignore[union-attr]


# Sums whose terms cancel: an absolute allowance from the terms' magnitudes. ------------------


def _reversed_sum(x: Any, /, *, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    data = np.asarray(x)
    flipped = np.flip(data, axis=axis) if axis is not None else data.reshape(-1)[::-1]
    total = np.zeros((), data.dtype) if axis is None else None
    if axis is None:
        for value in flipped:  # one term at a time, in the other order
            total = (total + value).astype(data.dtype)
        return np.asarray(total)
    return np.asarray(np.add.reduce(flipped, axis=axis, keepdims=keepdims, dtype=data.dtype))


def test_a_sum_whose_terms_cancel_is_judged_by_their_magnitude() -> None:
    x = RNG.standard_normal(512).astype(np.float32)
    x = np.concatenate([x, -x[::-1] * np.float32(1.0000001)])  # a small total of large terms
    result = locate(
        lambda xp, v: xp.sum(v * 1.0), x, candidate=_Adapter("rev", {"sum": _reversed_sum})
    )
    assert result.passed, result.table()
    assert result.calls[-1].bound.endswith("or abs")
