"""A finding as a person reads it: the console and ``diffcheck show BUNDLE`` give its input,
the oracle's why and a one-line repro that rebuilds the call exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.cli import main
from diffcheck.search import search_api
from diffcheck.search.bundle import Call, encode_value, read_bundle
from diffcheck.search.finding_text import repro, repro_call
from diffcheck.search.recipes import Example, SpecCall, call_for
from diffcheck.values.call import resolve_function
from value_fakes import FaultyAdapter

xps = pytest.importorskip("array_api_strict")

_F32 = np.array([[1.5, -0.0, np.nan], [np.inf, -np.inf, 1e-40]], np.float32)

#: Calls of every shape a bundle stores: arrays of each rank (empty, 0-d, non-finite values),
#: keyword options, positional values, a dtype by keyword, by position and positional-only,
#: and a sequence of arrays.
EXAMPLES: list[tuple[str, Example]] = [
    ("exp", Example((_F32,))),
    ("exp", Example((np.array(88.72282409667969, np.float32),))),
    ("sum", Example((np.zeros((0, 3), np.float64),), {"axis": 0})),
    ("sum", Example((np.arange(12, dtype=np.int16).reshape(3, 4),), {"axis": (0, 1)})),
    ("argmax", Example((np.array([[3, 1], [2, 9]], np.int8),), {"axis": 1, "keepdims": True})),
    ("bitwise_left_shift", Example((np.array([1, 2], np.uint8), np.array([7, 9], np.uint8)))),
    ("multiply", Example((np.array([1 + 2j, -0.5j], np.complex64), 3.0))),
    ("logical_and", Example((np.array([True, False]), np.array([True, True])))),
    ("concat", Example((np.ones((2, 1), np.float32), np.zeros((1, 1), np.float32)), sequence=True)),
    ("stack", Example((np.ones(2, np.int32), np.zeros(2, np.int32)), {"axis": 1}, sequence=True)),
    ("zeros", Example((), positional=((2, 3),), dtypes={"dtype": "int16"})),
    ("full", Example((), positional=((2,), 7), dtypes={"dtype": "float32"})),
    ("astype", Example((np.array([1.7, -2.5], np.float64),), dtypes={"#": "int32"})),
    ("can_cast", Example((), dtypes={"from_": "int8", "to": "float32"})),
    ("roll", Example((np.arange(6, dtype=np.float32).reshape(2, 3),), {"shift": 1, "axis": 1})),
]


def _direct(function: str, example: Example) -> Any:
    """The call as the search makes it, on array_api_strict."""
    arrays = [xps.asarray(a) if isinstance(a, np.ndarray) else a for a in example.args]
    call = call_for(function, example)
    if isinstance(call, SpecCall):
        return call(xps, *arrays, **example.kwargs)
    return resolve_function(xps, call)(*arrays, **example.kwargs)


def _call(example: Example) -> Call:
    return Call(
        args=[encode_value(a) for a in example.args],
        positional=[encode_value(p) for p in example.positional],
        kwargs={k: encode_value(v) for k, v in example.kwargs.items()},
        dtypes=dict(example.dtypes),
        sequence=example.sequence,
    )


@pytest.mark.parametrize(("function", "example"), EXAMPLES, ids=[f for f, _ in EXAMPLES])
def test_the_repro_rebuilds_the_call_exactly(function: str, example: Example) -> None:
    source = repro_call(function, _call(example))
    assert "\n" not in source
    got = eval(source, {"xp": xps})
    want = _direct(function, example)
    if isinstance(want, bool):
        assert got is want
        return
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.fixture(scope="module")
def search_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("search") / "out"
    search_api(FaultyAdapter("ulp3"), functions=["exp"], examples=40, seed=3, out=out)
    return out


def test_show_reads_a_finding_bundle(search_out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = sorted((search_out / "bundles").glob("*.json"))[0]
    assert main(["show", str(bundle)]) == 0
    out = capsys.readouterr().out.splitlines()
    written = read_bundle(bundle)
    assert out[0].startswith(f"{bundle}: finding of {written.candidate.backend} ")
    assert out[1].startswith(f"exp [{written.finding.kind}] ")
    assert out[2].startswith("    input:  ")
    assert written.finding.blame is not None
    assert out[3] == f"    why:    {written.finding.blame.why}"
    assert out[4] == f"    repro:  import {written.candidate.library} as xp; {repro(written)}"


def test_the_search_console_gives_input_why_bundle_repro_and_page(
    search_out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = search_out.parent / "cli"
    args = ["fuzz", "--require-backend", "array_api_strict", "--api", "--functions", "exp"]
    main([*args, "--examples", "5", "--seed", "0", "--out", str(out)])
    printed = capsys.readouterr().out
    assert f"page: {out / 'index.html'}" in printed
    # The fake's findings, printed by the same code path, one block each.
    from diffcheck.cli.api_search_command import _finding
    from diffcheck.search.findings import FindingsDocument

    document = FindingsDocument.model_validate_json((search_out / "findings.json").read_text())
    entry = document.findings[0]
    lines = _finding(entry, search_out)
    assert lines[1] == f"    input:  {entry.example}"
    assert lines[2] == f"    why:    {entry.blame_why}"
    assert lines[3].startswith("    repro:  import ")
    assert lines[4].startswith(f"    bundle: {search_out / entry.bundle}")
