"""Each side is judged against the default dtypes it declares itself (MLX declares int32)."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.values import compare_values
from diffcheck.values.call import compare_call
from diffcheck.values.defaults import (
    COMMON_DEFAULTS,
    DefaultDtypes,
    declared_defaults,
    defaults_note,
)

NARROW = ("int8", "int16", "uint8", "uint16")
WIDE = ("int32", "uint32", "int64", "uint64")


class _Info:
    def default_dtypes(self, device: Any = None) -> dict[str, Any]:
        return {
            "real floating": np.dtype("float32"),
            "complex floating": np.dtype("complex64"),
            "integral": np.dtype("int32"),
            "indexing": np.dtype("int32"),
        }


def _int32_accumulator(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The standard's sum dtype under an int32 default, written out from its text."""
    if dtype.kind in "iu" and dtype.itemsize < 4:
        return np.dtype("int32" if dtype.kind == "i" else "uint32")
    return dtype


class Int32Namespace:
    """NumPy with a declared int32 default, following it (or, with ``wrong``, not)."""

    __name__ = "fake_int32_namespace"

    def __init__(self, wrong: str = "") -> None:
        self.wrong = wrong

    def __getattr__(self, name: str) -> Any:
        return getattr(cnp, name)

    def __array_namespace_info__(self) -> _Info:
        return _Info()

    def _accumulate(self, name: str, x: Any, **kwargs: Any) -> Any:
        dtype = np.asarray(x).dtype
        target = dtype if self.wrong == name else _int32_accumulator(dtype)
        return getattr(cnp, name)(x, dtype=target, **kwargs)

    def sum(self, x: Any, /, **kwargs: Any) -> Any:
        return self._accumulate("sum", x, **kwargs)

    def prod(self, x: Any, /, **kwargs: Any) -> Any:
        return self._accumulate("prod", x, **kwargs)

    def cumulative_sum(self, x: Any, /, **kwargs: Any) -> Any:
        return self._accumulate("cumulative_sum", x, **kwargs)

    def count_nonzero(self, x: Any, /, **kwargs: Any) -> Any:
        result = np.asarray(cnp.count_nonzero(x, **kwargs))
        return result.astype("int64" if self.wrong == "count_nonzero" else "int32")

    def argmax(self, x: Any, /, **kwargs: Any) -> Any:
        result = np.asarray(cnp.argmax(x, **kwargs))
        return result.astype("uint32" if self.wrong == "argmax" else "int32")


class Int32Adapter(NumpyAdapter):
    name = "int32-defaults"
    namespace_label = "fake_int32_namespace"

    def __init__(self, wrong: str = "") -> None:
        super().__init__(None)
        self._namespace = Int32Namespace(wrong)

    @property
    def spec(self) -> str:
        return f"int32-defaults[{self.namespace_label}]"

    def namespace(self) -> Any:
        return self._namespace


def test_declared_defaults_are_read_from_the_inspection_api() -> None:
    assert declared_defaults(Int32Namespace()) == DefaultDtypes(
        "int32", "int32", "float32", "complex64", declared=True
    )
    assert declared_defaults(object()) == COMMON_DEFAULTS
    assert declared_defaults(cnp).integral == "int64"


def test_the_run_level_note_is_said_only_when_defaults_differ() -> None:
    mine = declared_defaults(Int32Namespace())
    note = defaults_note(COMMON_DEFAULTS, mine)
    assert note is not None
    assert "int32" in note
    assert "int64" in note
    assert defaults_note(mine, mine) is None


@settings(max_examples=25, deadline=None)
@given(
    function=st.sampled_from(["sum", "prod", "cumulative_sum", "count_nonzero", "argmax"]),
    dtype=st.sampled_from(NARROW + WIDE),
    values=st.lists(st.integers(0, 5), min_size=1, max_size=6),
)
def test_each_side_following_its_own_declared_default_conforms(
    function: str, dtype: str, values: list[int]
) -> None:
    x = np.asarray(values, dtype)
    verdict = compare_call(function, [x], NumpyAdapter(), Int32Adapter())
    assert verdict.passed, str(verdict)


@settings(max_examples=25, deadline=None)
@given(
    function=st.sampled_from(["sum", "cumulative_sum", "count_nonzero", "argmax"]),
    dtype=st.sampled_from(NARROW),
    values=st.lists(st.integers(0, 5), min_size=1, max_size=6),
)
def test_a_side_breaking_its_own_declared_default_is_found_and_blamed(
    function: str, dtype: str, values: list[int]
) -> None:
    x = np.asarray(values, dtype)
    verdict = compare_call(function, [x], NumpyAdapter(), Int32Adapter(wrong=function))
    assert verdict.kind == "dtype", str(verdict)
    assert verdict.blame is not None
    assert verdict.blame.side == "candidate", verdict.blame


def test_integer_overflow_of_the_narrower_default_is_not_a_value_finding() -> None:
    # int64 reference sum 2**31 + 1; an int32 side wraps: the standard leaves overflow open.
    ref = np.asarray(2**31 + 1, np.int64)
    wrapped = np.asarray(2**31 + 1, np.int64).astype(np.int32)
    verdict = compare_values(
        ref, wrapped, function="sum", expected_dtype="int64", candidate_expected_dtype="int32"
    )
    assert verdict.passed, str(verdict)
    wrong = compare_values(
        np.asarray(7, np.int64),
        np.asarray(8, np.int32),
        function="sum",
        expected_dtype="int64",
        candidate_expected_dtype="int32",
    )
    assert wrong.kind == "value", str(wrong)


def test_a_candidate_returning_the_references_default_against_its_own_fails() -> None:
    verdict = compare_values(
        np.asarray(3, np.int64),
        np.asarray(3, np.int64),
        function="count_nonzero",
        expected_dtype="int64",
        candidate_expected_dtype="int32",
    )
    assert verdict.kind == "dtype"
    assert "candidate" in (verdict.reason or "")


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_mlx_sums_of_32_bit_integers_are_not_findings(dtype: str) -> None:
    pytest.importorskip("mlx.core", reason="the candidate is MLX")
    from diffcheck.adapters import resolve

    x = np.arange(6, dtype=dtype)
    for function in ("count_nonzero", "sum", "cumulative_sum", "cumulative_prod"):
        verdict = compare_call(function, [x], NumpyAdapter(), resolve("mlx:cpu"))
        assert verdict.passed, f"{function}: {verdict}"


def test_an_api_search_says_once_that_the_sides_declare_different_defaults() -> None:
    from diffcheck.search.api import run_notes

    (note,) = run_notes(NumpyAdapter(), Int32Adapter())
    assert "candidate declared integral int32" in note
    assert run_notes(NumpyAdapter(), NumpyAdapter()) == ()


class _Float32Fft:
    """``fft.fftfreq``/``rfftfreq`` in the declared float32 default, ``off`` relatively off."""

    def __init__(self, off: float) -> None:
        self.off = off

    def _shifted(self, values: Any) -> Any:
        return np.asarray(np.asarray(values) * (1.0 + self.off), np.float32)

    def fftfreq(self, n: int, /, *, d: float = 1.0) -> Any:
        return self._shifted(np.fft.fftfreq(n, d))

    def rfftfreq(self, n: int, /, *, d: float = 1.0) -> Any:
        return self._shifted(np.fft.rfftfreq(n, d))


class Float32FftNamespace(Int32Namespace):
    """A namespace declaring float32 defaults whose ``fft`` follows them."""

    def __init__(self, off: float = 0.0) -> None:
        super().__init__()
        self.fft = _Float32Fft(off)


class Float32FftAdapter(Int32Adapter):
    def __init__(self, off: float = 0.0) -> None:
        super().__init__()
        self._namespace = Float32FftNamespace(off)


@pytest.mark.parametrize("function", ["fft.fftfreq", "fft.rfftfreq"])
def test_a_call_without_array_inputs_is_held_to_each_sides_default_float(function: str) -> None:
    # No array input: NumPy's float64 and a float32-default side's float32 both conform,
    # and are compared in float32 (float64's bound would fail correctly rounded float32).
    right = compare_call(function, [7], NumpyAdapter(), Float32FftAdapter(), kwargs={"d": 0.1})
    assert right.passed, str(right)
    wrong = compare_call(
        function, [7], NumpyAdapter(), Float32FftAdapter(off=1e-2), kwargs={"d": 0.1}
    )
    assert wrong.kind == "value", str(wrong)
    # A side returning the other's default, not its own, is a dtype finding.
    swapped = compare_call(function, [7], Float32FftAdapter(), NumpyAdapter(), kwargs={"d": 0.1})
    assert swapped.passed, str(swapped)
    both64 = compare_call(function, [7], NumpyAdapter(), Int32Adapter(), kwargs={"d": 0.1})
    assert both64.kind == "dtype", str(both64)
