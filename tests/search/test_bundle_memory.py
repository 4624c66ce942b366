"""Bundle replay is bounded before anything is allocated: a small file asks for little.

The estimate (:mod:`diffcheck.search.bundle_memory`) is an upper bound per function of the
standard; the property test draws examples of every function the search draws and checks
that NumPy never returns more elements than it says. Then bundles that ask for gigabytes
through every kind of amplifier (a shape, broadcasting, padding, a count, repetitions) are
refused in one line, with the peak memory of the refusal measured.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bundle_docs import document
from diffcheck import memory
from diffcheck.adapters import resolve
from diffcheck.cli import main
from diffcheck.errors import BundleError
from diffcheck.search.arrays import Space
from diffcheck.search.bundle import BUNDLE_FUNCTIONS, bundle_from
from diffcheck.search.bundle_memory import RULES, output_elements
from diffcheck.search.recipes import Example, call_for
from diffcheck.search.table import recipes
from diffcheck.values.call import call_on
from diffcheck.values.compare import host_value
from diffcheck.values.spec import STANDARD_DTYPES

NUMPY = resolve("numpy")
SPACE = Space(STANDARD_DTYPES)


def test_every_function_a_bundle_may_call_has_a_rule() -> None:
    assert set(RULES) == BUNDLE_FUNCTIONS[1]


def _elements(value: Any) -> int:
    if isinstance(value, tuple) and not (len(value) == 2 and isinstance(value[1], str)):
        return sum(_elements(v) for v in value)
    return int(host_value(value)[0].size)


@pytest.mark.parametrize("function", sorted(recipes()))
def test_the_estimate_bounds_what_numpy_returns(function: str) -> None:
    strategy = recipes()[function].draw(SPACE)

    @settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def bounded(example: Example) -> None:
        outcome = call_on(NUMPY, call_for(function, example), list(example.args), example.kwargs)
        if outcome.ok:
            assert _elements(outcome.value) <= output_elements(function, example)

    bounded()


def _replay(tmp_path: Path, doc: dict[str, Any], *extra: str) -> tuple[int, int]:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(doc))
    tracemalloc.start()
    try:
        code = main(["replay", *extra, str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return code, peak


_GIANT = 10**9
_AMPLIFIED = [
    ("ones", [], {"shape": (16000, 16000)}),
    ("zeros", [], {"shape": _GIANT}),
    ("full", [], {"shape": (_GIANT,), "fill_value": 1.0}),
    ("eye", [], {"n_rows": 10**6}),
    ("arange", [], {"start": 0, "stop": 10**12}),
    ("arange", [], {"start": 0.0, "stop": float("inf")}),
    ("linspace", [], {"start": 0.0, "stop": 1.0, "num": _GIANT}),
    ("add", [np.zeros((16000, 1), np.float32), np.zeros((1, 16000), np.float32)], {}),
    ("fft.fft", [np.zeros(4, np.complex64)], {"n": _GIANT}),
    ("fft.fftn", [np.zeros((2, 2), np.complex64)], {"s": (10**5, 10**5)}),
    ("fft.fftfreq", [], {"n": _GIANT}),
    ("tile", [np.zeros(4, np.float32)], {"repetitions": (10**5, 10**5)}),
    ("repeat", [np.zeros(4, np.float32)], {"repeats": _GIANT}),
    ("broadcast_to", [np.zeros(1, np.float32)], {"shape": (10**5, 10**5)}),
    ("linalg.outer", [np.zeros(10**5, np.float32), np.zeros(10**5, np.float32)], {}),
    ("matmul", [np.zeros((10**5, 1), np.float32), np.zeros((1, 10**5), np.float32)], {}),
]


@pytest.mark.parametrize(("function", "args", "kwargs"), _AMPLIFIED)
def test_a_bundle_that_asks_for_gigabytes_is_refused_before_it_allocates(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    function: str,
    args: list[Any],
    kwargs: dict[str, Any],
) -> None:
    doc = document(function, args=args, kwargs=kwargs)
    size = len(json.dumps(doc))
    code, peak = _replay(tmp_path, doc, "--max-memory", "1G")
    err = capsys.readouterr().err
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert "over the budget of 953.7 MiB (--max-memory); nothing was run" in err
    # The refusal itself holds little: the decoded inputs and a constant, not the output.
    assert peak < 40 * size + 8 * 2**20


def test_the_default_budget_refuses_the_484_byte_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default budget is a share of the memory available now: pinned to a 24 GiB machine's
    # figure, so that a machine with far more memory does not fit the 2 GB output.
    monkeypatch.setattr(memory, "available_memory", lambda: 20 * 2**30)
    code, peak = _replay(tmp_path, document("ones", args=[], kwargs={"shape": (16000, 16000)}))
    assert code == 1
    assert "of the memory available now" in capsys.readouterr().err
    assert peak < 8 * 2**20


def test_a_small_bundle_fits_a_small_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = np.asarray([0.5, 1.0], np.float32)
    doc = document("exp", args=[x], reference=np.exp(x), candidate=np.exp(x) + 1)
    code, _ = _replay(tmp_path, doc, "--max-memory", "1M")
    captured = capsys.readouterr()
    assert "budget" not in captured.err
    assert code in (0, 1)  # it ran: whether it reproduces is another test's business


@pytest.mark.parametrize("text", ["zz", "0", "-5G", "1 parsec"])
def test_a_bad_max_memory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(document()))
    assert main(["replay", f"--max-memory={text}", str(path)]) != 0
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize("side", ["candidate", "reference"])
def test_a_bundle_without_an_output_side_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], side: str
) -> None:
    doc = document()
    del doc["outputs"][side]
    with pytest.raises(BundleError, match=f"has no {side} output"):
        bundle_from(doc, where="b")
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2**40), min_size=1, max_size=4),
    st.sampled_from(["ones", "zeros", "empty", "full"]),
)
def test_a_creation_shape_is_counted_in_full(shape: list[int], function: str) -> None:
    example = Example((), positional=(tuple(shape),))
    assert output_elements(function, example) >= int(np.prod(shape, dtype=object))


def test_a_diff_that_would_step_a_billion_times_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = document("diff", args=[np.zeros(3, np.float32)], kwargs={"n": 10**9})
    code, _ = _replay(tmp_path, doc)
    err = capsys.readouterr().err
    assert code == 1
    assert "diff with n=1000000000 differences only 3 elements" in err
    assert len(err.strip().splitlines()) == 1
