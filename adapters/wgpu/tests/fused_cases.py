"""Inputs, launches and float64 expectations of the inference kernels, by op name and params.

Shared by the kernel-level tests: a case is an op name and its params (the ops' fields);
:func:`prepare` makes seeded inputs in the ranges the ops specify, the launch, and the
expected output from :mod:`kernel_refs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

import kernel_refs as refs
from diffcheck.differ import Segment
from diffcheck.gpu_plan import (
    Launch,
    plan_add_rms_norm,
    plan_attention,
    plan_layer_norm,
    plan_rope,
    plan_softmax,
    rope_turns,
)

# (op, params, why the shape is there)
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("softmax", {"tokens": 4, "dim": 256, "causal": False, "temperature": 1.0}, "default"),
    ("softmax", {"tokens": 3, "dim": 1000, "causal": True, "temperature": 0.7}, "long row"),
    ("softmax", {"tokens": 5, "dim": 5, "causal": True, "temperature": 2.0}, "tokens == dim"),
    ("layer-norm", {"tokens": 4, "dim": 128, "eps": 1e-5}, "default"),
    ("layer-norm", {"tokens": 3, "dim": 1000, "eps": 1e-5}, "long row, tail"),
    (
        "rope",
        {"tokens": 4, "heads": 2, "head_dim": 64, "layout": "half", "offset": 0, "base": 10000.0},
        "default",
    ),
    (
        "rope",
        {
            "tokens": 3,
            "heads": 3,
            "head_dim": 34,
            "layout": "interleaved",
            "offset": 1_000_003,
            "base": 500000.0,
        },
        "head_dim 34, large position",
    ),
    (
        "rope",
        {
            "tokens": 3,
            "heads": 1,
            "head_dim": 2,
            "layout": "half",
            "offset": 2**32 - 3,
            "base": 10000.0,
        },
        "the last u32 positions",
    ),
    (
        "attention",
        {"tokens": 4, "kv_len": 8, "heads": 4, "kv_heads": 2, "head_dim": 32, "causal": True},
        "default",
    ),
    (
        "attention",
        {"tokens": 3, "kv_len": 300, "heads": 2, "kv_heads": 1, "head_dim": 40, "causal": True},
        "keys past one chunk",
    ),
    (
        "attention",
        {"tokens": 2, "kv_len": 5, "heads": 3, "kv_heads": 3, "head_dim": 520, "causal": False},
        "head_dim past one block of 512",
    ),
    (
        "attention",
        {"tokens": 5, "kv_len": 5, "heads": 2, "kv_heads": 1, "head_dim": 33, "causal": True},
        "tokens == kv_len",
    ),
    ("add-rms-norm", {"tokens": 4, "dim": 128, "eps": 1e-6}, "default"),
    ("add-rms-norm", {"tokens": 3, "dim": 1000, "eps": 1e-6}, "long row, tail"),
]


@dataclass
class Prepared:
    launch: Launch
    inputs: list[npt.NDArray[np.float32]]
    #: u32 table bound after the first input (RoPE), or None.
    words: npt.NDArray[np.uint32] | None
    expected: npt.NDArray[np.float64]
    segments: list[Segment]


def _uniform(rng: np.random.Generator, low: float, high: float, *shape: int) -> Any:
    return rng.uniform(low, high, shape).astype(np.float32)


def prepare(
    op: str, p: dict[str, Any], seed: int = 5, *, storage: Any = np.float32, limit: int = 65535
) -> Prepared:
    """Inputs (rounded to ``storage`` for the expectation), the launch and the expected output."""
    rng = np.random.default_rng(seed)

    def wide(a: Any) -> Any:
        return a.astype(storage).astype(np.float64)

    if op == "softmax":
        x = _uniform(rng, -4, 4, p["tokens"], p["dim"])
        launch = plan_softmax(p["tokens"], p["dim"], p["causal"], p["temperature"], limit=limit)
        expected = refs.softmax(wide(x), p["causal"], p["temperature"])
        return Prepared(launch, [x], None, expected, [])
    if op == "layer-norm":
        x = _uniform(rng, -2, 2, p["tokens"], p["dim"])
        w, b = _uniform(rng, 0.5, 1.5, p["dim"]), _uniform(rng, -0.5, 0.5, p["dim"])
        launch = plan_layer_norm(p["tokens"], p["dim"], p["eps"], limit=limit)
        return Prepared(
            launch, [x, w, b], None, refs.layer_norm(wide(x), wide(w), wide(b), p["eps"]), []
        )
    if op == "add-rms-norm":
        x, r = (
            _uniform(rng, -2, 2, p["tokens"], p["dim"]),
            _uniform(rng, -2, 2, p["tokens"], p["dim"]),
        )
        w = _uniform(rng, 0.5, 1.5, p["dim"])
        launch = plan_add_rms_norm(p["tokens"], p["dim"], p["eps"], limit=limit)
        size = p["tokens"] * p["dim"]
        segments = [Segment("residual", 0, size), Segment("normed", size, 2 * size)]
        expected = refs.add_rms_norm(wide(x), wide(r), wide(w), p["eps"])
        return Prepared(launch, [x, r, w], None, expected, segments)
    if op == "rope":
        x = _uniform(rng, -1, 1, p["tokens"], p["heads"], p["head_dim"])
        launch = plan_rope(
            p["tokens"],
            p["heads"],
            p["head_dim"],
            p["layout"] == "interleaved",
            p["offset"],
            limit=limit,
        )
        expected = refs.rope(wide(x), p["layout"], p["offset"], p["base"])
        return Prepared(launch, [x], rope_turns(p["base"], p["head_dim"]), expected, [])
    if op == "attention":
        q = _uniform(rng, -1, 1, p["tokens"], p["heads"], p["head_dim"])
        k = _uniform(rng, -1, 1, p["kv_len"], p["kv_heads"], p["head_dim"])
        v = _uniform(rng, -1, 1, p["kv_len"], p["kv_heads"], p["head_dim"])
        launch = plan_attention(
            p["tokens"],
            p["kv_len"],
            p["heads"],
            p["kv_heads"],
            p["head_dim"],
            p["causal"],
            limit=limit,
        )
        size = p["tokens"] * p["head_dim"]
        segments = [Segment(f"head{h}", h * size, (h + 1) * size) for h in range(p["heads"])]
        expected = refs.attention(wide(q), wide(k), wide(v), p["causal"])
        return Prepared(launch, [q, k, v], None, expected, segments)
    raise ValueError(op)


def run_prepared(device: Any, case: Prepared) -> npt.NDArray[np.float32]:
    """Upload, record the launch on a fresh context, submit, wait and read the output."""
    buffers = [device.upload(x) for x in case.inputs]
    if case.words is not None:
        buffers.insert(1, device.upload_words(case.words))
    out = device.filled(case.expected.size, -7.0)
    context = device.new_context()
    context.dispatch(case.launch, (*buffers, out))
    context.submit()
    context.wait()
    return np.asarray(device.read(out), dtype=np.float32)
