"""A NumPy-based backend with one planted bug per kind of program-level divergence."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np

from diffcheck.adapters.numpy_ref import NumpyAdapter

BUGS = ("none", "exp-f16", "sqrt-ulp", "matmul-square-transpose", "var-axis", "multiply-f32")


class BuggyNamespace:
    """``array_api_compat.numpy`` with one planted bug."""

    __name__ = "buggy_namespace"

    def __init__(self, bug: str) -> None:
        self.bug = bug
        self.linalg = cnp.linalg

    def __getattr__(self, name: str) -> Any:
        return getattr(cnp, name)

    def exp(self, x: Any, /) -> Any:
        if self.bug == "exp-f16":  # computes in float16: overflows past 11.09
            with np.errstate(over="ignore"):
                return np.exp(np.asarray(x).astype(np.float16)).astype(x.dtype)
        return cnp.exp(x)

    def sqrt(self, x: Any, /) -> Any:
        result = cnp.sqrt(x)
        if self.bug == "sqrt-ulp":  # a fast approximation: about 1e-4 relative error
            return (result * (1 + 1e-4)).astype(result.dtype)
        return result

    def matmul(self, x1: Any, x2: Any, /) -> Any:
        if self.bug == "matmul-square-transpose" and x2.ndim == 2 and x2.shape[0] == x2.shape[1]:
            return cnp.matmul(x1, x2.T)  # an indexing bug that shows on square operands only
        return cnp.matmul(x1, x2)

    def var(self, x: Any, /, *, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
        if self.bug == "var-axis" and axis == -1 and x.ndim == 2 and x.shape[0] == x.shape[1]:
            out = cnp.var(x, axis=0, keepdims=keepdims, **kwargs)
            return out.T if keepdims else out  # the other axis, in the right shape
        return cnp.var(x, axis=axis, keepdims=keepdims, **kwargs)

    def multiply(self, x1: Any, x2: Any, /) -> Any:
        if self.bug == "multiply-f32" and getattr(x1, "dtype", None) == np.float64:
            return cnp.multiply(x1.astype(np.float32), np.asarray(x2, np.float32)).astype(
                np.float64
            )
        return cnp.multiply(x1, x2)


class BuggyAdapter(NumpyAdapter):
    """A NumPy adapter whose namespace carries one planted bug."""

    name = "buggy"
    namespace_label = "buggy_namespace"

    def __init__(self, bug: str = "none", device: str | None = None) -> None:
        super().__init__(device)
        if bug not in BUGS:
            raise ValueError(f"unknown bug {bug!r}")
        self.bug = bug
        self._namespace = BuggyNamespace(bug)

    @property
    def spec(self) -> str:
        return f"buggy[{self.bug}]"

    def namespace(self) -> Any:
        return self._namespace


class FusedAdapter(NumpyAdapter):
    """A NumPy adapter whose namespace is the module ``localize_fused_ns`` (a fusion bug)."""

    name = "fused"
    namespace_label = "localize_fused_ns"

    @property
    def spec(self) -> str:
        return "fused"

    def namespace(self) -> Any:
        import localize_fused_ns

        return localize_fused_ns


class SqrtAdapter(NumpyAdapter):
    """A NumPy adapter whose namespace is the module ``localize_sqrt_ns`` (sqrt 1 ULP high
    above 4)."""

    name = "sqrt-high"
    namespace_label = "localize_sqrt_ns"

    @property
    def spec(self) -> str:
        return "sqrt-high"

    def namespace(self) -> Any:
        import localize_sqrt_ns

        return localize_sqrt_ns
