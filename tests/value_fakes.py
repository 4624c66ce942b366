"""A NumPy-based Array API namespace with injected faults, one per kind of divergence.

Each fault is a way a real backend goes wrong (a missing function, a wrong result dtype,
-0.0 for +0.0, NaN where there is a number, a few ULP off, a shift count taken modulo the
bit width, a narrow accumulator, an exception, an elementwise result that depends on the
whole array); the value-model tests find, localize and blame every one.
"""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np

from diffcheck.adapters.numpy_ref import NumpyAdapter

FAULTS = (
    "none",
    "missing",
    "missing-linalg",
    "dtype",
    "signed-zero",
    "nan",
    "ulp3",
    "shift-wrap",
    "narrow-cumsum",
    "raises",
    "special-case",
    "naive-sum",
    "one-pass-var",
    "exact-sums",
    "narrow-counts",
    "sin-above-half",
    "cos-sum-shift",
)


def nudge(values: Any, ulps: int) -> Any:
    """``values`` moved ``ulps`` representable steps up, in their own dtype."""
    out = np.array(values, copy=True)
    for _ in range(ulps):
        out = np.nextafter(out, np.asarray(np.inf, out.dtype))
    return out


class _Linalg:
    def __init__(self, fault: str) -> None:
        self._fault = fault

    def __getattr__(self, name: str) -> Any:
        if self._fault == "missing-linalg" and name == "vecdot":
            raise AttributeError("module 'fake.linalg' has no attribute 'vecdot'")
        return getattr(cnp.linalg, name)


class FaultyNamespace:
    """``array_api_compat.numpy`` with one fault injected."""

    __name__ = "fake_values_namespace"

    def __init__(self, fault: str) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; it must be one of {FAULTS}")
        self.fault = fault
        self.linalg = _Linalg(fault)

    def __getattr__(self, name: str) -> Any:
        if self.fault == "missing" and name == "hypot":
            raise AttributeError("module 'fake' has no attribute 'hypot'")
        return getattr(cnp, name)

    def argmax(self, x: Any, /, **kwargs: Any) -> Any:
        result = cnp.argmax(x, **kwargs)
        return result.astype(np.int32) if self.fault == "dtype" else result

    def multiply(self, x1: Any, x2: Any, /) -> Any:
        result = cnp.multiply(x1, x2)
        if self.fault == "signed-zero":
            result = np.where(result == 0, np.abs(result), result)  # drops the sign of zero
        return result

    def log1p(self, x: Any, /) -> Any:
        result = cnp.log1p(x)
        if self.fault == "nan":
            result = np.where(np.asarray(x) < 0, np.nan, result).astype(result.dtype)
        return result

    def exp(self, x: Any, /) -> Any:
        result = cnp.exp(x)
        if self.fault == "ulp3":
            picked = np.arange(result.size).reshape(result.shape) % 5 == 3
            result = np.where(picked, nudge(result, 3), result)
        return result

    def sin(self, x: Any, /) -> Any:
        result = cnp.sin(x)
        data = np.asarray(x)
        if self.fault == "sin-above-half" and data.dtype.kind == "f":
            result = np.where(data > 0.5, nudge(result, 3), result).astype(result.dtype)
        return result

    def cos(self, x: Any, /) -> Any:
        data = np.asarray(x)
        if self.fault == "cos-sum-shift" and data.dtype.kind == "f":
            # Shifted by the whole array's sum and back, "for stability": exact for one
            # element (x - x + x), rounded wherever the sum dwarfs an element.
            total = data.sum(dtype=data.dtype)
            with np.errstate(all="ignore"):
                return cnp.cos((data - total) + total)
        return cnp.cos(x)

    def expm1(self, x: Any, /) -> Any:
        result = cnp.expm1(x)
        if self.fault == "special-case":
            result = np.where(result == 0, np.abs(result), result)  # expm1(-0) must be -0
        return result

    def bitwise_left_shift(self, x1: Any, x2: Any, /) -> Any:
        if self.fault == "shift-wrap":
            bits = np.dtype(np.result_type(x1, x2)).itemsize * 8
            return cnp.bitwise_left_shift(x1, np.asarray(x2) % bits)  # x86 masks the count
        return cnp.bitwise_left_shift(x1, x2)

    def cumulative_sum(self, x: Any, /, **kwargs: Any) -> Any:
        if self.fault == "narrow-cumsum":
            return np.cumsum(x, dtype=np.asarray(x).dtype, axis=kwargs.get("axis", 0))
        return cnp.cumulative_sum(x, **kwargs)

    def _exact(self, name: str, x: Any, kwargs: dict[str, Any]) -> Any:
        """``name`` computed in extended precision and rounded once (a near-exact backend)."""
        data = np.asarray(x)
        wide = data.astype(np.longdouble)
        options = {k: v for k, v in kwargs.items() if k != "correction"}
        if name == "var":
            options["ddof"] = float(kwargs.get("correction") or 0.0)
        return np.asarray(getattr(np, name)(wide, **options)).astype(data.dtype)

    def mean(self, x: Any, /, **kwargs: Any) -> Any:
        if self.fault == "exact-sums" and np.asarray(x).dtype.kind == "f":
            return self._exact("mean", x, kwargs)
        return cnp.mean(x, **kwargs)

    def sum(self, x: Any, /, **kwargs: Any) -> Any:
        if self.fault == "exact-sums" and np.asarray(x).dtype.kind == "f" and "dtype" not in kwargs:
            return self._exact("sum", x, kwargs)
        if (
            self.fault == "naive-sum"
            and np.asarray(x).dtype == np.float32
            and "dtype" not in kwargs
        ):
            # Left to right in float32 (np.cumsum is sequential), as a plain loop would.
            axis = kwargs.get("axis")
            flat = np.asarray(x).reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
            total = np.cumsum(flat, axis=-1, dtype=np.float32)[..., -1] if flat.size else None
            if total is not None:
                return (
                    np.asarray(total)
                    if not kwargs.get("keepdims")
                    else np.expand_dims(
                        total, axis if axis is not None else tuple(range(np.ndim(x)))
                    )
                )
        return cnp.sum(x, **kwargs)

    def var(self, x: Any, /, **kwargs: Any) -> Any:
        data = np.asarray(x)
        if self.fault == "exact-sums" and data.dtype.kind == "f":
            return self._exact("var", x, kwargs)
        if self.fault == "one-pass-var" and data.dtype.kind == "f" and data.size:
            # The textbook one-pass formula E[x^2] - E[x]^2, in the input's dtype.
            axis, keep = kwargs.get("axis"), bool(kwargs.get("keepdims"))
            correction = float(kwargs.get("correction") or 0.0)
            n = data.size if axis is None else data.size // np.mean(data, axis=axis).size
            squares = np.mean(data * data, axis=axis, keepdims=keep)
            mean = np.mean(data, axis=axis, keepdims=keep)
            return ((squares - mean * mean) * (n / max(n - correction, 1))).astype(data.dtype)
        return cnp.var(x, **kwargs)

    def unique_counts(self, x: Any, /) -> Any:
        result = cnp.unique_counts(x)
        if self.fault == "narrow-counts":  # two outputs, the second in a narrower dtype
            return type(result)(result.values, result.counts.astype(np.int32))
        return result

    def atan2(self, x1: Any, x2: Any, /) -> Any:
        if self.fault == "raises":
            raise NotImplementedError("atan2 is not implemented for this dtype")
        return cnp.atan2(x1, x2)


class FaultyAdapter(NumpyAdapter):
    """A NumPy adapter whose namespace carries one injected fault."""

    name = "faulty"
    # It computes through its own (faulty) namespace, so it is not NumPy's own backend.
    namespace_label = "fake_values_namespace"

    def __init__(self, fault: str = "none", device: str | None = None) -> None:
        super().__init__(device)
        self.fault = fault
        self._namespace = FaultyNamespace(fault)

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its arguments in the search's worker process (its namespace's
        # __getattr__ cannot be unpickled attribute by attribute).
        return (type(self), (self.fault, self.device))

    @property
    def spec(self) -> str:
        return f"faulty[{self.fault}]"

    def namespace(self) -> Any:
        return self._namespace


class BrokenNamespaceAdapter(FaultyAdapter):
    """A backend whose namespace fails to load when called (an import error in its library)."""

    def namespace(self) -> Any:
        raise RuntimeError("the backend's namespace failed to load")


class LoadsOnlyHereAdapter(FaultyAdapter):
    """A backend set up in this process only: in a fresh one its namespace fails to load."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (BrokenNamespaceAdapter, (self.fault, self.device))
