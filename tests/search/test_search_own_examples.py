"""Each dtype of a finding keeps its own minimal example.

A finding's dtypes were joined from other examples findings.json did not keep: "cos
float64, float32" showed cos(1.0), which is right in float32 (its float32 failure was
cos(-4.712389)). Now a dtype joined by another example keeps that example, and both
findings.json and the page show it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from diffcheck.search import search_api
from diffcheck.search.isolation import InProcess
from diffcheck.search.runner import _cast
from run_fakes import Misbehaving
from value_fakes import FaultyAdapter


def test_a_joined_dtype_shows_the_example_that_fails_in_it(tmp_path: Path) -> None:
    # exp is wrong in float64 everywhere, in float32 only from 2 up: seed 1 finds float64
    # first (shrunk to a value below 2) and joins float32 by float32's own example.
    candidate = Misbehaving("float64-everywhere")
    result = search_api(candidate, functions=["exp"], examples=20, seed=1, out=tmp_path / "o")
    joined = [f for f in result.findings if f.dtype == "float64" and "float32" in f.dtypes]
    assert joined, [(f.dtype, f.dtypes) for f in result.findings]
    finding = joined[0]
    own = dict(finding.own_examples)
    assert set(own) == {"float32"}
    calls = InProcess(FaultyAdapter(), candidate)
    assert not calls.judge("exp", own["float32"]).passed  # the shown example fails there
    cast = _cast(finding.example, "float32")
    assert cast is None or calls.judge("exp", cast).passed  # the main one alone would not
    entry = next(e for e in result.document.findings if e.dtype == "float64" and e.kind == "value")
    assert "; float32: float32" in entry.example
    page = (tmp_path / "o" / "index.html").read_text()
    assert "minimal inputs in float32" in page


def test_a_dtype_grouped_by_a_cast_of_the_example_needs_no_own_example(tmp_path: Path) -> None:
    result = search_api(
        Misbehaving("float64-everywhere"), functions=["exp"], examples=20, seed=3,
        out=tmp_path / "o",
    )  # fmt: skip
    grouped = [f for f in result.findings if f.dtype == "float32" and "float64" in f.dtypes]
    assert grouped
    assert grouped[0].own_examples == ()
    cast = _cast(grouped[0].example, "float64")
    assert cast is not None
    assert (
        not InProcess(FaultyAdapter(), Misbehaving("float64-everywhere")).judge("exp", cast).passed
    )
    assert np.asarray(grouped[0].example.args[0]).dtype == np.float32
