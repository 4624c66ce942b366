"""A window's device arrays, already computed, brought to the host together."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..adapters import Adapter
from ..values.call import _home

__all__ = ["homes"]


def homes(adapter: Adapter, arrays: Sequence[Any]) -> list[Any]:
    """Host values of ``arrays`` (synchronized by the caller), as ``_home`` gives them."""
    return [_home(adapter, a, computed=True) for a in arrays]
