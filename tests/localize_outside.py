"""Programs written as users of the Array API write them, not by this project's authors.

Each is ``fn(xp, *arrays)`` and uses what real numerical code uses: dtype objects of its own
namespace, whole-array reductions, Python scalars, integer wrap-around, slicing, ``concat``
and item assignment. :data:`PROGRAMS` gives each with its inputs (a seeded generator).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def kmeans_step(xp: Any, x: Any, centers: Any) -> Any:
    """One Lloyd step: nearest centre, one-hot counts, new centres, inertia."""
    k = centers.shape[0]
    d = xp.sum((x[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    labels = xp.argmin(d, axis=1)
    onehot = xp.astype(labels[:, None] == xp.arange(k)[None, :], x.dtype)
    counts = xp.sum(onehot, axis=0)
    new = (onehot.T @ x) / xp.maximum(counts, 1.0)[:, None]
    inertia = xp.sum(xp.min(d, axis=1))
    return new, inertia


def mlp_cross_entropy(xp: Any, x: Any, w1: Any, b1: Any, w2: Any, labels: Any) -> Any:
    """A two-layer MLP with ReLU and the softmax cross-entropy of integer labels."""
    h = xp.maximum(x @ w1 + b1, 0.0)
    logits = 0.5 * (h @ w2)
    m = xp.max(logits, axis=-1, keepdims=True)
    logp = logits - m - xp.log(xp.sum(xp.exp(logits - m), axis=-1, keepdims=True))
    eye = xp.eye(w2.shape[1], dtype=x.dtype)
    picked = xp.sum(logp * xp.take(eye, labels, axis=0), axis=-1)
    return -xp.mean(picked)


def layer_norm_attention(xp: Any, x: Any, wq: Any, wk: Any, wv: Any) -> Any:
    """Layer norm, then one head of causal attention."""
    mu = xp.mean(x, axis=-1, keepdims=True)
    var = xp.var(x, axis=-1, keepdims=True)
    h = (x - mu) / xp.sqrt(var + 1e-5)
    q, k, v = h @ wq, h @ wk, h @ wv
    scores = (q @ k.T) * (1.0 / float(q.shape[-1]) ** 0.5)
    n = x.shape[0]
    mask = xp.tril(xp.ones((n, n), dtype=xp.bool))
    scores = xp.where(mask, scores, -1e4)
    scores = scores - xp.max(scores, axis=-1, keepdims=True)
    p = xp.exp(scores)
    p = p / xp.sum(p, axis=-1, keepdims=True)
    return p @ v


def log_sum_exp(xp: Any, x: Any) -> Any:
    """log-sum-exp per row, and of the whole array, both shifted by their maximum."""
    m = xp.max(x, axis=-1, keepdims=True)
    rows = xp.log(xp.sum(xp.exp(x - m), axis=-1)) + m[:, 0]
    top = xp.max(x)
    whole = xp.log(xp.sum(xp.exp(x - top))) + top
    return rows, whole


def hash_histogram(xp: Any, keys: Any) -> Any:
    """A multiplicative uint32 hash (wrapping), then a 16-bin histogram of its top bits."""
    h = keys * xp.asarray(2654435761, dtype=xp.uint32)
    h = h ^ (h >> 15)
    bins = h >> 28
    hits = bins[:, None] == xp.arange(16, dtype=xp.uint32)[None, :]
    return xp.sum(xp.astype(hits, xp.int32), axis=0)


def ring_buffer(xp: Any, buffer: Any, start: Any) -> Any:
    """Read a ring buffer from ``start`` with ``remainder``, and a moving average of it."""
    size = buffer.shape[0]
    positions = xp.remainder(xp.arange(size, dtype=xp.int64) + start, size)
    ordered = xp.take(buffer, positions, axis=0)
    window = (ordered[:-2] + ordered[1:-1] + ordered[2:]) / 3.0
    return ordered, window


def stream_compaction(xp: Any, x: Any) -> Any:
    """Keep the elements above a threshold: flags as uint8, their count and positions."""
    flags = xp.astype(x > 0.25, xp.uint8)
    count = xp.sum(flags)
    positions = xp.cumulative_sum(xp.astype(flags, xp.int32)) - 1
    kept = xp.where(flags == 1, x, 0.0)
    return count, positions, kept


def image_filter(xp: Any, image: Any) -> Any:
    """A 5-point smoothing filter on the interior, the border rows kept, the top row zeroed."""
    inner = (
        image[:-2, 1:-1]
        + image[2:, 1:-1]
        + image[1:-1, :-2]
        + image[1:-1, 2:]
        + 4.0 * image[1:-1, 1:-1]
    ) / 8.0
    middle = xp.concat([image[1:-1, :1], inner, image[1:-1, -1:]], axis=1)
    y = xp.concat([image[:1, :], middle, image[-1:, :]], axis=0)
    y[0, :] = 0.0
    return y


def gelu_scan(xp: Any, x: Any) -> Any:
    """A tanh GELU, scaled, then its running sum along the rows."""
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    g = 0.5 * x * (1.0 + xp.tanh(inner))
    return xp.cumulative_sum(0.01 * g, axis=-1)


def top_p_sampler(xp: Any, logits: Any, u: Any) -> Any:
    """Nucleus sampling: sort, softmax, running sum, keep the top p, draw with ``u``."""
    order = xp.argsort(-logits, axis=-1)
    ranked = xp.take_along_axis(logits, order, axis=-1)
    p = xp.exp(ranked - ranked[:, :1])
    p = p / xp.sum(p, axis=-1, keepdims=True)
    total = xp.cumulative_sum(p, axis=-1)
    kept = xp.where(total - p < 0.9, p, 0.0)
    kept = kept / xp.sum(kept, axis=-1, keepdims=True)
    below = xp.cumulative_sum(kept, axis=-1) < u[:, None]
    return xp.sum(xp.astype(below, xp.int64), axis=-1), kept


def newton_solve(xp: Any, a: Any, b: Any) -> Any:
    """Three Newton steps on x**3 + A x = b, each solving with the Jacobian."""
    x = xp.zeros_like(b)
    eye = xp.eye(a.shape[0], dtype=a.dtype)
    for _ in range(3):
        residual = x * x * x + a @ x - b
        jacobian = a + 3.0 * eye * (x * x)[None, :]
        x = x - xp.linalg.solve(jacobian, residual)
    return x


def fft_convolution(xp: Any, signal: Any, kernel: Any) -> Any:
    """Circular convolution by the real FFT, and its energy."""
    n = signal.shape[-1]
    product = xp.fft.rfft(signal) * xp.fft.rfft(kernel, n=n)
    out = xp.fft.irfft(product, n=n)
    return out, xp.sum(out * out)


def _inputs(seed: int) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    rng = np.random.default_rng(seed)
    f = np.float32

    def normal(*shape: int) -> Any:
        return rng.standard_normal(shape).astype(f)

    return {
        "kmeans_step": (kmeans_step, (normal(64, 4), normal(5, 4))),
        "mlp_cross_entropy": (
            mlp_cross_entropy,
            (
                normal(16, 8),
                normal(8, 32) * f(0.3),
                normal(32) * f(0.1),
                normal(32, 10) * f(0.3),
                rng.integers(0, 10, 16),
            ),
        ),
        "layer_norm_attention": (
            layer_norm_attention,
            (
                normal(12, 16),
                normal(16, 8) * f(0.25),
                normal(16, 8) * f(0.25),
                normal(16, 8) * f(0.25),
            ),
        ),
        "log_sum_exp": (log_sum_exp, (normal(8, 32) * f(3.0),)),
        "hash_histogram": (hash_histogram, (rng.integers(0, 2**32, 500, dtype=np.uint32),)),
        "ring_buffer": (ring_buffer, (normal(40), 17)),
        "stream_compaction": (stream_compaction, (rng.random(400).astype(f),)),
        "image_filter": (image_filter, (rng.random((10, 12)).astype(f),)),
        "gelu_scan": (gelu_scan, (normal(6, 64),)),
        "top_p_sampler": (top_p_sampler, (normal(4, 50) * f(2.0), rng.random(4).astype(f))),
        "newton_solve": (
            newton_solve,
            (np.eye(6, dtype=f) * f(4.0) + normal(6, 6) * f(0.3), normal(6)),
        ),
        "fft_convolution": (fft_convolution, (normal(64), normal(8))),
    }


PROGRAMS = _inputs(0)
