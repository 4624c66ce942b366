"""Programs written against the Array API, each with its planted bug's call marked."""

from __future__ import annotations

from typing import Any


def softmax_naive(xp: Any, logits: Any) -> Any:
    """Softmax without the max subtraction: fine in float32 up to logits of 88."""
    e = xp.exp(logits)  # planted: exp-f16
    total = xp.sum(e, axis=-1, keepdims=True)
    return e / total


def rms_norm_then_scale(xp: Any, x: Any, w: Any) -> Any:
    squares = x * x
    mean = xp.mean(squares, axis=-1, keepdims=True)
    root = xp.sqrt(mean + 1e-6)  # planted: sqrt-ulp
    inverse = 1.0 / root
    y = x * inverse
    return xp.matmul(y * w, xp.ones((x.shape[-1], 3), dtype=x.dtype)) * 1000.0


def two_layer_mlp(xp: Any, x: Any, w1: Any, w2: Any) -> Any:
    h = xp.matmul(x, w1)  # planted: matmul-square-transpose
    h = xp.maximum(h, 0.0)
    return xp.matmul(h, w2)


def layer_norm(xp: Any, x: Any) -> Any:
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.var(x, axis=-1, keepdims=True)  # planted: var-axis
    centred = x - mean
    return centred / xp.sqrt(var + 1e-5)


def scaled_energy(xp: Any, x: Any, y: Any) -> Any:
    a = xp.add(x, y)
    b = xp.multiply(a, y)  # planted: multiply-f32
    c = xp.subtract(b, x)
    return xp.sum(c * c)


def branching(threshold: float) -> Any:
    """A program that takes another path when a reduced value passes ``threshold``."""

    def program(xp: Any, x: Any) -> Any:
        root = xp.sqrt(x)
        if float(xp.sum(root)) > threshold:
            return xp.log(root)
        return xp.exp(root)

    return program


def twenty_calls_with_exp(xp: Any, x: Any) -> Any:
    """Twenty float64 calls, one exp in the middle (MLX computes float64 exp at float32)."""
    y = x * 0.5
    y = y + 1.0
    y = xp.abs(y)
    y = xp.sqrt(y)
    y = y - 0.25
    y = xp.square(y)
    y = y * 0.75
    y = xp.maximum(y, 0.125)
    y = y + 2.0
    y = xp.exp(y)  # the real divergence
    y = y / 3.0
    y = xp.log1p(y)
    y = y * y
    y = xp.negative(y)
    y = xp.abs(y)
    y = y + 0.5
    y = xp.floor(y * 8.0)
    y = y / 8.0
    return xp.sum(y, axis=-1)
