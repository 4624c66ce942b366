"""Issue 34 U1: a dtype spelled as a text argument cannot make replay allocate past its bound.

A 1.8 KB bundle calling ``asarray`` with ``kwargs={"dtype": {"text": "V400000000"}}`` made
``diffcheck replay b.json --max-memory 100M`` use 4.6 GB: the estimate counts 16 bytes an
element, and NumPy read the text as a 400 MB-element dtype. Every text argument that NumPy
would read as a dtype must now be a standard dtype's name; dtypes go through ``call.dtypes``.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundle_docs import document
from diffcheck.errors import BundleError
from diffcheck.search.bundle import bundle_from

from ._harness import assert_refused, cli

#: Texts NumPy reads as dtypes far wider than any the standard has, or as no standard one.
WIDE = ["V400000000", "(100000000,)f8", "S1000000000", "U100000000", "V8", "O", "M8[s]", "F"]


def _asarray(text: str, where: str) -> dict[str, object]:
    doc = document("asarray", args=[np.zeros(4, np.float32)])
    if where == "kwargs":
        doc["call"]["kwargs"] = {"dtype": {"text": text}}  # type: ignore[index]
    else:
        doc["call"]["positional"] = [{"text": text}]  # type: ignore[index]
    return doc


@pytest.mark.parametrize("where", ["kwargs", "positional"])
@pytest.mark.parametrize("text", WIDE)
def test_a_text_naming_a_foreign_dtype_is_refused_as_read(text: str, where: str) -> None:
    with pytest.raises(BundleError, match="names a NumPy dtype outside the standard's"):
        bundle_from(_asarray(text, where), where="b.json")


@pytest.mark.parametrize("text", ["V400000000", "(100000000,)f8"])
def test_the_cli_refuses_it_in_one_line_without_allocating(tmp_path: Path, text: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(_asarray(text, "kwargs")))
    size = path.stat().st_size
    tracemalloc.start()
    try:
        code, _, err = cli(["replay", "--in-process", "--max-memory", "100M", str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_refused(code, err)
    assert peak < 40 * size + 8 * 2**20, peak


@pytest.mark.parametrize("text", ["ortho", "backward", "left", "right", "fro", "nuc", "xy", "ij"])
def test_the_texts_the_standard_passes_still_read(text: str) -> None:
    bundle_from(_asarray(text, "kwargs"), where="b.json")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20))
def test_any_text_that_reads_is_no_wide_dtype(text: str) -> None:
    try:
        bundle_from(_asarray(text, "kwargs"), where="b.json")
    except BundleError:
        return
    try:
        dtype = np.dtype(text)
    except Exception:
        return
    assert dtype.itemsize <= 16
    assert dtype.kind in "biufc"
