"""Each dtype of a function's category, and each value of a few-valued keyword, is called.

Hypothesis draws dtypes in runs and the simplest keyword choice first, so at 3 examples a
function may never see ``uint16``, ``sum(x, dtype=uint16)``, a fractional ``correction``
or ``asarray(x, copy=False)``: torch:cpu's ``sum_cpu`` refusal and ``std``'s "float
correction" refusal, and MLX's "Unable to avoid copy", were found by a peer's suite and
not by the search. After the search, the function's first example is tried once in every
dtype not drawn (with ``dtype=`` naming it too, where the function takes one) and with
every undrawn value of its few-valued keywords.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.search import search_api
from diffcheck.search.dtype_rows import dtype_rows, keyword_rows, keywords_of, row_key
from diffcheck.search.recipes import Example
from value_fakes import FaultyAdapter


class _TorchLike:
    """NumPy with the refusals the peer's suite found in torch:cpu and MLX."""

    __name__ = "fake_torch_like"

    def __getattr__(self, name: str) -> Any:
        return getattr(cnp, name)

    def sum(self, x: Any, /, *, dtype: Any = None, **kwargs: Any) -> Any:
        if dtype is not None and np.dtype(dtype).kind == "u" and np.dtype(dtype).itemsize > 1:
            raise NotImplementedError(f'"sum_cpu" not implemented for {np.dtype(dtype).name}')
        return cnp.sum(x, dtype=dtype, **kwargs)

    def std(self, x: Any, /, *, correction: Any = 0.0, **kwargs: Any) -> Any:
        if float(correction) != int(correction):
            raise NotImplementedError("float correction in std() is not yet supported")
        return cnp.std(x, correction=correction, **kwargs)

    def asarray(self, obj: Any, /, *, copy: Any = None, **kwargs: Any) -> Any:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return cnp.asarray(obj, copy=copy, **kwargs)


class _TorchLikeAdapter(FaultyAdapter):
    def namespace(self) -> Any:
        return _TorchLike()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_refusals_a_peer_found_are_findings_at_three_examples(
    tmp_path: Path, seed: int
) -> None:
    result = search_api(_TorchLikeAdapter(), functions=["sum", "std", "asarray"], examples=3,
                        seed=seed, out=tmp_path / "out", isolate=False, budget_s=None)  # fmt: skip
    raised = {(f.function, f.dtype): f for f in result.document.findings if f.kind == "raises"}
    assert ("sum", "uint16") in raised, sorted(raised)
    assert "sum_cpu" in raised[("sum", "uint16")].reason
    assert raised[("sum", "uint16")].blame == "candidate"
    std = [f for (name, _), f in raised.items() if name == "std"]
    assert std, sorted(raised)
    assert "float correction" in std[0].reason
    asarray = [f for (name, _), f in raised.items() if name == "asarray"]
    assert asarray, sorted(raised)
    assert asarray[0].blame == "candidate", asarray[0]


def test_dtype_rows_cast_exactly_else_fill_with_ones() -> None:
    first = Example((np.asarray([0.5, 2.0], np.float32),), {"axis": 0})
    rows = {
        row_key(r): r for r in dtype_rows(first, {row_key(first)}, ("float32", "float64", "int8"))
    }
    assert sorted(rows) == ["float64;", "int8;"]
    np.testing.assert_array_equal(rows["float64;"].args[0], [0.5, 2.0])  # exact
    np.testing.assert_array_equal(rows["int8;"].args[0], [1, 1])  # 0.5 is no int8: ones
    assert rows["int8;"].kwargs == {"axis": 0}


def test_dtype_rows_pass_the_dtype_keyword_where_the_function_takes_one() -> None:
    first = Example((np.asarray([3], np.uint8),), dtypes={"dtype": "uint64"})
    drawn = {row_key(first)}
    rows = [row_key(r) for r in dtype_rows(first, drawn, ("uint8", "uint16"), keyword=True)]
    assert rows == ["uint8;", "uint8;dtype=uint8", "uint16;", "uint16;dtype=uint16"]
    assert [row_key(r) for r in dtype_rows(first, drawn, ("uint8", "uint16"))] == [
        "uint8;",
        "uint16;",
    ]
    # A dtype the example names otherwise (astype's target) draws its own way: no rows.
    cast = Example((np.asarray([3], np.uint8),), dtypes={"#": "int16"})
    assert dtype_rows(cast, set(), ("uint8", "int16")) == []


def test_keyword_rows_try_each_value_no_draw_passed() -> None:
    first = Example((np.asarray([1.0]),), {"axis": 0})
    drawn = keywords_of(Example((np.asarray([1.0]),), {"copy": True}))
    rows = keyword_rows(first, drawn, (("copy", (True, False)),))
    assert [r.kwargs for r in rows] == [{"axis": 0, "copy": False}]
    assert keyword_rows(None, set(), (("copy", (False,)),)) == []


def test_a_cast_that_wraps_around_is_not_exact() -> None:
    first = Example((np.asarray([-128], np.int8),))
    (row,) = dtype_rows(first, {row_key(first)}, ("int8", "uint8"))
    np.testing.assert_array_equal(row.args[0], [1])  # not 128: -128 is no uint8


def test_only_functions_whose_arrays_are_all_operands_get_dtype_rows() -> None:
    from diffcheck.search.table import recipes

    table = recipes()
    assert all(table[name].dtype_rows for name in ("sqrt", "add", "sum", "asarray", "std"))
    # indices, a condition, an exponent: casting them changes the call's meaning
    assert not any(table[name].dtype_rows for name in ("take", "take_along_axis", "where"))
    assert not any(table[name].dtype_rows for name in ("pow", "searchsorted"))
    # a divisor kept nonzero stays nonzero (an exact cast, or ones)
    assert all(table[name].dtype_rows for name in ("floor_divide", "remainder"))
    assert table["sum"].dtype_keyword
    assert not table["mean"].dtype_keyword


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    divisor=st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != 0.0),
    dividend=st.floats(allow_nan=False, allow_infinity=False),
    source=st.sampled_from(["float64", "float32", "int64", "int8", "uint8"]),
)
def test_a_dtype_row_never_makes_a_divisor_zero(
    divisor: float, dividend: float, source: str
) -> None:
    with np.errstate(all="ignore"):
        x1 = np.asarray([dividend]).astype(source)
        x2 = np.asarray([divisor]).astype(source)
    if x2[0] == 0:  # the draw itself is nonzero in its own dtype
        return
    first = Example((x1, x2))
    targets = ("int8", "int16", "uint8", "uint16", "uint64", "float16", "float32", "float64")
    for row in dtype_rows(first, {row_key(first)}, targets):
        assert row.args[1][0] != 0, (divisor, source, row.args[1].dtype)


class _NoUint16FloorDivide:
    """NumPy whose floor_divide refuses uint16, as torch:cpu's "div_floor_cpu" does."""

    __name__ = "fake_torch_floor_divide"

    def __getattr__(self, name: str) -> Any:
        return getattr(cnp, name)

    def floor_divide(self, x1: Any, x2: Any, /) -> Any:
        if "uint16" in (np.asarray(x1).dtype.name, np.asarray(x2).dtype.name):
            raise NotImplementedError("\"div_floor_cpu\" not implemented for 'UInt16'")
        return cnp.floor_divide(x1, x2)


class _NoUint16Adapter(FaultyAdapter):
    def namespace(self) -> Any:
        return _NoUint16FloorDivide()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_divisors_dtype_refusal_is_found_at_three_examples(tmp_path: Path, seed: int) -> None:
    result = search_api(_NoUint16Adapter(), functions=["floor_divide"], examples=3, seed=seed,
                        out=tmp_path / "out", isolate=False, budget_s=None)  # fmt: skip
    raised = [f for f in result.document.findings if f.kind == "raises"]
    assert any("uint16" in f.dtype and "div_floor_cpu" in f.reason for f in raised), raised
    assert all(f.blame == "candidate" for f in raised), raised
