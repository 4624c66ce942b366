"""Replay bundles: exact round trips, and every edited or hostile bundle is one line of error."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.cli import main
from diffcheck.errors import BundleError
from diffcheck.search import search_api
from diffcheck.search.bundle import (
    MAX_BUNDLE_BYTES,
    check_arrays,
    decode_value,
    encode_value,
    parse_bundle,
    read_bundle,
    write_bundle,
)
from value_fakes import FaultyAdapter


@pytest.fixture(scope="module")
def bundle_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("search") / "out"
    result = search_api(FaultyAdapter("ulp3"), functions=["exp"], examples=40, seed=3, out=out)
    entry = next(f for f in result.document.findings if f.kind == "value")
    return out / entry.bundle


def _edited(bundle_file: Path, tmp_path: Path, edit: Any) -> Path:
    document = json.loads(bundle_file.read_text())
    edit(document)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    return path


def _first_array(document: dict[str, Any]) -> dict[str, Any]:
    array: dict[str, Any] = document["call"]["args"][0]["array"]
    return array


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: _first_array(d).update(bytes=_first_array(d)["bytes"] + 4), "needs"),
        (lambda d: _first_array(d).update(shape=[99]), "needs"),
        (lambda d: _first_array(d).update(shape=[-1]), "negative"),
        (lambda d: _first_array(d).update(sha256="0" * 64), "SHA-256"),
        (lambda d: _first_array(d).update(data=_first_array(d)["data"][:-4]), "base64"),
        (lambda d: _first_array(d).update(data="!" * len(_first_array(d)["data"])), "base64"),
        (lambda d: _first_array(d).update(dtype="object"), "dtype"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d["finding"].update(kind="mystery"), "finding.kind"),
        (lambda d: d.update(bundle_version=2), "bundle_version"),
        (lambda d: d["call"]["args"][0].update(integer=3), "exactly one"),
        (lambda d: d["call"]["kwargs"].update(axis={"float_hex": "zz"}), "hex"),
        (lambda d: d.pop("outputs"), "outputs"),
    ],
)
def test_an_edited_bundle_is_one_line_of_error(
    bundle_file: Path, tmp_path: Path, edit: Any, words: str
) -> None:
    path = _edited(bundle_file, tmp_path, edit)
    with pytest.raises(BundleError) as error:
        read_bundle(path)
    message = str(error.value)
    assert words in message
    assert "\n" not in message


def test_consistent_size_and_digest_are_read_as_the_bytes_they_state(
    bundle_file: Path, tmp_path: Path
) -> None:
    # Consistent size and digest, different bytes: it decodes (the data is what it says).
    def swap(document: dict[str, Any]) -> None:
        array = _first_array(document)
        raw = bytes(array["bytes"])
        array.update(data=base64.b64encode(raw).decode(), sha256=hashlib.sha256(raw).hexdigest())

    bundle = read_bundle(_edited(bundle_file, tmp_path, swap))
    value = decode_value(bundle.call.args[0], where="x")
    assert not value.any()


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\xff\xfe garbage", b"[1, 2, 3]", b'{"kind": "diffcheck-finding"', b"{" * 100000],
)
def test_garbage_is_one_line_of_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "garbage.json"
    path.write_bytes(content)
    with pytest.raises(BundleError) as error:
        read_bundle(path)
    assert "\n" not in str(error.value)


def test_a_truncated_bundle_is_one_line_of_error(bundle_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "truncated.json"
    path.write_bytes(bundle_file.read_bytes()[: bundle_file.stat().st_size // 2])
    with pytest.raises(BundleError, match="not a JSON document"):
        read_bundle(path)


def test_a_bundle_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_BUNDLE_BYTES + 1)
    with pytest.raises(BundleError, match="limit"):
        read_bundle(path)


def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    with pytest.raises(BundleError, match="FIFO"):
        read_bundle(path)


def test_a_bundle_is_never_written_over_a_file(bundle_file: Path, tmp_path: Path) -> None:
    bundle = read_bundle(bundle_file)
    target = tmp_path / "taken.json"
    target.write_text("mine")
    with pytest.raises(BundleError, match="cannot create"):
        write_bundle(target, bundle)
    assert target.read_text() == "mine"


def test_the_replay_command_says_reproduces_or_not_run(bundle_file: Path) -> None:
    # The fake backend is not registered: the command cannot run it, and says so (exit 2).
    result = subprocess.run(
        [sys.executable, "-m", "diffcheck", "replay", str(bundle_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "not_run" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_replay_command_turns_a_bad_bundle_into_one_line(
    bundle_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _edited(bundle_file, tmp_path, lambda d: _first_array(d).update(sha256="1" * 64))
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert "SHA-256" in err
    assert len(err.strip().splitlines()) == 1


_ROUND_TRIP = st.one_of(
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.tuples(st.integers(-5, 5), st.integers(0, 9)),
    st.sampled_from(["ortho", "left", "xy"]),
    st.none(),
)


@settings(max_examples=200, deadline=None)
@given(_ROUND_TRIP)
def test_scalars_round_trip_exactly(value: Any) -> None:
    back = decode_value(encode_value(value), where="x")
    assert type(back) is type(value)
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(back)
    elif isinstance(value, float):
        assert back == value
        assert math.copysign(1.0, back) == math.copysign(1.0, value)
    elif isinstance(value, complex):
        assert back.real.hex() == value.real.hex()
        assert back.imag.hex() == value.imag.hex()
    else:
        assert back == value


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["bool", "int8", "uint16", "int64", "float32", "float64", "complex64"]),
    st.lists(st.integers(0, 3), max_size=3),
    st.integers(0, 2**32 - 1),
)
def test_arrays_round_trip_bit_for_bit(dtype: str, shape: list[int], seed: int) -> None:
    raw = np.random.default_rng(seed).bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    array = np.frombuffer(raw, dtype=np.uint8).view(dtype).reshape(shape)
    back = decode_value(encode_value(array), where="x")
    assert back.dtype == array.dtype
    assert back.shape == array.shape
    assert back.tobytes() == array.tobytes()


def _mutations() -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
    return st.recursive(
        leaf,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=8,
    )


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_edits_load_or_give_one_line(bundle_file: Path, data: st.DataObject) -> None:
    document = json.loads(bundle_file.read_text())
    paths = [("call",), ("finding",), ("outputs",), ("call", "args"), ("bound",), ()]
    where = data.draw(st.sampled_from(paths))
    target: Any = document
    for key in where:
        target = target[key]
    if isinstance(target, dict):
        key = data.draw(st.sampled_from([*target, "new"]))
        target[key] = data.draw(_mutations())
    elif isinstance(target, list) and target:
        target[data.draw(st.integers(0, len(target) - 1))] = data.draw(_mutations())
    text = json.dumps(document).encode()
    message = ""
    try:
        check_arrays(parse_bundle(text, where="edited"), where="edited")
    except BundleError as error:  # any other exception fails the test
        message = str(error)
    assert "\n" not in message
