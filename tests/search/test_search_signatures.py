"""Calls are drawn as the standard's stubs state them: keywords, positional-only, axes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.search.arrays import Space
from diffcheck.search.recipes import SpecCall
from diffcheck.search.table import recipes
from diffcheck.values.signatures import (
    VERSIONS,
    axis_interval,
    default_version,
    functions_of,
    outside_documented_dtypes,
    signature,
)

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ("bool", "int8", "int32", "uint8", "int64", "float32", "float64", "complex64")


@pytest.mark.parametrize("version", ["2023.12", "2024.12"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_every_drawn_keyword_and_axis_is_one_the_stub_allows(version: str, data: Any) -> None:
    table = recipes()
    name = data.draw(st.sampled_from(sorted(n for n in table if signature(n, version))))
    example = data.draw(table[name].draw(Space(DTYPES, api_version=version)))
    sig = signature(name, version)
    assert sig is not None
    keywords = {*sig.keyword_only, *sig.positional_or_keyword}
    assert set(example.kwargs) <= keywords, (name, example.kwargs, keywords)
    assert set(example.dtypes) - {"#"} <= keywords | set(sig.positional_only)
    axis = example.kwargs.get("axis")
    arrays = [a for a in example.args if isinstance(a, np.ndarray)]
    if isinstance(axis, int) and arrays:
        ndim = min(a.ndim for a in arrays)
        interval = axis_interval(name, version, ndim)
        if interval is not None:
            assert interval[0] <= axis <= interval[1], (name, axis, interval)


def test_vecdot_is_drawn_with_a_negative_axis_only() -> None:
    assert axis_interval("vecdot", "2023.12", 3) == (-3, -1)
    assert axis_interval("linalg.vecdot", "2023.12", 2) == (-2, -1)
    assert axis_interval("sum", "2025.12", 3) == (-3, 2)  # [-N, N): half-open


def test_a_positional_only_dtype_is_passed_by_position() -> None:
    seen: list[Any] = []

    class Strict:
        int8, int16 = np.int8, np.int16

        @staticmethod
        def can_cast(from_: Any, to: Any, /) -> bool:
            seen.append((from_, to))
            return bool(np.can_cast(from_, to))

    call = SpecCall("can_cast", dtypes=(("to", "int8"), ("from_", "int16")))
    assert call(Strict()) is False  # int16 -> int8: in the stub's order, not the keys'
    assert seen == [(np.int16, np.int8)]


def test_refusing_an_input_the_standard_does_not_document_is_not_a_finding() -> None:
    assert outside_documented_dtypes("fft.fftshift", ["int8"], "2024.12") is not None
    assert outside_documented_dtypes("diff", ["bool"], "2024.12") is not None
    assert outside_documented_dtypes("diff", ["int8"], "2024.12") is None
    assert outside_documented_dtypes("exp", ["float32"], "2024.12") is None


def test_versions_are_read_from_the_data_and_the_default_follows_the_reference() -> None:
    assert {"2023.12", "2024.12", "2025.12"} <= set(VERSIONS)
    assert "isin" in functions_of("2025.12")
    assert "isin" not in functions_of("2024.12")
    assert "count_nonzero" not in functions_of("2023.12")
    assert default_version(np) == np.__array_api_version__
    assert default_version(object()) == VERSIONS[-1]


def test_the_checked_in_data_is_what_the_generator_writes(tmp_path: Path) -> None:
    source = Path("/work/.mirror/data-apis+array-api/repo")
    shipped = ROOT / "src/diffcheck/values/standard"
    if not source.exists():
        pytest.skip("the data-apis/array-api repository is not on this machine")
    tool = ROOT / "tools/standard_signatures.py"
    commit = json.loads((shipped / "2024.12.json").read_text())["source"].split()[1]
    args = [sys.executable, str(tool), str(source), str(tmp_path), "--commit", commit]
    subprocess.run(args, check=True, capture_output=True)
    for made in tmp_path.glob("*.json"):
        assert made.read_text() == (shipped / made.name).read_text(), made.name
