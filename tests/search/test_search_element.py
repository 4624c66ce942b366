"""A finding of an elementwise function is cut to the element that fails, where it still fails.

Hypothesis shrinks values but not always shapes; here the recipes of ``sin`` and ``cos`` draw
3x4 arrays only, so the shrunk example keeps that shape and only the element reduction can
cut it. The planted ``sin`` fault (3 ULP off above 0.5) shows on one element alone; the
planted ``cos`` fault (a shift by the whole array's sum) does not, and keeps its shape.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.search import search_api
from diffcheck.search.bundle import read_bundle
from diffcheck.search.element import ELEMENTWISE, to_element
from diffcheck.search.finding_text import repro
from diffcheck.search.isolation import calls_for
from diffcheck.search.recipes import Example, Recipe, custom
from diffcheck.search.record import example_of
from diffcheck.search.replay import replay_bundle
from diffcheck.values.model import ValueVerdict
from value_fakes import FaultyAdapter, FaultyNamespace

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _judge(fault: str, function: str, candidate: FaultyAdapter | None = None) -> Any:
    calls = calls_for(
        NumpyAdapter(), candidate or FaultyAdapter(fault), isolate=False, timeout_s=30.0
    )
    return lambda example: calls.judge(function, example)


def _failing(judge: Any, example: Example) -> ValueVerdict:
    verdict = judge(example)
    assert isinstance(verdict, ValueVerdict), verdict
    assert not verdict.passed, verdict
    return verdict


def _three_by_four(at: tuple[int, int], value: float, dtype: str = "float32") -> np.ndarray:
    x = np.zeros((3, 4), dtype)
    x[at] = value
    return x


def test_one_wrong_element_of_a_3x4_array_is_cut_to_that_element_0d() -> None:
    judge = _judge("sin-above-half", "sin")
    example = Example((_three_by_four((1, 2), 0.75),))
    got = to_element("sin", example, _failing(judge, example), judge)
    assert got is not None
    (x,) = got[0].args
    assert x.shape == ()
    assert x.dtype == np.float32
    assert float(x) == 0.75
    assert got[1].kind == "value"
    assert got[1].blame is not None
    assert got[1].blame.side == "candidate"


def test_broadcast_inputs_are_cut_to_the_elements_that_meet() -> None:
    # multiply's fault drops the sign of a zero product: only x1[2, 1] * x2[1] shows it.
    judge = _judge("signed-zero", "multiply")
    x1 = np.ones((3, 4), np.float64)
    x1[2, 1] = 0.0
    x2 = np.array([2.0, -3.0, 5.0, 7.0])
    example = Example((x1, x2))
    got = to_element("multiply", example, _failing(judge, example), judge)
    assert got is not None
    a, b = got[0].args
    assert (a.shape, b.shape) == ((), ())
    assert (float(a), float(b)) == (0.0, -3.0)
    assert got[1].kind == "signed-zero"


def test_a_fault_of_the_whole_array_keeps_the_example() -> None:
    judge = _judge("cos-sum-shift", "cos")
    x = np.full((3, 4), 0.1, np.float32)
    x[0, 0] = 3.0e7  # the sum dwarfs every 0.1: (0.1 - s) + s is not 0.1
    example = Example((x,))
    assert _failing(judge, example).kind == "value"
    assert to_element("cos", example, _failing(judge, example), judge) is None


class _NoZeroD(FaultyNamespace):
    """The sin fault, on a backend that refuses 0-d input."""

    def sin(self, x: Any, /) -> Any:
        if np.ndim(x) == 0:
            raise ValueError("0-d input is not supported")
        return super().sin(x)


def test_a_backend_that_refuses_0d_input_keeps_the_one_element_array() -> None:
    candidate = FaultyAdapter("sin-above-half")
    candidate._namespace = _NoZeroD("sin-above-half")
    judge = _judge("", "sin", candidate)
    example = Example((_three_by_four((2, 3), 1.5),))
    got = to_element("sin", example, _failing(judge, example), judge)
    assert got is not None
    (x,) = got[0].args
    assert x.shape == (1,)
    assert float(x[0]) == 1.5


def test_a_function_that_is_not_elementwise_is_left_alone() -> None:
    assert "sum" not in ELEMENTWISE
    assert "sin" in ELEMENTWISE
    calls: list[Example] = []

    def judge(example: Example) -> ValueVerdict:
        calls.append(example)
        raise AssertionError("not judged")

    sin = Example((_three_by_four((0, 0), 0.75),))
    verdict = _failing(_judge("sin-above-half", "sin"), sin)  # a failing verdict to pass on
    assert to_element("sum", Example((np.ones((3, 4), np.float32),)), verdict, judge) is None
    assert calls == []


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    data=st.data(),
    value=st.sampled_from([0.625, 0.75, 1.5, 3.0, 100.25]),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_any_shape_is_cut_to_the_planted_element(
    shape: tuple[int, ...], data: Any, value: float, dtype: str
) -> None:
    judge = _judge("sin-above-half", "sin")
    at = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
    x = np.zeros(shape, dtype)
    x[at] = value
    example = Example((x,))
    got = to_element("sin", example, _failing(judge, example), judge)
    assert got is not None
    (cut,) = got[0].args
    assert cut.shape == ()
    assert cut.dtype == x.dtype
    assert float(cut) == value


def _fixed_shape(category: str) -> Recipe:
    """A unary recipe whose arrays are always 3x4: Hypothesis shrinks only the values."""

    def body(draw: Any, space: Any) -> Example:
        dtype = draw(space.dtype(category))
        return Example((draw(space.array(dtype, (3, 4))),))

    return custom(category, body)


@pytest.fixture
def fixed_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    from diffcheck.search import session

    table = session._recipes()
    fixed = {"sin": _fixed_shape("floating"), "cos": _fixed_shape("floating")}
    monkeypatch.setattr(session, "_recipes", lambda: {**table, **fixed})


def _search(tmp_path: Path, fault: str, function: str) -> Path:
    out = tmp_path / fault
    search_api(
        FaultyAdapter(fault), functions=[function], examples=30, seed=1, out=out, isolate=False
    )
    return out


def test_the_search_shows_the_reduced_input_everywhere(tmp_path: Path, fixed_shapes: None) -> None:
    from diffcheck.cli.api_search_command import _finding
    from diffcheck.search.findings import FindingsDocument

    out = _search(tmp_path, "sin-above-half", "sin")
    document = FindingsDocument.model_validate_json((out / "findings.json").read_text())
    values = [e for e in document.findings if e.kind == "value"]
    assert values, document.findings
    for entry in values:
        # findings.json: one 0-d float above 0.5 (the example text names the shape)
        assert entry.example.startswith(f"{entry.dtype}[] "), entry.example
        bundle = read_bundle(out / entry.bundle)
        (x,) = example_of(bundle).args
        assert x.shape == ()
        assert float(x) > 0.5
        raw = json.loads((out / entry.bundle).read_text())
        assert raw["call"]["args"][0]["array"]["shape"] == []
        line = repro(bundle)
        assert line == f"xp.sin(xp.asarray({float(x)!r}, dtype=xp.{entry.dtype}))"
        console = _finding(entry, out)
        assert console[1] == f"    input:  {entry.example}"
        assert console[3].endswith(line)
        again = replay_bundle(
            out / entry.bundle,
            reference=NumpyAdapter(),
            candidate=FaultyAdapter("sin-above-half"),
            isolate=False,
        )
        assert again.status == "reproduces", again.reason


def test_a_search_finding_of_the_whole_array_keeps_its_shape(
    tmp_path: Path, fixed_shapes: None
) -> None:
    out = _search(tmp_path, "cos-sum-shift", "cos")
    document = json.loads((out / "findings.json").read_text())
    assert document["findings"], document
    for entry in document["findings"]:
        (x,) = example_of(read_bundle(out / entry["bundle"])).args
        assert x.shape == (3, 4), entry["example"]
        assert "[3, 4]" in entry["example"]


def test_a_sweep_row_is_cut_like_any_other_example() -> None:
    # The sweep's rows (48 values on one axis) pass through the same reduction.
    from diffcheck.search.arrays import Space
    from diffcheck.search.runner import search_function
    from diffcheck.search.table import recipes

    calls = calls_for(NumpyAdapter(), FaultyAdapter("nan"), isolate=False, timeout_s=30.0)
    space = replace(Space(("float32", "float64")), function="log1p")
    result = search_function("log1p", recipes()["log1p"], space, calls, examples=1, seed=0)
    nans = [f for f in result.findings if f.kind == "nan"]
    assert nans, result.findings
    assert all(f.example.args[0].shape == () for f in nans), nans
