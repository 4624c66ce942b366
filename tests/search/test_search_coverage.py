"""Every float elementwise function sees many distinct values in a default run.

A default run draws DEFAULT_API_EXAMPLES examples per function and then its sweep rows;
this runs the search's own loop (``search_function``, in-process, the same seed and
drawing code) for every elementwise function of the table that takes float32, against a
backend that agrees with NumPy, and reads the float32 coverage counts.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.search import DEFAULT_API_EXAMPLES
from diffcheck.search.arrays import Space
from diffcheck.search.isolation import calls_for
from diffcheck.search.runner import search_function
from diffcheck.search.table import _BINARY, _UNARY, recipes
from value_fakes import FaultyAdapter

_ALL = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_NOT_ELEMENTWISE = {"asarray", "matrix_transpose"}
ELEMENTWISE = sorted(
    name
    for name in {*_UNARY, *_BINARY, "pow", "remainder", "floor_divide"} - _NOT_ELEMENTWISE
    if "float32" in Space(_ALL).of(recipes()[name].category)
)


def _representatives() -> set[str]:
    """One function per way of drawing (its category and arity): the ones `nox -s tests`
    runs; the others draw through the same code with another function called on the values,
    and run in `nox -s tests_full` (the ``exhaustive`` marker)."""
    first: dict[tuple[str, str], str] = {}
    for name in ELEMENTWISE:
        recipe = recipes()[name]
        draw = getattr(recipe.draw, "__qualname__", repr(recipe.draw))
        first.setdefault((recipe.category, draw), name)
    return set(first.values())


REPRESENTATIVES = _representatives()


def test_the_list_holds_unary_and_binary_float_functions() -> None:
    for name in ("sqrt", "log", "acos", "atan2", "hypot", "pow", "copysign", "logaddexp"):
        assert name in ELEMENTWISE
    assert "divide" in ELEMENTWISE
    assert "bitwise_and" not in ELEMENTWISE


@pytest.mark.parametrize(
    "function",
    [
        pytest.param(name, marks=() if name in REPRESENTATIVES else pytest.mark.exhaustive)
        for name in ELEMENTWISE
    ],
)
def test_each_float_elementwise_function_draws_fifty_ordinary_float32_values(
    function: str,
) -> None:
    calls = calls_for(NumpyAdapter(), FaultyAdapter("none"), isolate=False, timeout_s=30.0)
    space = replace(Space(_ALL), function=function)
    result = search_function(
        function, recipes()[function], space, calls, examples=DEFAULT_API_EXAMPLES, seed=0
    )
    assert result.findings == []  # the candidate is NumPy itself: one round, then sweeps
    counts = result.coverage.counts("float32")
    assert counts["ordinary"] >= 50, counts
    assert counts["subnormal"] > 0, counts
    assert counts["nan"] + counts["inf"] + counts["zero"] > 0, counts


def test_a_sweep_row_that_fails_is_a_finding_reduced_to_its_failing_element() -> None:
    # One drawn example (Hypothesis' first: one element or none) rarely meets the fault;
    # the sweep rows do, and the finding keeps the one element that fails.
    calls = calls_for(NumpyAdapter(), FaultyAdapter("nan"), isolate=False, timeout_s=30.0)
    space = replace(Space(("float32", "float64")), function="log1p")
    result = search_function("log1p", recipes()["log1p"], space, calls, examples=1, seed=0)
    values = [f for f in result.findings if f.kind == "nan"]
    assert values, result.findings
    assert values[0].example.size() == 1
    assert values[0].verdict.blame is not None
    assert values[0].verdict.blame.side == "candidate"
