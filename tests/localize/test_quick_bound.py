"""The quick bound check agrees with the values model wherever it decides."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffcheck.localize._arrays import within
from diffcheck.values.bounds import bound_for
from diffcheck.values.compare import compare_values
from diffcheck.values.model import Bound
from diffcheck.values.ulp import round_to_bfloat16
from ulp_steps import FLOAT_DTYPES, nudge


@settings(max_examples=300, deadline=None)
@given(
    dtype=st.sampled_from(FLOAT_DTYPES),
    data=st.data(),
    function=st.sampled_from(["exp", "add", "matmul", "negative", "sum", "sum-atol", None]),
    special=st.sampled_from([None, np.nan, np.inf, -0.0, 0.0]),
)
def test_a_quick_answer_is_the_models_answer(
    dtype: str, data: st.DataObject, function: str | None, special: float | None
) -> None:
    size = data.draw(st.integers(1, 40))
    storage = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    finite = st.floats(-1e4, 1e4, width=16 if dtype == "float16" else 32)
    values = data.draw(hnp.arrays(storage, size, elements=finite))
    steps = data.draw(hnp.arrays(np.int64, size, elements=st.integers(-3, 3)))
    candidate = nudge(values, steps)
    if special is not None:
        candidate[data.draw(st.integers(0, size - 1))] = special
    if dtype == "bfloat16":
        values, candidate = round_to_bfloat16(values), round_to_bfloat16(candidate)
        expected: object = (values, "bfloat16")
        got: object = (candidate, "bfloat16")
    else:
        expected, got = values, candidate
    if function == "matmul":
        bound: Bound = bound_for(None, dtype)
    elif function == "sum-atol":  # a reduction's ULPs, or an absolute error
        bound = bound_for("sum", dtype, reduced=1, magnitude=float(data.draw(finite)))
    else:
        bound = bound_for(function, dtype)
    quick = within(expected, got, bound)
    if quick is None:
        return
    name = "sum" if function == "sum-atol" else function
    verdict = compare_values(expected, got, function=name, bound=bound)
    assert quick == verdict.passed, (bound, verdict.reason)


def test_the_quick_check_decides_both_ways_and_defers_what_it_cannot_judge() -> None:
    x = np.linspace(0.5, 2.0, 64, dtype=np.float32)
    bound = bound_for("exp", "float32")  # 2 ULP
    assert within(x, nudge(x, np.full(64, 2)), bound) is True
    assert within(x, nudge(x, np.full(64, 3)), bound) is False
    with_nan = x.copy()
    with_nan[5] = np.nan
    assert within(x, with_nan, bound) is None
    reduction = bound_for("sum", "float32", reduced=1)  # 2 ULP, no absolute allowance
    assert within(x, nudge(x, np.full(64, 2)), reduction) is True
    assert within(x, nudge(x, np.full(64, 3)), reduction) is False
    exact = bound_for("negative", "float32")
    assert within(x, x.copy(), exact) is True
    assert within(x, nudge(x, np.full(64, 1)), exact) is False


def test_dtype_names_are_remembered_without_comparing_two_libraries_dtypes() -> None:
    import warnings

    import pytest

    from diffcheck.localize._arrays import dtype_of

    strict = pytest.importorskip("array_api_strict")
    assert dtype_of(np.dtype("float32")) == "float32"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # array_api_strict warns when its dtype meets NumPy's
        assert dtype_of(strict.float32) == "float32"
        assert dtype_of(strict.float32) == "float32"
