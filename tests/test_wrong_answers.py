"""Wrong answers never pass, on any comparison path.

Every path that can say ``passed`` is fed a wrong answer of each kind, and must not say it:

* one element wrong, one segment (the last quarter) scaled, one lifecycle phase wrong (a
  chain whose output lands in another phase's buffer), the output in another dtype than
  configured (float16 claimed and stored for an f32 check), a NaN, the wrong shape (one
  element short), and the wrong precision (float32 executed for an f16 check);
* through ``diffcheck run``, :func:`diffcheck.run`, :func:`diffcheck.compare`,
  :func:`diffcheck.diff`, a sweep's rows and verdict (in process: rows built from reports,
  classified against a bounded known divergence, judged), ``diffcheck replay`` of the
  report, and :func:`diffcheck.fuzz.fuzz`.

Shapes are tiny so the whole module runs in a few seconds.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck.adapters import Adapter, Execution, KnownDivergence, resolve
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.differ import Segment, diff
from diffcheck.errors import ConfigError
from diffcheck.fuzz import fuzz
from diffcheck.report import parse_report, replay
from diffcheck.runner import run as runner
from diffcheck.runner import run_check
from diffcheck.sweep.isolate import WorkerOutcome
from diffcheck.sweep.known import classify
from diffcheck.sweep.matrix import parse_matrix
from diffcheck.sweep.plan import plan_matrix
from diffcheck.sweep.summary import build_row, judge
from diffcheck.testing import WrappedAdapter, perturb
from fakes import FakeAdapter

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

KINDS = ("element", "segment", "phase", "dtype", "nan", "shape", "precision")
CANDIDATE = "array_api_strict"
#: Tiny shapes: every op's output has a few dozen elements at most.
PARAMS: dict[str, dict[str, int]] = {
    "gemm": {"m": 4, "n": 6, "k": 5},
    "context-lifecycle": {"tokens": 2, "intermediate": 3, "k": 4},
}


def _one_element(values: Any, precision: Any) -> Any:
    values[values.size // 3] += np.float32(1.0)
    return values


class StoresF32(NumpyAdapter):
    """Asked for f16, it stores and computes float32 (and says so)."""

    name = "storesf32"
    devices = ()

    def storage_dtype(self, xp: Any, precision: Any) -> Any:
        return xp.float32


class F16Output(WrappedAdapter):
    """Asked for f32, it returns a float16 result (rounded, and reported as f16 storage)."""

    def execute(self, *args: Any, **kwargs: Any) -> Execution:
        run = self.inner.execute(*args, **kwargs)
        rounded = run.output.astype(np.float16).astype(np.float32)
        return dataclasses.replace(run, output=rounded, output_storage="f16")


def wrong(kind: str) -> tuple[str, str, Adapter]:
    """(op, precision, candidate adapter) that gives a wrong answer of ``kind``."""
    strict = resolve(CANDIDATE)
    if kind == "element":
        return "gemm", "f32", WrappedAdapter(strict, transform=_one_element)
    if kind == "segment":
        return "gemm", "f32", perturb(strict, "scale_segment")
    if kind == "phase":
        return "context-lifecycle", "f32", FakeAdapter("reuse_output")
    if kind == "dtype":
        return "gemm", "f32", F16Output(strict)
    if kind == "nan":
        return "gemm", "f32", perturb(strict, "nan")
    if kind == "shape":
        return "gemm", "f32", perturb(strict, "truncate")
    assert kind == "precision"
    return "gemm", "f16", StoresF32()


@pytest.fixture
def wrong_candidate(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], tuple[str, str]]:
    """Make the runner resolve the candidate's name to the wrong adapter of a kind."""

    def install(kind: str) -> tuple[str, str]:
        op, precision, adapter = wrong(kind)
        real = runner.resolve
        monkeypatch.setattr(
            runner, "resolve", lambda name: adapter if name == CANDIDATE else real(name)
        )
        return op, precision

    return install


def cli_args(op: str, precision: str, report: Path) -> list[str]:
    args = ["run", "--require-backend", CANDIDATE, "--op", op, "--report", str(report)]
    for name, value in PARAMS[op].items():
        args += [f"--{name}", str(value)]
    return [*args, "--precision", precision]


@pytest.mark.parametrize("kind", KINDS)
def test_the_run_cli_never_passes_a_wrong_answer(
    kind: str,
    tmp_path: Path,
    wrong_candidate: Callable[[str], tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    op, precision = wrong_candidate(kind)
    report = tmp_path / "r.json"
    assert main(cli_args(op, precision, report)) == 1
    assert "Numerical check completed" not in capsys.readouterr().out
    document = parse_report(report.read_bytes(), str(report))
    assert document.result is not None
    assert document.result.status == "failed"
    # ... and replaying the report never turns it into a pass.
    assert main(["replay", "--require-pass", str(report)]) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_replay_never_agrees_with_a_wrong_answer_forged_to_pass(
    kind: str,
    wrong_candidate: Callable[[str], tuple[str, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    op, precision = wrong_candidate(kind)
    check = make_check(CANDIDATE, op, precision=precision, **PARAMS[op])
    document = run_check(check)
    assert document.result is not None
    assert document.result.status == "failed"
    forged = document.model_copy(
        update={"result": document.result.model_copy(update={"status": "passed", "reason": None})}
    )
    path = tmp_path / "forged.json"
    path.write_bytes(forged.to_json())
    assert main(["replay", str(path)]) == 1
    assert "agrees" not in capsys.readouterr().out
    assert not replay(parse_report(forged.to_json(), "forged")).agrees


@pytest.mark.parametrize("kind", KINDS)
def test_diffcheck_run_never_passes_a_wrong_answer(
    kind: str, wrong_candidate: Callable[[str], tuple[str, str]]
) -> None:
    op, precision = wrong_candidate(kind)
    document = diffcheck.run(
        {"require_backend": CANDIDATE, "op": op, "precision": precision, **PARAMS[op]}
    )
    assert document.result is not None
    assert document.result.status == "failed"


def _softmax(xp: Any, x: Any) -> Any:
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def _on_candidate(xp: Any) -> bool:
    return "array_api_strict" in getattr(xp, "__name__", "")


def _compare_case(kind: str) -> tuple[Callable[..., Any], dict[str, Any]]:
    """A function that is right on NumPy and wrong (in one way) on the candidate."""
    if kind == "element":

        def fn(xp: Any, x: Any) -> Any:
            out = _softmax(xp, x)
            if not _on_candidate(xp):
                return out
            bump = np.zeros((8, 16), np.float32)
            bump[2, 5] = 0.5
            return out + xp.asarray(bump)

        return fn, {}
    if kind == "segment":

        def fn(xp: Any, x: Any) -> Any:
            scale = 1.001 if _on_candidate(xp) else 1.0
            return _softmax(xp, x), xp.exp(x) * scale  # the second output is slightly off

        return fn, {}
    if kind == "phase":

        def fn(xp: Any, x: Any) -> Any:
            out = xp.exp(x)
            if not _on_candidate(xp):
                return out
            last = np.zeros((8, 16), np.float32)
            last[6:, :] = 0.01  # the last quarter ("phase") only, drowned in the aggregate
            return out * (1.0 + xp.asarray(last))

        return fn, {"segments": 4}
    if kind == "dtype":

        def fn(xp: Any, x: Any) -> Any:
            out = _softmax(xp, x) * 100.0
            return xp.astype(out, xp.int32) if _on_candidate(xp) else out

        return fn, {}
    if kind == "nan":

        def fn(xp: Any, x: Any) -> Any:
            out = _softmax(xp, x)
            if not _on_candidate(xp):
                return out
            mask = np.zeros((8, 16), np.float32)
            mask[3, 5] = np.nan
            return out + xp.asarray(mask)

        return fn, {}
    if kind == "shape":

        def fn(xp: Any, x: Any) -> Any:
            out = _softmax(xp, x)
            return xp.reshape(out, (16, 8)) if _on_candidate(xp) else out

        return fn, {}
    assert kind == "precision"
    return _softmax, {"precision": "f16"}


class StrictStoresF32(WrappedAdapter):
    """array_api_strict that claims f16 and stores float32."""

    def storage_dtype(self, xp: Any, precision: Any) -> Any:
        return xp.float32

    def capabilities(self) -> Any:
        return dataclasses.replace(self.inner.capabilities(), precisions=("f32", "f16"))


@pytest.mark.parametrize("kind", KINDS)
def test_compare_never_passes_a_wrong_answer(kind: str) -> None:
    fn, options = _compare_case(kind)
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    candidate: Any = StrictStoresF32(resolve(CANDIDATE)) if kind == "precision" else CANDIDATE
    verdict = diffcheck.compare(fn, x, candidate=candidate, **options)
    assert verdict.status == "failed", verdict.reason


@pytest.mark.parametrize("kind", KINDS)
def test_diff_never_passes_a_wrong_answer(kind: str) -> None:
    rng = np.random.default_rng(2)
    reference = rng.uniform(-1, 1, 64).astype(np.float32)
    actual = reference.copy()
    options: dict[str, Any] = {"max_nmse": 1e-7}
    if kind == "element":
        actual[10] += 0.5
    elif kind == "segment":
        actual[48:] *= np.float32(1.001)
        options["segments"] = [Segment("head", 0, 48), Segment("tail", 48, 64)]
    elif kind == "phase":
        reference[:48] *= 1000.0
        actual = reference.copy()
        actual[48:] *= np.float32(1.01)
        options["segments"] = 4
    elif kind == "dtype":
        actual = (reference * 10).astype(np.int32)
        reference = reference * 10
    elif kind == "nan":
        actual[5] = np.nan
    elif kind == "shape":
        actual = actual[:-1].copy()
        reference = reference[:-1].copy()
        options["expected_elements"] = 64
    else:
        # diff sees values only: a bfloat16 result (8 significand bits) for an f32 check. An
        # f16-rounded one measures NMSE ~8e-8, under 1e-7, which is why the runner and
        # compare check the executed storage (see the other paths' "precision" cases).
        actual = (reference.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    assert diff(reference, actual, **options).status == "failed"


#: A divergence declared for every case, bounded like MLX's TF32 one: it must excuse none.
EVERYTHING = KnownDivergence(
    ops=("gemm", "context-lifecycle"),
    precisions=("f32", "f16"),
    reason="test-only: declared for every case",
    upstream="https://example.org/issues/0",
    max_nmse=1.4e-6,
    measured_nmse=1.4e-07,
    bound_source="10x a worst case of 1.4e-7",
)


@pytest.mark.parametrize("kind", KINDS)
def test_a_sweep_never_passes_a_wrong_answer(kind: str, tmp_path: Path) -> None:
    op, precision, adapter = wrong(kind)
    shape = ", ".join(f"{k} = {v}" for k, v in PARAMS[op].items())
    matrix = parse_matrix(
        tomllib.loads(
            f'schema_version = 1\n[defaults]\nprecisions = ["{precision}"]\n[[pairs]]\n'
            f'candidate = "{CANDIDATE}"\nrequired = true\n[ops.{op}]\nshapes = [{{ {shape} }}]\n'
        )
    )
    (planned,) = plan_matrix(matrix).checks
    report = tmp_path / "r.json"
    document = run_check(planned.check, report, candidate=adapter)
    row = build_row(planned, document, WorkerOutcome(planned.id, str(report), "exit 0", 0.1))
    row = classify(row, [EVERYTHING])
    assert row.outcome == "failed", (row.reason, row.known_divergence)
    assert judge([row])[0] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_never_passes_a_wrong_answer(kind: str) -> None:
    op, precision, adapter = wrong(kind)
    result = fuzz(adapter, op, precision=precision, examples=2, seed=0, max_elements=400)
    assert result.status == "failed", result


def test_a_wrong_answer_cannot_be_vouched_for_by_the_reference_itself() -> None:
    with pytest.raises(ConfigError, match="cannot vouch for itself"):
        diffcheck.run({"require_backend": "numpy:cpu", "op": "gemm"})
