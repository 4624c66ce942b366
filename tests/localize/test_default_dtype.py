"""locate accepts a library's own default floating dtype (float32 or float64, which the
standard leaves to it) where a creation function is given neither ``dtype=`` nor an array to
follow, and nowhere else."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.localize import locate
from diffcheck.localize._rerun import gives_default_floating

#: Each creation function's call without dtype= (its result is the default floating dtype).
CALLS: dict[str, Any] = {
    "asarray": lambda xp, n: xp.asarray([0.5] * n),
    "empty": lambda xp, n: xp.empty(n),
    "zeros": lambda xp, n: xp.zeros(n),
    "ones": lambda xp, n: xp.ones(n),
    "full": lambda xp, n: xp.full(n, 0.25),
    "arange": lambda xp, n: xp.arange(0.0, float(n)),
    "linspace": lambda xp, n: xp.linspace(0.0, 1.0, n),
    "eye": lambda xp, n: xp.eye(n),
}


class _Namespace:
    """``array_api_compat.numpy`` whose default floating dtype is float32."""

    __name__ = "float32_default_namespace"

    def __init__(self, also_given: bool) -> None:
        self.also_given = also_given  # float32 even where dtype=float64 is given (a bug)
        self.linalg = cnp.linalg

    def __getattr__(self, name: str) -> Any:
        function = getattr(cnp, name)
        if name not in CALLS:
            return function

        def float32_default(*args: Any, **kwargs: Any) -> Any:
            given = kwargs.get("dtype") is not None
            out = function(*args, **kwargs)
            narrow = out.dtype == np.float64 and (self.also_given or not given)
            if narrow and not any(isinstance(a, np.ndarray) for a in args):
                return out.astype(np.float32)
            return out

        return float32_default


class _Adapter(NumpyAdapter):
    name = "float32_default"
    namespace_label = "float32_default_namespace"  # another library than NumPy's

    def __init__(self, also_given: bool = False) -> None:
        super().__init__(None)
        self._namespace = _Namespace(also_given)

    def namespace(self) -> Any:
        return self._namespace


def _program(name: str) -> Any:
    def program(xp: Any, x: Any) -> Any:
        made = CALLS[name](xp, x.shape[0])
        return x + xp.astype(xp.sum(made) * 0.0, x.dtype)  # the result never depends on it

    return program


@pytest.mark.parametrize("n", [1, 3, 8])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_default_floating_dtype_is_the_librarys_own(name: str, n: int) -> None:
    x = np.ones(n, np.float32)
    result = locate(_program(name), x, candidate=_Adapter())
    assert result.passed, str(result)
    (call,) = [c for c in result.calls if c.function == name]
    assert call.status == "ok", result.table()


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full"])
def test_a_dtype_given_is_the_dtype_required(name: str) -> None:
    def program(xp: Any, x: Any) -> Any:
        args = (x.shape[0], 0.25) if name == "full" else (x.shape[0],)
        made = getattr(xp, name)(*args, dtype=xp.float64)
        return x + xp.astype(xp.sum(made) * 0.0, x.dtype)

    result = locate(program, np.ones(4, np.float32), candidate=_Adapter(also_given=True))
    (call,) = [c for c in result.calls if c.function == name]
    assert call.status == "wrong", result.table()
    assert "result dtype float32, but the reference gave float64" in (call.local.reason or "")


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "default"),
    [
        ("asarray", ([0.5, 1.5],), {}, True),
        ("asarray", (np.ones(3),), {}, False),  # follows its array's dtype
        ("asarray", ([np.ones(3)],), {}, False),
        ("zeros", (3,), {"dtype": np.float64}, False),
        ("empty", (3,), {}, True),
        ("empty_like", (np.ones(3),), {}, False),
        ("exp", (np.ones(3),), {}, False),
    ],
)
def test_only_a_creation_call_without_dtype_or_array_gives_the_default(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], default: bool
) -> None:
    assert gives_default_floating(name, args, kwargs) is default
