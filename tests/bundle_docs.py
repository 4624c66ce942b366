"""Finding bundles built by hand for the bundle tests: a genuine one, then edited."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import numpy as np

from diffcheck.search.bundle import encode_array, encode_value


def value(item: Any) -> dict[str, Any]:
    """One argument as the bundle stores it."""
    stored: dict[str, Any] = encode_value(item).model_dump(mode="json", exclude_none=True)
    return stored


def array(item: Any) -> dict[str, Any]:
    """One array as the bundle stores it."""
    stored: dict[str, Any] = encode_array(np.asarray(item)).model_dump(
        mode="json", exclude_none=True
    )
    return stored


def restamp(stored: dict[str, Any], raw: bytes) -> None:
    """Give a stored array new bytes with a consistent size and digest (as a forger would)."""
    stored.update(
        data=base64.b64encode(raw).decode(), sha256=hashlib.sha256(raw).hexdigest(), bytes=len(raw)
    )


def document(
    function: str = "exp",
    args: list[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    *,
    reference: Any = None,
    candidate: Any = None,
    kind: str = "value",
    dtype: str = "float32",
    backends: tuple[str, str] = ("numpy", "numpy"),
) -> dict[str, Any]:
    """A bundle document calling ``function`` on NumPy-built arguments."""
    args = [np.asarray([0.5, 1.0], dtype=np.float32)] if args is None else args
    outputs: dict[str, Any] = {}
    for side, given in (("reference", reference), ("candidate", candidate)):
        outputs[side] = {"missing": "not stored"} if given is None else {"arrays": [array(given)]}
    return {
        "kind": "diffcheck-finding",
        "bundle_version": 1,
        "function": function,
        "finding": {"kind": kind, "dtype": dtype, "reason": "stored reason"},
        "bound": {"kind": "exact", "provenance": "stored provenance"},
        "call": {
            "args": [value(a) for a in args],
            "kwargs": {k: value(v) for k, v in (kwargs or {}).items()},
        },
        "reference": {"backend": backends[0], "library": "numpy", "version": "0"},
        "candidate": {"backend": backends[1], "library": "numpy", "version": "0"},
        "outputs": outputs,
    }
