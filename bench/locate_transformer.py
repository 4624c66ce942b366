"""diffcheck.locate on a transformer block, and its cost against compare, in the same run.

The block (RMS norm, q/k/v projections, RoPE, causal attention with a max-subtracted softmax,
output projection, residual, RMS norm, SiLU-gated MLP, residual) is written once against the
Array API: about 40 calls. It runs NumPy (float32) against the candidate at f32, f16 and bf16
candidate precision and prints each per-call table, then the median time of
``compare(block, ...)`` and ``locate(block, ...)`` on the f32 candidate (the overhead target:
locate <= 3x compare when nothing diverges), and of a locate run whose memory budget forces
one run per window; then the same overhead at a larger size (128 tokens, width 256).
Usage: python bench/locate_transformer.py [CANDIDATE] [--html DIR]
  (default mlx:cpu; --html writes locate-<precision>.html pages into DIR)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import diffcheck

TOKENS, WIDTH, HEADS, HIDDEN = 16, 64, 4, 128
#: (tokens, width, hidden) of the second overhead measurement.
LARGER = (128, 256, 1024)


def rms_norm(xp: Any, x: Any, weight: Any) -> Any:
    mean_square = xp.mean(x * x, axis=-1, keepdims=True)
    return x / xp.sqrt(mean_square + 1e-6) * weight


def rope(xp: Any, x: Any, cos: Any, sin: Any) -> Any:
    half = x.shape[-1] // 2
    first, second = x[..., :half], x[..., half:]
    rotated = xp.concat([-second, first], axis=-1)
    return x * cos + rotated * sin


def block(
    xp: Any,
    x: Any,
    norm1: Any,
    wq: Any,
    wk: Any,
    wv: Any,
    wo: Any,
    norm2: Any,
    w_gate: Any,
    w_up: Any,
    w_down: Any,
    cos: Any,
    sin: Any,
    mask: Any,
) -> Any:
    tokens, width = x.shape
    head = width // HEADS
    h = rms_norm(xp, x, norm1)
    q = xp.reshape(h @ wq, (tokens, HEADS, head))
    k = xp.reshape(h @ wk, (tokens, HEADS, head))
    v = xp.reshape(h @ wv, (tokens, HEADS, head))
    q = xp.permute_dims(rope(xp, q, cos, sin), (1, 0, 2))
    k = xp.permute_dims(rope(xp, k, cos, sin), (1, 0, 2))
    v = xp.permute_dims(v, (1, 0, 2))
    scores = (q @ xp.matrix_transpose(k)) / float(np.sqrt(head)) + mask
    scores = scores - xp.max(scores, axis=-1, keepdims=True)
    weights = xp.exp(scores)
    weights = weights / xp.sum(weights, axis=-1, keepdims=True)
    attended = xp.reshape(xp.permute_dims(weights @ v, (1, 0, 2)), (tokens, width))
    x = x + attended @ wo
    h = rms_norm(xp, x, norm2)
    gate = h @ w_gate
    silu = gate / (1.0 + xp.exp(-gate))
    return x + (silu * (h @ w_up)) @ w_down


def inputs(
    seed: int = 0, tokens: int = TOKENS, width: int = WIDTH, hidden: int = HIDDEN
) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    head = width // HEADS

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    angles = np.arange(tokens)[:, None] / 10000 ** (np.arange(head // 2) / (head // 2))
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1)[:, None, :].astype(np.float32)
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1)[:, None, :].astype(np.float32)
    mask = np.triu(np.full((tokens, tokens), -1e9, np.float32), k=1)
    return [
        rng.standard_normal((tokens, width)).astype(np.float32),
        (1 + 0.1 * rng.standard_normal(width)).astype(np.float32),
        w(width, width),
        w(width, width),
        w(width, width),
        w(width, width),
        (1 + 0.1 * rng.standard_normal(width)).astype(np.float32),
        w(width, hidden),
        w(width, hidden),
        w(hidden, width),
        cos,
        sin,
        mask,
    ]


def median_time(fn: Callable[[], object], repeats: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(
    first: Callable[[], object], second: Callable[[], object], repeats: int = 9
) -> tuple[float, float]:
    """Median times of two callables run in turns, so a busy machine slows both alike."""
    first(), second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, bucket in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    candidate = args[0] if args else "mlx:cpu"
    html_dir = Path(sys.argv[sys.argv.index("--html") + 1]) if "--html" in sys.argv else None
    if html_dir is not None:
        args = [a for a in args if a != str(html_dir)]
    values = inputs()
    try:
        diffcheck.compare(block, *values, candidate=candidate)
    except diffcheck.BackendError as error:
        print(f"locate transformer block: not run ({error})")
        return
    for precision in ("f32", "f16", "bf16"):
        try:
            result = diffcheck.locate(block, *values, candidate=candidate, precision=precision)
        except diffcheck.BackendError as error:
            print(f"--- {precision} ---\nnot run: {error}")
            continue
        print(f"--- {precision} ---")
        print(result)
        if html_dir is not None:
            html_dir.mkdir(parents=True, exist_ok=True)
            (html_dir / f"locate-{precision}.html").write_text(result.to_html())
    compare_time, locate_time = interleaved_medians(
        lambda: diffcheck.compare(block, *values, candidate=candidate),
        lambda: diffcheck.locate(block, *values, candidate=candidate),
    )
    windowed = diffcheck.locate(block, *values, candidate=candidate, max_memory=64 * 1024)
    windowed_time = median_time(
        lambda: diffcheck.locate(block, *values, candidate=candidate, max_memory=64 * 1024), 3
    )
    print(
        f"overhead ({candidate}, f32, medians): compare {compare_time * 1e3:.1f} ms, "
        f"locate {locate_time * 1e3:.1f} ms, locate/compare = {locate_time / compare_time:.2f}"
    )
    print(
        f"windowed (max_memory 64 KiB): {windowed.passes} runs of each side, "
        f"{windowed_time * 1e3:.1f} ms, peak kept {windowed.peak_stored_bytes} bytes"
    )
    met = locate_time <= 3 * compare_time
    print(f"  {'MET ' if met else 'MISS'} locate <= 3x compare with no divergence")
    # The same block at a larger size: locate's per-call host work (recording, judging) is
    # a smaller part there, while what it moves (every call's inputs and outputs, between
    # host and device on a GPU) grows with the arrays.
    larger = inputs(tokens=LARGER[0], width=LARGER[1], hidden=LARGER[2])
    compare_time, locate_time = interleaved_medians(
        lambda: diffcheck.compare(block, *larger, candidate=candidate),
        lambda: diffcheck.locate(block, *larger, candidate=candidate),
    )
    print(
        f"overhead at {LARGER[0]} tokens, width {LARGER[1]}, hidden {LARGER[2]}: compare "
        f"{compare_time * 1e3:.1f} ms, locate {locate_time * 1e3:.1f} ms, "
        f"locate/compare = {locate_time / compare_time:.2f}"
    )


if __name__ == "__main__":
    main()
