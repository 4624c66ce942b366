"""``compare(fn, ...)`` knows the precision: a function computed lower on the candidate only
fails an f32 compare with the twin named; honest libraries pass at their precision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.adapters import resolve

RNG = np.random.default_rng(20261207)
X = RNG.standard_normal((32, 48)).astype(np.float32)
W1 = (RNG.standard_normal((48, 64)) / 7).astype(np.float32)
W2 = (RNG.standard_normal((64, 10)) / 8).astype(np.float32)


def _library(xp: Any) -> str:
    return str(getattr(xp, "__name__", type(xp).__module__))


def mlp(xp: Any, x: Any, w1: Any, w2: Any) -> Any:
    h = xp.matmul(x, w1)
    h = h * (1.0 / (1.0 + xp.exp(-h)))
    logits = xp.matmul(h, w2)
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))


def mlp_half_first_matmul_on_candidate(xp: Any, x: Any, w1: Any, w2: Any) -> Any:
    """The MLP, except that a candidate (not NumPy) computes its first matmul in float16."""
    if "numpy" in _library(xp):
        return mlp(xp, x, w1, w2)
    low = xp.matmul(xp.astype(x, xp.float16), xp.astype(w1, xp.float16))
    h = xp.astype(low, x.dtype)
    h = h * (1.0 / (1.0 + xp.exp(-h)))
    logits = xp.matmul(h, w2)
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))


def _usable(backend: str) -> None:
    try:
        probe = resolve(backend).probe()
    except Exception as error:
        pytest.skip(f"{backend} is not installed: {error}")
    if probe.status != "available":
        pytest.skip(f"{backend}: {probe.reason}")


@pytest.mark.parametrize("backend", ["torch:cpu", "mlx:cpu"])
def test_an_mlp_with_a_half_precision_matmul_on_the_candidate_fails_at_f32(backend: str) -> None:
    _usable(backend)
    verdict = diffcheck.compare(mlp_half_first_matmul_on_candidate, X, W1, W2, candidate=backend)
    assert not verdict
    assert verdict.floor is not None
    assert not verdict.floor.passed
    assert "precision floor: " in (verdict.reason or "")
    found = verdict.floor.match
    assert found is not None, verdict.reason
    assert "float16" in found[0].name or "tf32" in found[0].name, verdict.reason


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "mlp": lambda xp, x: mlp(xp, x, xp.asarray(W1, dtype=x.dtype), xp.asarray(W2, dtype=x.dtype)),
    "softmax": lambda xp, x: (
        xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        / xp.sum(xp.exp(x - xp.max(x, axis=-1, keepdims=True)), axis=-1, keepdims=True)
    ),
    "layer-norm": lambda xp, x: (
        (x - xp.mean(x, axis=-1, keepdims=True)) / xp.sqrt(xp.var(x, axis=-1, keepdims=True) + 1e-5)
    ),
    "gram": lambda xp, x: xp.matmul(x, xp.matrix_transpose(x)),
    "sum": lambda xp, x: xp.sum(x * x),
    "cumulative-sum": lambda xp, x: xp.cumulative_sum(x, axis=1),
    "tanh-sin": lambda xp, x: xp.tanh(x) + xp.sin(3.0 * x),
}


@pytest.mark.parametrize("backend", ["array_api_strict", "torch:cpu", "mlx:cpu"])
def test_honest_libraries_pass_every_function_at_every_precision_they_store(backend: str) -> None:
    _usable(backend)
    precisions = resolve(backend).capabilities().precisions
    for precision in precisions:
        for name, fn in FUNCTIONS.items():
            verdict = diffcheck.compare(fn, X, candidate=backend, precision=precision, max_nmse=1.0)
            assert verdict.floor is not None, (name, precision)
            assert verdict.floor.passed, (name, precision, verdict.floor.summary())


def test_a_function_numpy_cannot_run_in_float64_says_it_has_no_floor() -> None:
    from diffcheck.differ import diff
    from diffcheck.floor import NoFloor, bind_floor, function_floor

    x = np.linspace(-1, 1, 64, dtype=np.float32)

    def bits(xp: Any, x: Any) -> Any:  # reads float32 bits: float64 has twice the words
        return xp.astype(xp.asarray(np.asarray(x).view(np.int32) & 0xFF), xp.float32)

    candidate = bits(np, x).astype(np.float32)
    floor = function_floor(bits, [x], "f32", candidate)
    assert isinstance(floor, NoFloor)
    assert "128 elements" in floor.reason
    verdict = bind_floor(diff(candidate, candidate, max_nmse=1e-7), floor)
    assert verdict.floor is None
    assert "precision floor: not measured (its float64 run gave 128" in str(verdict)

    def raises(xp: Any, x: Any) -> Any:
        if x.dtype != np.float32:
            raise TypeError("float32 only")
        return x

    refused = function_floor(raises, [x], "f32", x)
    assert isinstance(refused, NoFloor)
    assert refused.reason.startswith("the function does not run on NumPy in float64: TypeError")


def mlp_with_operators(xp: Any, x: Any, w1: Any, w2: Any) -> Any:
    """The MLP written with ``@``, as most code is; a candidate computes every product in
    float16 (a half-precision GEMM)."""

    def product(a: Any, b: Any) -> Any:
        if "numpy" in _library(xp):
            return a @ b
        return xp.astype(xp.astype(a, xp.float16) @ xp.astype(b, xp.float16), a.dtype)

    h = product(x, w1)
    h = h * (1.0 / (1.0 + xp.exp(-h)))
    logits = product(h, w2)
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))


def test_a_half_precision_product_written_with_the_operator_is_named() -> None:
    _usable("torch:cpu")
    verdict = diffcheck.compare(mlp_with_operators, X, W1, W2, candidate="torch:cpu")
    assert not verdict
    assert verdict.floor is not None
    found = verdict.floor.match
    assert found is not None, verdict.reason
    # Before the inputs saw `@`, no matmul twin rounded these products and none matched.
    assert found[0].name == "float16 matmuls", verdict.reason
    assert found[1] == "matches it within the floor", verdict.reason


def test_the_operator_twin_rounds_every_product_of_products() -> None:
    from diffcheck.floor.function import _operands
    from diffcheck.floor.rounding import round_to
    from diffcheck.floor.twins import twin_named

    a, b = X[:4], W1
    (wrapped_a, wrapped_b) = _operands(twin_named("tf32 operands"), [a, b], None)
    first = wrapped_a @ wrapped_b
    expected = round_to(a, "tf32").astype(np.float32) @ round_to(b, "tf32").astype(np.float32)
    assert np.array_equal(np.asarray(first), expected)
    second = (first * 2.0) @ np.asarray(W2)  # a ufunc result keeps rounding its products
    rounded = round_to(np.asarray(first) * 2.0, "tf32").astype(np.float32)
    assert np.array_equal(np.asarray(second), rounded @ round_to(W2, "tf32").astype(np.float32))
    # A twin that leaves matmul operands alone hands the arrays over as they are.
    assert _operands(twin_named("float16 storage"), [a], None)[0] is a


def test_a_half_precision_first_matmul_alone_is_named_at_that_call() -> None:
    _usable("torch:cpu")
    verdict = diffcheck.compare(
        mlp_half_first_matmul_on_candidate, X, W1, W2, candidate="torch:cpu"
    )
    found = verdict.floor.match if verdict.floor is not None else None
    assert found is not None, verdict.reason
    assert found[0].label == "float16 matmuls at matmul 1 of 2 only", verdict.reason
    assert found[1] == "matches it within the floor", verdict.reason
    assert (
        "float16 matmuls (float16 operands and product, float32 accumulation) at matmul 1 of 2 only"
        in (verdict.reason or "")
    )


def operator_then_namespace(xp: Any, x: Any, w1: Any, w2: Any) -> Any:
    """``@`` first, then ``xp.matmul``; a candidate reads the second call's operands at a
    10-bit significand (through float16, which rounds values of this size as TF32 does)."""
    h = x @ w1
    h = h * (1.0 / (1.0 + xp.exp(-h)))
    if "numpy" in _library(xp):
        return xp.matmul(h, w2)

    def ten_bits(a: Any) -> Any:
        return xp.astype(xp.astype(a, xp.float16), a.dtype)

    return xp.matmul(ten_bits(h), ten_bits(w2))


def test_operator_and_namespace_matmuls_are_counted_in_one_order() -> None:
    _usable("torch:cpu")
    verdict = diffcheck.compare(operator_then_namespace, X, W1, W2, candidate="torch:cpu")
    found = verdict.floor.match if verdict.floor is not None else None
    assert found is not None, verdict.reason
    assert found[0].matmul == 2, verdict.reason
    assert found[0].matmuls == 2, verdict.reason
    assert found[1] == "matches it within the floor", verdict.reason


def test_a_twins_in_order_run_reads_vecdot_operands_as_its_first_run_does() -> None:
    """The in-order variant of an operand twin sums vecdot's products itself: it must still
    round (and count) the operands, or it is not the twin and its spread is the twin's whole
    error (which lets the twin model nearly anything of its size)."""
    from diffcheck.floor.function import _twin
    from diffcheck.floor.twins import twin_named

    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 512)).astype(np.float32)
    b = rng.standard_normal((64, 512)).astype(np.float32)

    def dots(xp: Any, x: Any, y: Any) -> Any:
        return xp.vecdot(x, y)

    truth = (a.astype(np.float64) * b).sum(axis=-1)
    first, wide, in_order = _twin(dots, [a, b], "f32", twin_named("tf32 operands"))
    error = float(np.sum((first - truth) ** 2))
    assert error > 0.0
    for other in (wide, in_order):
        assert float(np.sum((other - first) ** 2)) < 1e-3 * error
    # The one-call twin of the second of two vecdots reads the second call alone there too.
    (single,) = [t for t in twin_named("tf32 operands").at_each_matmul(2) if t.matmul == 2]

    def two(xp: Any, x: Any, y: Any) -> Any:
        return xp.concat([xp.vecdot(x, y), xp.vecdot(y, x)])

    runs = _twin(two, [a, b], "f32", single)
    for run in runs:
        np.testing.assert_allclose(run[:64], truth, rtol=1e-4)  # the first call not rounded
    rounded_second = np.asarray(runs[0][64:])
    assert float(np.sum((runs[2][64:] - rounded_second) ** 2)) < 1e-3 * float(
        np.sum((rounded_second - truth) ** 2)
    )
