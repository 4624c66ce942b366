"""The two ways of running the search's calls give the same verdict.

The isolated mode judges each example in a worker process, which receives the example
pickled: every array an owned, C-ordered copy. The in-process mode used to call on the
drawn arrays themselves (views of Hypothesis' buffers), and a backend whose answer depends
on more than the elements' values answered the two differently: MLX's ``prod`` and ``all``
of an empty array passed in the worker and failed in-process, and findings.json of an
isolated run listed those declared divergences as no longer reproducing (seed 1's ``prod``
hung in-process and returned in the worker). Both modes now call on the copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diffcheck.search.arrays import Space
from diffcheck.search.isolation import CallFailure, InProcess, Isolated
from diffcheck.search.recipes import Example
from diffcheck.search.table import recipes
from diffcheck.values.model import ValueVerdict
from value_fakes import FaultyAdapter, FaultyNamespace

_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_DTYPES += ("float32", "float64", "complex64")


class _ReadsItsBuffer(FaultyNamespace):
    """``prod`` of an empty array answers from the memory around it, as MLX's does: the
    empty product of a view (a drawn array) is 0, of an array owning its data 1."""

    def __init__(self) -> None:
        super().__init__("none")

    def prod(self, x: Any, /, **kwargs: Any) -> Any:
        result = np.asarray(super().__getattr__("prod")(x, **kwargs))
        base = np.asarray(x).base
        if np.asarray(x).size == 0 and isinstance(base, np.ndarray) and base.size:
            return np.zeros_like(result)
        return result


class BufferReader(FaultyAdapter):
    def __init__(self) -> None:
        super().__init__("none")
        self._namespace = _ReadsItsBuffer()

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), ())

    @property
    def spec(self) -> str:
        return "buffer-reader"


def _same(first: ValueVerdict | CallFailure, second: ValueVerdict | CallFailure) -> tuple[Any, ...]:
    def key(answer: ValueVerdict | CallFailure) -> tuple[Any, ...]:
        if isinstance(answer, CallFailure):
            return (answer.kind,)
        side = answer.blame.side if answer.blame is not None else None
        return (answer.passed, answer.kind, side)

    return key(first), key(second)


@pytest.fixture(scope="module")
def buffer_modes():  # type: ignore[no-untyped-def]
    reference, candidate = FaultyAdapter(), BufferReader()
    isolated = Isolated(reference, candidate, timeout_s=30)
    yield InProcess(reference, candidate), isolated
    isolated.close()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(_DTYPES),
    st.sampled_from([(0,), (2, 0), (0, 3), (3, 0, 2)]),
    st.sampled_from([None, 0, -1]),
    st.booleans(),
)
def test_a_view_and_its_copy_give_one_verdict_in_both_modes(
    buffer_modes: tuple[InProcess, Isolated],
    dtype: str,
    shape: tuple[int, ...],
    axis: int | None,
    keepdims: bool,
) -> None:
    in_process, isolated = buffer_modes
    base = np.zeros((4, *shape[1:]) if shape[0] == 0 else (*shape[:-1], 4), dtype=dtype)
    view = base[:0] if shape[0] == 0 else base[..., :0]  # an empty view of a larger buffer
    assert view.base is not None
    assert view.size == 0
    kwargs: dict[str, Any] = {"keepdims": keepdims}
    if axis is not None:
        kwargs["axis"] = axis
    example = Example((view,), kwargs)
    here, there = _same(in_process.judge("prod", example), isolated.judge("prod", example))
    assert here == there


def _declared_functions(*, empty_only: bool) -> list[str]:
    from diffcheck.adapters import resolve
    from diffcheck.adapters.api_inputs import EMPTY_INPUT, EMPTY_REDUCTION

    declared = resolve("mlx:cpu").known_api_divergences()
    chosen = [d for d in declared if not empty_only or d.covers in (EMPTY_INPUT, EMPTY_REDUCTION)]
    return sorted({d.function for d in chosen})


def _compare_one(
    function: str,
    strategy: Any,
    examples: int,
    modes: tuple[InProcess, Isolated],
    differing: list[tuple[str, str, Any, Any]],
) -> None:
    from hypothesis import seed as hypothesis_seed

    in_process, isolated = modes

    @hypothesis_seed(1)
    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def run(example: Example) -> None:
        there = isolated.judge(function, example)
        if isinstance(there, CallFailure):
            return  # a crash or hang in the worker would end this process
        first, second = _same(in_process.judge(function, example), there)
        if first != second:
            differing.append((function, example.input_dtypes(), first, second))

    run()


def _compare_modes_on_mlx(functions: list[str], examples: int) -> None:
    from diffcheck.adapters import resolve

    reference, candidate = resolve("numpy"), resolve("mlx:cpu")
    in_process = InProcess(reference, candidate)
    isolated = Isolated(reference, candidate, timeout_s=10)
    modes = (in_process, isolated)
    table = recipes()
    differing: list[tuple[str, str, Any, Any]] = []
    try:
        for function in functions:
            space = Space(dtypes=_DTYPES, function=function)
            _compare_one(function, table[function].draw(space), examples, modes, differing)
    finally:
        isolated.close()
    assert not differing


@pytest.mark.exhaustive  # minutes under load; an in-process MLX hang would stall the run
def test_mlx_empty_reductions_declared_give_one_verdict_in_both_modes() -> None:
    pytest.importorskip("mlx.core", reason="the candidate is mlx:cpu")
    _compare_modes_on_mlx(_declared_functions(empty_only=True), examples=12)


@pytest.mark.exhaustive
def test_every_mlx_declared_function_gives_one_verdict_in_both_modes() -> None:
    pytest.importorskip("mlx.core", reason="the candidate is mlx:cpu")
    _compare_modes_on_mlx(_declared_functions(empty_only=False), examples=6)
