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

import diffcheck.adapters
from bundle_docs import document as hand_document
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.cli import main
from diffcheck.errors import BundleError
from diffcheck.report.replay import load_document
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
from diffcheck.search.replay import replay_bundle_command
from value_fakes import FaultyAdapter, LoadsOnlyHereAdapter


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


class _Unpicklable(FaultyAdapter):
    """The faulty backend, holding something no worker process can be sent."""

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("cannot pickle the backend's session: " + "x" * 300)


def _registered(monkeypatch: pytest.MonkeyPatch, candidate: FaultyAdapter) -> None:
    """Make the bundle's backends resolve here: NumPy and ``candidate`` (under its name)."""
    known = {"numpy": NumpyAdapter(), candidate.spec: candidate}
    monkeypatch.setattr(diffcheck.adapters, "resolve", lambda name: known[name])


def test_the_replay_command_runs_the_document_it_read(
    bundle_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The file is read and decoded once: the replay judges those bytes, not the path again
    # (it is gone by now), and says so on stdout with the path it was given.
    _registered(monkeypatch, FaultyAdapter("ulp3"))
    document, size = load_document(bundle_file, None)
    gone = tmp_path / "gone.json"
    assert replay_bundle_command(gone, document, size) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    line, *notes = captured.out.splitlines()
    reason = " ".join(document["finding"]["reason"].split())
    assert line == (
        f"{gone}: REPRODUCES: exp [value]: {reason}; candidate output bit-identical to the "
        "stored one"
    )
    assert len(notes) == 2
    assert all(note.startswith(f"{gone}: claimed, not verified: ") for note in notes)


def test_the_replay_command_names_the_path_of_a_bad_or_too_large_bundle(
    bundle_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _edited(bundle_file, tmp_path, lambda d: _first_array(d).update(sha256="1" * 64))
    document, size = load_document(path, None)
    assert replay_bundle_command(path, document, size) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"diffcheck: {path}: argument 0: ")
    assert "SHA-256" in err
    huge = hand_document("ones", args=[], kwargs={"shape": (4000, 4000)})
    assert replay_bundle_command(path, huge, 500, max_memory=2**20) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"diffcheck: {path}: replaying ones needs about ")
    assert "over the budget of 1.0 MiB (--max-memory); nothing was run" in err


def test_the_replay_command_runs_the_backends_in_a_worker_unless_told_not_to(
    bundle_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A backend that cannot be sent to a worker is refused in one line naming why (its
    # message cut to 200 characters); in-process (--in-process) the same bundle replays.
    _registered(monkeypatch, _Unpicklable("ulp3"))
    document, size = load_document(bundle_file, None)
    assert replay_bundle_command(bundle_file, document, size) == 1
    err = capsys.readouterr().err.strip()
    why = ("cannot pickle the backend's session: " + "x" * 300)[:200]
    assert err == (
        f"diffcheck: the backends cannot be sent to a worker process (TypeError: {why}); "
        "replay in-process (isolate=False)"
    )
    assert replay_bundle_command(bundle_file, document, size, isolate=False) == 0
    assert "REPRODUCES" in capsys.readouterr().out


def test_a_failure_inside_the_replay_worker_is_one_line(
    bundle_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _registered(monkeypatch, LoadsOnlyHereAdapter("ulp3"))
    document, size = load_document(bundle_file, None)
    assert replay_bundle_command(bundle_file, document, size) == 1
    assert capsys.readouterr().err.strip() == (
        "diffcheck: replay failed in its worker process: RuntimeError: the backend's "
        "namespace failed to load"
    )


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
