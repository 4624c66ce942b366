"""Array-API helpers the op definitions share: index ranges on the inputs' device, masked softmax.

Creation functions take the device of an existing array, so a definition also runs where
arrays on two devices cannot mix (``torch:cuda``, ``array_api_strict:device1``). A namespace
whose arrays carry no ``device`` (MLX binds work to its default stream) gets none.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["arange_like", "causal_visible", "masked_softmax"]


def arange_like(xp: Any, count: int, dtype: Any, like: Any) -> Any:
    """``xp.arange(count, dtype=dtype)`` on the device of ``like``."""
    device = getattr(like, "device", None)
    if device is None:
        return xp.arange(count, dtype=dtype)
    return xp.arange(count, dtype=dtype, device=device)


def causal_visible(xp: Any, rows: int, cols: int, like: Any) -> Any:
    """Boolean [rows, cols]: row ``i`` is query position ``cols - rows + i`` and sees ``j <= it``.

    The last row sees every column, so a query block is aligned to the end of the keys (the
    decode and chunked-prefill convention); callers require ``rows <= cols``.
    """
    index = xp.int64 if hasattr(xp, "int64") else xp.int32
    row = xp.reshape(arange_like(xp, rows, index, like), (rows, 1))
    col = xp.reshape(arange_like(xp, cols, index, like), (1, cols))
    return xp.less_equal(col, row + (cols - rows))


def masked_softmax(xp: Any, scores: Any, visible: Any | None) -> Any:
    """Softmax over the last axis of ``scores``; entries not ``visible`` are exactly 0.0.

    The row maximum is taken over visible entries only (every row sees at least one), and
    masked entries are zeroed with ``where``, not left to ``exp(-inf)``.
    """
    if visible is None:
        shifted = scores - xp.max(scores, axis=-1, keepdims=True)
        weights = xp.exp(shifted)
        return weights / xp.sum(weights, axis=-1, keepdims=True)
    low = xp.full_like(scores, -math.inf)
    zero = xp.zeros_like(scores)
    kept = xp.where(visible, scores, low)
    shifted = kept - xp.max(kept, axis=-1, keepdims=True)
    weights = xp.where(visible, xp.exp(shifted), zero)
    return weights / xp.sum(weights, axis=-1, keepdims=True)
