"""A bundle calls only a function of the standard, by name: never an attribute path.

The name used to be resolved with ``getattr`` on the namespace, so ``__loader__.set_data``
wrote any file and ``__loader__.get_data`` read one. Now it is looked up in the standard's
list; these tests feed it every other kind of name, and every attribute NumPy has that the
standard does not name (listed from NumPy itself, not by hand).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import array_api_compat.numpy as compat_numpy
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundle_docs import document
from diffcheck.cli import main
from diffcheck.errors import BundleError
from diffcheck.search.bundle import BUNDLE_FUNCTIONS, Bundle, bundle_from
from diffcheck.search.replay import replay_bundle

ALLOWED = BUNDLE_FUNCTIONS[1]


def _loader_bundle(tmp_path: Path, function: str) -> Path:
    doc = document(
        function,
        args=[],
        kwargs={"path": "planted/dir/file.txt", "data": np.frombuffer(b"written\n", np.uint8)},
    )
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("function", ["__loader__.set_data", "__loader__.get_data"])
def test_a_loader_bundle_is_refused_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    function: str,
) -> None:
    path = _loader_bundle(tmp_path, function)
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert "is not a function of the Array API standard" in lines[0]
    assert "Traceback" not in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle.json"]


def test_an_unvalidated_bundle_is_refused_by_replay_too(tmp_path: Path) -> None:
    # A Bundle built without validation (model_construct) is checked again before the call.
    checked = bundle_from(document("exp"), where="x")
    forged = Bundle.model_construct(**{**dict(checked), "function": "__loader__.set_data"})
    with pytest.raises(BundleError, match="not a function of the Array API standard"):
        replay_bundle(tmp_path / "b.json", bundle=forged)


_HOSTILE = [
    "__loader__",
    "__loader__.set_data",
    "__spec__.loader.get_data",
    "__builtins__",
    "__class__",
    "__dict__",
    "_core",
    "_core.multiarray",
    "_pytesttester",
    "linalg.__loader__",
    "linalg._umath_linalg",
    "fft._pocketfft",
    "fft.fft.__globals__",
    "exp.__call__",
    "os",
    "lib",
    "lib.npyio.save",
    "ctypeslib.load_library",
    "testing",
    "linalg",
    "fft",
    ".exp",
    "exp.",
    "linalg..vecdot",
    "",
    "EXP",
    "exp\n",
    " exp",
    "exp\x1b[2J",
    "vecdot.linalg",
]


@pytest.mark.parametrize("function", _HOSTILE)
def test_dunder_private_module_and_dotted_names_are_refused(function: str) -> None:
    with pytest.raises(BundleError) as error:
        bundle_from(document(function), where="b.json")
    message = str(error.value)
    assert "\n" not in message
    assert "\x1b" not in message
    assert message.startswith("b.json: function:")


def _attributes_outside_the_standard() -> list[str]:
    """Every attribute of NumPy, its linalg and fft, and the compat namespace, not standard."""
    names: set[str] = set()
    for namespace in (np, compat_numpy):
        names |= set(dir(namespace))
        for sub in ("linalg", "fft"):
            names |= {f"{sub}.{name}" for name in dir(getattr(namespace, sub))}
    return sorted(names - ALLOWED)


_OUTSIDE = _attributes_outside_the_standard()


def test_the_generated_list_covers_numpy() -> None:
    # Sanity of the generator: NumPy's own extras and its dunders are in it.
    assert {"save", "fromfile", "__loader__", "linalg.__loader__", "fft.__spec__"} <= set(_OUTSIDE)
    assert len(_OUTSIDE) > 400


def test_every_numpy_attribute_the_standard_does_not_name_is_refused() -> None:
    for function in _OUTSIDE:
        if len(function) > 64:  # the length limit refuses it first, as another one line
            continue
        with pytest.raises(BundleError, match="not a function of the Array API standard"):
            bundle_from(document(function), where="b")


@pytest.mark.parametrize("function", sorted(ALLOWED))
def test_every_standard_function_is_accepted(function: str) -> None:
    assert bundle_from(document(function), where="b").function == function


def test_the_list_is_the_standards() -> None:
    # One list: the values package's, which blame and the search table use too.
    from diffcheck.search.table import all_functions
    from diffcheck.values.signatures import VERSIONS, functions_of

    later = {name for version in VERSIONS for name in functions_of(version)}
    assert set(all_functions()) | later == ALLOWED  # 2025.12's isin included


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=64).filter(lambda name: name not in ALLOWED))
def test_any_other_text_is_refused(function: str) -> None:
    with pytest.raises(BundleError) as error:
        bundle_from(document(function), where="b")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("key", ["a b", "x\n", "", "1axis", "axis" * 20, "__\x1b"])
def test_a_keyword_that_is_no_identifier_is_refused(key: str) -> None:
    doc: dict[str, Any] = document("exp")
    doc["call"]["kwargs"][key] = {"integer": 1}
    with pytest.raises(BundleError) as error:
        bundle_from(doc, where="b")
    assert "\n" not in str(error.value)
