"""The NumPy stand-in's kernels: each MSL kernel emulated one threadgroup at a time.

Each function takes the flat threadgroup index (recovered from the grid as the MSL does), the
decoded parameter block and the kernel's buffers in the order its signature names them.
Arithmetic is float32 like the kernels'; reads past a buffer are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# -- the kernels, one threadgroup at a time, indexed as the MSL indexes ---------------------


def _gemm(flat: int, p: dict[str, Any], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    if flat >= p["groups"]:
        return
    m, n, k = p["m"], p["n"], p["k"]
    r0, c0 = (flat // p["tiles_n"]) * 64, (flat % p["tiles_n"]) * 32
    r1, c1 = min(r0 + 64, m), min(c0 + 32, n)
    tile = a.reshape(m, k)[r0:r1] @ b.reshape(n, k)[c0:c1].T
    c.reshape(m, n)[r0:r1, c0:c1] = tile.astype(np.float32)


def _gemv(flat: int, p: dict[str, Any], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    if flat >= p["groups"]:
        return
    n, k = p["n"], p["k"]
    r0, r1 = flat * 8, min(flat * 8 + 8, n)
    c[r0:r1] = (b.reshape(n, k)[r0:r1] @ a[:k]).astype(np.float32)


def _silu_mul(flat: int, p: dict[str, Any], src: np.ndarray, dst: np.ndarray) -> None:
    if flat >= p["groups"]:
        return
    inter = p["intermediate"]
    i = np.arange(flat * 256, min(flat * 256 + 256, p["total"]))
    rows = (i // inter) * 2 * inter
    gate, up = src[rows + i % inter], src[rows + inter + i % inter]
    with np.errstate(over="ignore"):
        dst[i] = gate / (np.float32(1.0) + np.exp(-gate)) * up


def _rms_norm(flat: int, p: dict[str, Any], x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    if flat >= p["tokens"]:
        return
    dim = p["dim"]
    row = x[flat * dim : (flat + 1) * dim]
    inv = np.float32(1.0) / np.sqrt(np.dot(row, row) / np.float32(dim) + np.float32(p["eps"]))
    out[flat * dim : (flat + 1) * dim] = row * inv * w[:dim]


def _need(buffer: np.ndarray, count: int, what: str) -> None:
    # A real GPU reads past a short buffer silently; the stand-in refuses.
    assert buffer.size >= count, f"{what} holds {buffer.size} elements, the kernel reads {count}"


def _visible(causal: int, length: int, tokens: int, row: int) -> int:
    return length - tokens + row + 1 if causal else length


def _softmax(flat: int, p: dict[str, Any], x: np.ndarray, out: np.ndarray) -> None:
    if flat >= p["tokens"]:
        return
    dim = p["dim"]
    _need(x, p["tokens"] * dim, "x")
    visible = _visible(p["causal"], dim, p["tokens"], flat)
    row = np.zeros(dim, np.float32)
    # Overflow becomes inf and NaN, as on a GPU (a bad temperature must fail, not raise).
    with np.errstate(over="ignore", invalid="ignore"):
        z = x[flat * dim : flat * dim + visible] / np.float32(p["temperature"])
        e = np.exp(z - z.max())
        row[:visible] = e / e.sum(dtype=np.float32)
    out[flat * dim : (flat + 1) * dim] = row


def _layer_norm(
    flat: int, p: dict[str, Any], x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray
) -> None:
    if flat >= p["tokens"]:
        return
    dim = p["dim"]
    _need(x, p["tokens"] * dim, "x")
    row = x[flat * dim : (flat + 1) * dim]
    mean = row.sum(dtype=np.float32) / np.float32(dim)
    d = row - mean
    inv = np.float32(1.0) / np.sqrt(
        (d * d).sum(dtype=np.float32) / np.float32(dim) + np.float32(p["eps"])
    )
    out[flat * dim : (flat + 1) * dim] = d * inv * w[:dim] + b[:dim]


def _add_rms_norm(
    flat: int, p: dict[str, Any], x: np.ndarray, r: np.ndarray, w: np.ndarray, out: np.ndarray
) -> None:
    if flat >= p["tokens"]:
        return
    dim, total = p["dim"], p["tokens"] * p["dim"]
    _need(out, 2 * total, "out")
    h = x[flat * dim : (flat + 1) * dim] + r[flat * dim : (flat + 1) * dim]
    inv = np.float32(1.0) / np.sqrt(np.dot(h, h) / np.float32(dim) + np.float32(p["eps"]))
    out[flat * dim : (flat + 1) * dim] = h
    out[total + flat * dim : total + (flat + 1) * dim] = h * inv * w[:dim]


def _rope(flat: int, p: dict[str, Any], x: np.ndarray, turns: np.ndarray, out: np.ndarray) -> None:
    if flat >= p["groups"]:
        return
    half, heads = p["head_dim"] // 2, p["heads"]
    words = turns.view(np.uint32)
    _need(words, 2 * half, "turns")
    pair = np.arange(flat * 256, min(flat * 256 + 256, p["pairs"]), dtype=np.uint64)
    i, row = pair % half, pair // half
    base = row * p["head_dim"]
    if p["interleaved"]:
        ia, ib = base + 2 * i, base + 2 * i + 1
    else:
        ia, ib = base + i, base + i + half
    # The MSL's wrapping uint arithmetic, exactly: phase = p·high + mulhi(p, low) mod 2^32.
    position = np.uint64(p["offset"]) + row // np.uint64(heads)
    assert (position < 2**32).all(), "RoPE positions must fit in uint"
    high, low = words[2 * i].astype(np.uint64), words[2 * i + 1].astype(np.uint64)
    phase = (position * high + ((position * low) >> np.uint64(32))) % 2**32
    angle = phase.astype(np.uint32).view(np.int32).astype(np.float32) * np.float32(
        1.4629180792671596e-9
    )
    c, s = np.cos(angle), np.sin(angle)
    a, b = x[ia.astype(np.int64)], x[ib.astype(np.int64)]
    out[ia.astype(np.int64)] = a * c - b * s
    out[ib.astype(np.int64)] = a * s + b * c


def _attention(
    flat: int, p: dict[str, Any], q: np.ndarray, k: np.ndarray, v: np.ndarray, out: np.ndarray
) -> None:
    if flat >= p["groups"]:
        return
    tokens, heads, kv_heads, d = p["tokens"], p["heads"], p["kv_heads"], p["head_dim"]
    h, t = divmod(flat, tokens)
    g = h // (heads // kv_heads)
    visible = _visible(p["causal"], p["kv_len"], tokens, t)
    _need(k, p["kv_len"] * kv_heads * d, "k")
    query = q.reshape(tokens, heads, d)[t, h]
    keys = k.reshape(p["kv_len"], kv_heads, d)[:visible, g]
    values = v.reshape(p["kv_len"], kv_heads, d)[:visible, g]
    scores = (keys @ query) * np.float32(p["scale"])
    e = np.exp(scores - scores.max())
    out[flat * d : (flat + 1) * d] = (e @ values) / e.sum(dtype=np.float32)


def _gelu(flat: int, p: dict[str, Any], gate: np.ndarray, up: np.ndarray, out: np.ndarray) -> None:
    """The example op plugin's kernel (ops/example: kernels/gelu.metal)."""
    if flat >= p["groups"]:
        return
    i = np.arange(flat * 256, min(flat * 256 + 256, p["total"]))
    half = p["half_count"]
    _need(gate, half, "gate")
    _need(up, p["total"] - half, "up")
    x = np.where(i < half, gate[np.minimum(i, half - 1)], up[np.maximum(i - half, 0)])
    u = np.clip(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x * x * x), -10, 10)
    out[i] = np.float32(0.5) * x * (np.float32(1.0) + np.tanh(u))


KERNELS: dict[str, Callable[..., None]] = {
    "gemm_f32_v2": _gemm,
    "gemv_f32": _gemv,
    "silu_mul_split_f32": _silu_mul,
    "rms_norm_f32": _rms_norm,
    "softmax_f32": _softmax,
    "layer_norm_f32": _layer_norm,
    "add_rms_norm_f32": _add_rms_norm,
    "rope_f32": _rope,
    "attention_f32": _attention,
    "gelu_f32": _gelu,
}
