"""Independence from several probes, not one sum (issue 33).

``wraplib`` (tests/fakes.py) computes with NumPy behind a namespace of its own name whose
``sum`` accumulates in float64: the one-sum probe differs from NumPy's, so a report judged
by it read "independent" and ``diffcheck run`` and sweeps counted it passed. Its ``exp``
and matmul are NumPy's bits, and two libraries whose ``exp`` and matmul both agree are one
implementation (:func:`diffcheck.provenance.probes_agree`). Honest libraries (torch's CPU
build, MLX on the CPU) stay independent.
"""

from __future__ import annotations

import itertools
import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import diffcheck
from diffcheck import provenance
from diffcheck.adapters import resolve
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import load_report, replay
from diffcheck.report.models import ReportDocumentV3
from diffcheck.report.upgrade import upgrade_document
from diffcheck.runner import run_check
from forgery import as_v3, document

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.usefixtures("fake_backends")

SMALL: dict[str, Any] = {"m": 4, "n": 8, "k": 5}
X = np.linspace(-3.0, 3.0, 256, dtype=np.float32)

#: One side's probe parts: each either the reference's bits, other bits, or not probed.
_SAME, _OTHER, _NONE = "same", "other", "none"


def _side(part: str, ours: bytes) -> bytes | None:
    return {_SAME: ours, _OTHER: ours[::-1] + b"!", _NONE: None}[part]


@pytest.mark.parametrize(
    ("sum_", "exp", "matmul"),
    list(itertools.product((_SAME, _OTHER), *[(_SAME, _OTHER, _NONE)] * 2)),
)
@pytest.mark.parametrize("unprobed_side", ["candidate", "reference"])
def test_probes_agree_by_the_sum_or_by_exp_and_matmul_together(
    sum_: str, exp: str, matmul: str, unprobed_side: str
) -> None:
    # Every combination: the sum alone decides; else exp and matmul must both be probed
    # and both agree (matmul alone may be a shared BLAS, exp alone is not enough either).
    reference = provenance.ProbeBits(b"\x01\x02\x03\x04", b"e" * 32, b"m" * 32)
    parts = {"exp": exp, "matmul": matmul}
    candidate = provenance.ProbeBits(
        _side(sum_, reference.sum) or b"",
        _side(parts["exp"], b"e" * 32),
        _side(parts["matmul"], b"m" * 32),
    )
    expected = sum_ == _SAME or (exp == _SAME and matmul == _SAME)
    pair = (reference, candidate) if unprobed_side == "candidate" else (candidate, reference)
    assert provenance.probes_agree(*pair) is expected
    # A side recorded as its sum alone (a v3 report) agrees by the sum only.
    assert provenance.probes_agree(reference.sum, candidate.sum) is (sum_ == _SAME)
    assert provenance.probes_agree(pair[0], pair[1].sum) is (sum_ == _SAME)


def _parts(name: str) -> tuple[bool, bool, bool]:
    """Which of (sum, exp, matmul) ``name``'s namespace computes bit-identically to NumPy's."""
    ours, theirs = provenance.probe_bits(resolve("numpy")), provenance.probe_bits(resolve(name))
    assert ours is not None
    assert theirs is not None
    assert ours.exp is not None
    assert ours.matmul is not None
    assert theirs.exp is not None
    assert theirs.matmul is not None
    return ours.sum == theirs.sum, ours.exp == theirs.exp, ours.matmul == theirs.matmul


@pytest.mark.parametrize(
    ("name", "module"), [("torch:cpu", "torch"), ("mlx:cpu", "mlx")], ids=["torch", "mlx"]
)
def test_honest_libraries_compute_exp_and_sum_their_own_way(name: str, module: str) -> None:
    pytest.importorskip(module)
    same_sum, same_exp, _ = _parts(name)
    # torch's CPU matmul gives NumPy's bits on some machines (one BLAS); exp never does.
    assert (same_sum, same_exp) == (False, False)
    ours, theirs = provenance.probe_bits(resolve("numpy")), provenance.probe_bits(resolve(name))
    assert ours is not None
    assert theirs is not None
    assert not provenance.probes_agree(ours, theirs)
    verdict = diffcheck.compare(lambda xp, x: xp.exp(x), X, candidate=name)
    assert verdict.provenance is not None
    assert verdict.provenance.independent is True
    assert bool(verdict)


def test_numpy_behind_another_namespace_agrees_in_exp_and_matmul_only() -> None:
    # What each NumPy-inside namespace gives: wraplib's float64 sum is its own, its exp and
    # matmul are NumPy's; array_api_strict and the example plugin are NumPy's in the sum too.
    assert _parts("wraplib") == (False, True, True)
    strict = _parts("array_api_strict")
    assert strict[:2] == (True, True)
    assert _parts("example:cpu")[:2] == (True, True)


def _run_wraplib(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    path = tmp_path / "wraplib.json"
    code = main(["run", "--require-backend", "wraplib", "--op", "gemm", "--report", str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    return path, err


def test_diffcheck_run_of_numpy_behind_another_namespace_is_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, err = _run_wraplib(tmp_path, capsys)
    assert err.startswith("diffcheck: NOT INDEPENDENT: both sides returned numpy arrays")
    stored = load_report(path)
    assert stored.result is not None
    assert stored.result.status == "passed"
    assert stored.one_library
    assert not bool(stored)
    probe = json.loads(path.read_text())["computed_by"]["probe"]
    assert probe["reference_sum_bits"] != probe["candidate_sum_bits"]
    assert probe["reference_exp_sha256"] == probe["candidate_exp_sha256"]
    assert probe["reference_matmul_sha256"] == probe["candidate_matmul_sha256"]
    outcome = replay(stored)
    assert outcome.agrees
    assert outcome.one_library
    assert not outcome.passed
    assert outcome.computed_by is not None
    assert "exp over 4096 values and a 48x48 matmul are bit-identical" in outcome.computed_by


def _forged(path: Path, backend: str) -> dict[str, Any]:
    """The wraplib report renamed to a backend no adapter answers to here, its claimed
    reference probes edited so that the stored pair no longer agrees."""
    data: dict[str, Any] = json.loads(path.read_text())
    data["config"]["require_backend"] = data["result"]["backend"] = backend
    probe = data["computed_by"]["probe"]
    probe["reference_exp_sha256"] = "0" * 64
    probe["reference_matmul_sha256"] = "0" * 64
    return data


def test_replay_judges_the_candidates_claimed_probes_against_the_reference_recomputed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The candidate cannot be probed here (no adapter of that name), and the report's
    # reference probes were edited: the stored pair reads independent, but the candidate's
    # own stored exp and matmul are NumPy's as replay recomputes them here.
    path, _ = _run_wraplib(tmp_path, capsys)
    forged = document(_forged(path, "notinstalled"))
    assert not forged.one_library
    outcome = replay(forged)
    assert outcome.agrees, outcome.disagreements
    assert ("result.backend", "notinstalled") in [(k, v.split()[0]) for k, v in outcome.claims]
    assert outcome.one_library
    assert not outcome.passed
    path.write_text(json.dumps(_forged(path, "notinstalled")))
    assert main(["replay", "--require-pass", str(path)]) == 1
    assert "NOT INDEPENDENT" in capsys.readouterr().out


def test_an_honest_pairs_claimed_probes_stay_independent_on_replay(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "torch.json"
    run_check(make_check("torch:cpu", "gemm", **SMALL), path)
    data = json.loads(path.read_text())
    data["config"]["require_backend"] = data["result"]["backend"] = "notinstalled"
    outcome = replay(document(data))
    assert outcome.agrees, outcome.disagreements
    assert not outcome.one_library
    assert outcome.passed


def test_a_v3_report_without_the_new_probes_loads_replays_and_upgrades(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _run_wraplib(tmp_path, capsys)
    old = document(as_v3(json.loads(path.read_text())))
    assert type(old) is ReportDocumentV3
    assert old.computed_by is not None
    assert not hasattr(old.computed_by.probe, "candidate_exp_sha256")
    assert not old.one_library  # its one sum says independent, as v3 recorded it
    outcome = replay(old)
    assert outcome.agrees
    assert outcome.one_library  # the adapter of that name, probed here, is NumPy
    upgraded = upgrade_document(old)
    assert upgraded.computed_by is not None
    probe = upgraded.computed_by.probe
    assert probe is not None
    assert (probe.reference_exp_sha256, probe.candidate_matmul_sha256) == (None, None)
    assert replay(upgraded).agrees


def test_numpy_behind_another_namespace_fails_the_pytest_fixture(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_wrap="""
        import numpy as np

        def test_exp(diffcheck_compare):
            diffcheck_compare(lambda xp, x: xp.exp(x), np.linspace(-2, 2, 64, dtype=np.float32))
        """
    )
    # Loaded by its pytest11 entry point where installed; by name where not.
    installed = any(ep.value == "diffcheck.pytest_plugin" for ep in entry_points(group="pytest11"))
    load = [] if installed else ["-p", "diffcheck.pytest_plugin"]
    result = pytester.runpytest(*load, "-p", "no:cacheprovider", "--diffcheck-backends=wraplib")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*NOT INDEPENDENT*"])
