"""Any file handed to ``diffcheck replay``: one line or an agreement, never a traceback, and
never ``agrees: passed`` for outputs that are not within the tolerance.

Three reports are written by real checks (a gemm that passes with non-trivial metrics, a
gemm that fails numerically, a lifecycle with its four phases), each also rewritten as
schema v1 (outputs as float32 bit lists); Hypothesis then mutates them,
field by field (any JSON value in any place, a deleted or added key, an output bit flipped,
a number nudged) and as text (truncated, spliced), or replaces them with garbage. For every
file, ``diffcheck replay`` exits 0 or 1 with at most one line on stderr, and whenever it
prints ``agrees: passed`` an independent float64 oracle over the file's own bits confirms
that both outputs have the configured element count, are finite, and that the NMSE is below
the tolerance the file records.

Cases tried per run (bounded so the module runs in seconds): 300 field mutations, 150 text
mutations, 100 garbage texts, 100 garbage byte strings.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import forgery
from diffcheck._numbers import f64_bits, f64_from_bits
from diffcheck.adapters import resolve
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import load_report, replay
from diffcheck.runner import run_check
from diffcheck.testing import WrappedAdapter, perturb

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

FIELD_CASES = 300
TEXT_CASES = 150
GARBAGE_CASES = 100


def _settings(cases: int) -> settings:
    return settings(
        max_examples=cases,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _slightly_off(values: Any, precision: Any) -> Any:
    # A few ULP off, unevenly: a pass within the precision floor whose metrics are not zero.
    ramp = np.linspace(0.0, 2e-7, values.size, dtype=np.float64)
    return (values.astype(np.float64) * (1.0 + ramp)).astype(np.float32)


@functools.cache
def _reports() -> dict[str, str]:
    """The text of each seed report (written once per test session)."""
    from fakes import FakeAdapter, named_for

    strict = resolve("array_api_strict")
    cases = {
        "passed": (
            make_check("array_api_strict", "gemm", m=3, n=4, k=5),
            WrappedAdapter(strict, transform=_slightly_off),
        ),
        "failed": (make_check("array_api_strict", "gemm", m=3, n=4, k=5), perturb(strict, "nan")),
        "lifecycle": (
            make_check("array_api_strict", "context-lifecycle", tokens=1, intermediate=2, k=3),
            FakeAdapter(),
        ),
    }
    texts = {}
    with tempfile.TemporaryDirectory() as directory:
        for name, (check, candidate) in cases.items():
            path = Path(directory) / f"{name}.json"
            run_check(named_for(check, candidate), path, candidate=candidate)
            texts[name] = path.read_text()
            texts[f"{name} (v1)"] = json.dumps(_as_v1(json.loads(texts[name])), indent=2)
    return texts


def _as_v1(data: dict[str, Any]) -> dict[str, Any]:
    """The same record in schema v1 (outputs as lists of float32 bit patterns)."""
    v1 = forgery.as_v2(data)
    v1["schema_version"] = v1["result"]["schema_version"] = 1
    for which in ("reference", "actual"):
        if v1["result"][which] is not None:
            bits = forgery.output(data, which).view(np.uint32)
            v1["result"][which] = {"f32_bits": bits.tolist()}
    return v1


def _replay_cli(data: bytes) -> tuple[int, str, str]:
    """``diffcheck replay`` on a file holding ``data``: exit status, stdout, stderr."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "r.json"
        path.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["replay", str(path)])
        return code, out.getvalue().replace(str(path), "R"), err.getvalue().replace(str(path), "R")


def _within_tolerance(data: Any) -> bool:
    """The oracle: the file's own outputs are within its own tolerance (float64, plainly)."""
    result = data["result"]
    reference, actual = forgery.output(data, "reference"), forgery.output(data, "actual")
    tolerance = f64_from_bits(result["tolerance_f64_bits"])
    expected = data["expected_output_elements"]
    if not (reference.size == actual.size == expected) or expected == 0:
        return False
    r, a = reference.astype(np.float64), actual.astype(np.float64)
    if not (np.isfinite(r).all() and np.isfinite(a).all()):
        return False
    energy = float(np.mean(r * r))
    mse = float(np.mean((r - a) ** 2))
    nmse = mse if energy < 1e-30 else mse / energy
    return math.isfinite(tolerance) and tolerance > 0 and nmse < tolerance


def _event(name: str) -> None:
    if currently_in_test_context():  # the explicit tests below share the contract check
        event(name)


#: What replay prints after an "agrees" line: notes, what it checked, the claimed fields.
_AFTER_AGREES = ("R: note: ", "R: checked: ", "R: claimed, not verified: ")


#: How an agreeing pass of one library on both sides reads (the lifecycle seed's fake is
#: NumPy with command contexts: replay's probes of it here find NumPy).
_ONE_LIBRARY = " (NOT INDEPENDENT: one library on both sides, not a pass for the backend)"


def _check_cli_contract(data: bytes) -> None:
    code, out, err = _replay_cli(data)
    assert code in (0, 1), (code, out, err)
    assert "Traceback" not in err
    # One line as a terminal shows it: no line feed or carriage return but the last.
    assert "\r" not in err, err
    assert err.count("\n") <= 1, err
    if code == 1:
        assert err.endswith("\n"), err
        assert err.startswith(("diffcheck: ", "R: DISAGREES: ")), err
        assert out == ""
        _event("refused or disagrees")
        return
    assert err == ""
    first, *notes = out.splitlines()
    assert first in (
        "R: agrees: passed",
        f"R: agrees: passed{_ONE_LIBRARY}",
        "R: agrees: failed",
        "R: agrees: not_run",
    ), out
    assert all(line.startswith(_AFTER_AGREES) for line in notes), out
    _event(first)
    if first.startswith("R: agrees: passed"):
        assert _within_tolerance(json.loads(data)), data[:2000]


# Field-level mutations of a report's JSON tree.

_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, -1, 2**32 - 1, 2**32, 2**64 - 1, 2**64, 1e-7, 1.0, 1e300, -0.0]),
    st.text(max_size=10),
    st.sampled_from(["passed", "failed", "not_run", "f32", "f16", "gemm", "initial", ""]),
)
#: Keys without line breaks: a key is echoed in the schema error's location (see
#: test_a_key_with_a_line_break_is_still_one_line for the case with one).
_KEYS = st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=6)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``node`` (output bit lists contribute their first few elements)."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:6]):
            found += _paths(value, (*prefix, index))
    return found


def _nudged(value: Any, draw: st.DrawFn) -> Any:
    """A small change of a number: the kind of forgery that a loose check lets through."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        if draw(st.booleans()):
            return value ^ (1 << draw(st.integers(0, 31)))  # an output bit flipped
        return value + draw(st.sampled_from([-1, 1, 2**52, -(2**52)]))
    if isinstance(value, float):
        return value * draw(st.sampled_from([1 + 1e-9, 1 - 1e-6, 2.0, 0.5, -1.0, 0.0]))
    return draw(_JSON)


@st.composite
def _mutated_report(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(_reports())))
    data = json.loads(_reports()[name])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        if not path:
            data = draw(_JSON)
            continue
        *parents, last = path
        node = data
        for key in parents:
            node = node[key]
        action = draw(st.sampled_from(["replace", "nudge", "nudge", "delete", "add"]))
        if action == "delete" and isinstance(node, dict):
            del node[last]
        elif action == "delete" and isinstance(node, list):
            node.pop(last)
        elif action == "add" and isinstance(node, dict):
            node[draw(_KEYS)] = draw(_JSON)
        elif action == "nudge":
            node[last] = _nudged(node[last], draw)
        else:
            node[last] = draw(_JSON)
        if not isinstance(data, (dict, list)):
            break
    # The tolerance forged consistently (value and bits) is a change of what "passed" means:
    # keep the pair consistent sometimes, so replay's other checks are what is exercised.
    if isinstance(data, dict) and draw(st.booleans()):
        with contextlib.suppress(Exception):
            data["result"]["tolerance"] = f64_from_bits(data["result"]["tolerance_f64_bits"])
    return name, json.dumps(data).encode()


@_settings(FIELD_CASES)
@given(_mutated_report())
def test_a_mutated_report_is_refused_or_agrees_only_with_its_own_bits(
    case: tuple[str, bytes],
) -> None:
    _check_cli_contract(case[1])


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)


@st.composite
def _spliced_text(draw: st.DrawFn) -> bytes:
    text = _reports()[draw(st.sampled_from(sorted(_reports())))]
    start = draw(st.integers(0, len(text)))
    stop = draw(st.integers(start, min(len(text), start + 200)))
    return (text[:start] + draw(_TEXT) + text[stop:]).encode()


@_settings(TEXT_CASES)
@given(_spliced_text())
def test_a_truncated_or_spliced_report_text_is_refused_or_agrees(data: bytes) -> None:
    _check_cli_contract(data)


@_settings(GARBAGE_CASES)
@given(st.one_of(_TEXT, st.text(max_size=400)).map(lambda t: t.encode("utf-8", "replace")))
def test_garbage_text_is_one_line(data: bytes) -> None:
    _check_cli_contract(data)


@_settings(GARBAGE_CASES)
@given(st.binary(max_size=400))
@example(b"\xff\xfe{")
def test_garbage_bytes_are_one_line(data: bytes) -> None:
    _check_cli_contract(data)


def test_a_deeply_nested_report_is_one_line() -> None:
    _check_cli_contract(b"[" * 100_000 + b"]" * 100_000)


def test_a_report_with_a_huge_integer_is_one_line() -> None:
    _check_cli_contract(b'{"schema_version": 1' + b"0" * 5000 + b"}")


def test_a_key_with_a_line_break_is_still_one_line() -> None:
    data = json.loads(_reports()["passed"])
    data["result"]["bogus\nkey"] = None
    _check_cli_contract(json.dumps(data).encode())


def test_the_seed_reports_agree_as_written() -> None:
    outs = {name: _replay_cli(text.encode()) for name, text in _reports().items()}
    expected = {"passed": "passed", "failed": "failed", "lifecycle": f"passed{_ONE_LIBRARY}"}
    # A failed report's agreement is followed by where it failed, in the output's shape.
    for name in ("failed", "failed (v1)"):
        where = outs[name][1].splitlines()[1]
        assert where.startswith("R: note: where: first non-finite in actual at [1, 2] "), where
    firsts = {name: (code, out.splitlines()[0], err) for name, (code, out, err) in outs.items()}
    assert firsts == {
        **{name: (0, f"R: agrees: {status}", "") for name, status in expected.items()},
        **{f"{name} (v1)": (0, f"R: agrees: {status}", "") for name, status in expected.items()},
    }
    for _, out, _ in outs.values():
        assert "R: checked: reference recomputed from config: bit-exact" in out.splitlines()


def test_a_tolerance_forged_above_the_configured_one_does_not_agree(tmp_path: Path) -> None:
    data = json.loads(_reports()["passed"])
    result = data["result"]
    # Outputs 1% off (NMSE ~1e-4, far beyond the configured 1e-7) under a forged tolerance of
    # 1.0, recorded consistently: value, bits, status, reason and the re-derived metrics.
    forgery.set_output(data, "actual", forgery.output(data, "reference") * np.float32(1.01))
    result["tolerance"], result["tolerance_f64_bits"] = 1.0, f64_bits(1.0)
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data))
    derived = replay(load_report(path)).verdict
    assert derived is not None
    assert derived.metrics is not None
    result["metrics"] = {**result["metrics"], **derived.metrics.__dict__}
    path.write_text(json.dumps(data))
    assert data["config"]["max_nmse"] == 1e-7
    assert not _within_tolerance(
        {**data, "result": {**result, "tolerance_f64_bits": f64_bits(1e-7)}}
    )
    assert main(["replay", str(path)]) == 1
