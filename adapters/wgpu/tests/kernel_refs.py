"""Float64 NumPy formulas of the inference kernels, written from the ops' specification.

Independent of diffcheck's op definitions, so a kernel and an op definition that agree
with each other but not with the specification are still caught.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


def softmax(x: F64, causal: bool, temperature: float) -> F64:
    tokens, dim = x.shape
    z = x / float(np.float32(temperature))
    if causal:
        visible = np.arange(dim)[None, :] <= (dim - tokens + np.arange(tokens))[:, None]
        z = np.where(visible, z, -np.inf)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(x: F64, weight: F64, bias: F64, eps: float) -> F64:
    mean = x.mean(axis=1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(variance + float(np.float32(eps))) * weight + bias


def add_rms_norm(x: F64, residual: F64, weight: F64, eps: float) -> F64:
    h = x + residual
    normed = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + float(np.float32(eps))) * weight
    return np.stack([h.reshape(-1), normed.reshape(-1)])


def rope(x: F64, layout: str, offset: int, base: float) -> F64:
    tokens, heads, head_dim = x.shape
    half = head_dim // 2
    i = np.arange(half, dtype=np.float64)
    frequency = float(np.float32(base)) ** (-2.0 * i / head_dim)
    positions = offset + np.arange(tokens, dtype=np.float64)
    theta = positions[:, None, None] * frequency[None, None, :]
    if layout == "half":
        a_index, b_index = np.arange(half), np.arange(half) + half
    else:
        a_index, b_index = 2 * np.arange(half), 2 * np.arange(half) + 1
    a, b = x[..., a_index], x[..., b_index]
    out = x.copy()
    out[..., a_index] = a * np.cos(theta) - b * np.sin(theta)
    out[..., b_index] = a * np.sin(theta) + b * np.cos(theta)
    return out.reshape(tokens, heads * head_dim)


def attention(q: F64, k: F64, v: F64, causal: bool) -> F64:
    tokens, heads, head_dim = q.shape
    kv_len, kv_heads, _ = k.shape
    group = heads // kv_heads
    out = np.empty((heads, tokens, head_dim))
    for h in range(heads):
        g = h // group
        scores = q[:, h, :] @ k[:, g, :].T / np.sqrt(head_dim)
        if causal:
            visible = np.arange(kv_len)[None, :] <= (kv_len - tokens + np.arange(tokens))[:, None]
            scores = np.where(visible, scores, -np.inf)
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        out[h] = (e / e.sum(axis=1, keepdims=True)) @ v[:, g, :]
    return out.reshape(heads, tokens * head_dim)
