"""Replay checks the world, not only the report: the reference is recomputed from config.

Each forgery below is made consistent the way a careful forger would make it (outputs
re-encoded with their digests, status, reason, metrics and segments re-stamped from the
edited bits), so replay's own re-derivation agrees with it; only the recomputed reference,
the storage binding or the derived backend pair can catch it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck import ReportError
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import replay
from diffcheck.report.world import WIDE_ULP_BOUND, compare_reference, ulp_distance
from diffcheck.runner import run_check
from fakes import FakeAdapter
from forgery import as_v1, document, output, restamp, set_output

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

CANDIDATE = "array_api_strict"


def _report(tmp_path: Path, name: str, check: Any, **kwargs: Any) -> dict[str, Any]:
    path = tmp_path / f"{name}.json"
    run_check(check, path, **kwargs)
    return dict(json.loads(path.read_text()))


@pytest.fixture
def failing_gemm(tmp_path: Path) -> dict[str, Any]:
    check = make_check("fakescalesegment", "gemm", m=4, n=8, k=6, seed=7)
    data = _report(tmp_path, "failing", check, candidate=FakeAdapter("scale_segment"))
    assert data["result"]["status"] == "failed"
    assert replay(document(data)).agrees
    return data


def _problems(data: dict[str, Any]) -> list[str]:
    return replay(document(data)).disagreements


def _self_consistent(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` re-stamped; the stored verdict is then what its own bits give.

    Outputs that agree pass the comparator; whether they pass the precision floor too
    depends on how far the candidate's bits are from the truth of the config's inputs.
    """
    restamp(data)
    assert data["result"]["metrics"]["nmse"] < data["result"]["tolerance"]
    return data


def test_both_outputs_replaced_by_equal_values_do_not_replay(failing_gemm: dict[str, Any]) -> None:
    values = np.linspace(-1.0, 1.0, 32, dtype=np.float32)
    set_output(failing_gemm, "reference", values)
    set_output(failing_gemm, "actual", values)
    problems = _problems(_self_consistent(failing_gemm))
    assert problems[0].startswith("result.reference is not the reference recomputed from config")
    # A refuted reference is not followed by the precision floor: the re-stamped status,
    # which the floor failed, is then all that differs besides.
    assert all(p.startswith("status:") for p in problems[1:]), problems


def test_the_reference_replaced_by_the_candidates_bits_does_not_replay(
    failing_gemm: dict[str, Any],
) -> None:
    set_output(failing_gemm, "reference", output(failing_gemm, "actual"))
    problems = _problems(_self_consistent(failing_gemm))
    assert "(must be within 1 float32 ULP)" in problems[0]
    assert all(p.startswith("status:") for p in problems[1:]), problems


@pytest.mark.parametrize(("field", "value"), [("seed", 8), ("k", 600)])
def test_a_changed_seed_or_shape_parameter_with_the_bits_kept_does_not_replay(
    failing_gemm: dict[str, Any], field: str, value: int
) -> None:
    # Make the honest failing report into a passing one whose outputs agree, then change the
    # config so that the bits no longer come from it.
    set_output(failing_gemm, "actual", output(failing_gemm, "reference"))
    assert _problems(_self_consistent(failing_gemm)) == []
    failing_gemm["config"][field] = value
    if field == "seed":
        failing_gemm["result"]["seed"] = value
    problems = _problems(failing_gemm)
    assert problems[0].startswith("result.reference is not the reference recomputed from config")
    # The bits are not the new config's candidate either: the precision floor, measured
    # from the config's inputs, moves with them.
    assert all(p.startswith(("result.floor", "status:")) for p in problems[1:]), problems


def test_a_boolean_seed_is_refused_when_the_report_is_read(failing_gemm: dict[str, Any]) -> None:
    failing_gemm["config"]["seed"] = True
    failing_gemm["result"]["seed"] = True
    with pytest.raises(ReportError, match=r"does not match schema v4 at config\.gemm\.seed"):
        document(failing_gemm)


@pytest.mark.parametrize("value", [True, "0.5", "6"])
@pytest.mark.parametrize("where", ["max_nmse", "k"])
def test_a_config_value_of_the_wrong_json_type_is_refused(
    failing_gemm: dict[str, Any], where: str, value: object
) -> None:
    failing_gemm["config"][where] = value
    with pytest.raises(ReportError, match=rf"at config\.gemm\.{where}"):
        document(failing_gemm)


def test_a_forged_v1_report_is_not_upgraded(
    failing_gemm: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = np.linspace(-1.0, 1.0, 32, dtype=np.float32)
    set_output(failing_gemm, "reference", values)
    set_output(failing_gemm, "actual", values)
    forged = as_v1(_self_consistent(failing_gemm))
    source, target = tmp_path / "forged-v1.json", tmp_path / "clean-v2.json"
    source.write_text(json.dumps(forged))
    assert main(["upgrade", str(source), "--out", str(target)]) != 0
    err = capsys.readouterr().err
    assert "result.reference is not the reference recomputed from config" in err
    assert not target.exists()
    assert main(["replay", str(source)]) == 1


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        (
            "nosuchlib",
            "could not be recomputed: backend nosuchlib: UnknownBackendError: unsupported",
        ),
        ("cupy", "could not be recomputed: backend cupy here: "),
    ],
)
def test_a_reference_that_cannot_be_recomputed_never_agrees(
    failing_gemm: dict[str, Any], reference: str, expected: str
) -> None:
    failing_gemm["reference_backend"] = reference
    problems = _problems(failing_gemm)
    assert any(expected in p for p in problems), problems


def test_another_reference_is_recomputed_with_its_own_adapter(tmp_path: Path) -> None:
    check = make_check(CANDIDATE, "rms-norm", reference="torch", seed=3)
    data = _report(tmp_path, "torch-reference", check)
    outcome = replay(document(data))
    assert outcome.agrees, outcome.disagreements
    assert outcome.checked[0].startswith("reference recomputed from config")
    # NumPy's reference is not torch's: swapping the name is caught.
    data["reference_backend"] = "numpy"
    assert any("result.reference" in p for p in _problems(data))


def _nudged(values: np.ndarray, index: int, ulps: int) -> np.ndarray:
    nudged = values.copy()
    nudged.view(np.int32)[index] += ulps
    return nudged


@pytest.mark.parametrize("ulps", [1, 2])
def test_a_float64_accumulated_reference_is_bound_to_one_ulp(tmp_path: Path, ulps: int) -> None:
    check = make_check(CANDIDATE, "gemm", m=4, n=8, k=6)
    data = _report(tmp_path, "gemm", check)
    reference = output(data, "reference")
    set_output(data, "reference", _nudged(reference, 5, ulps))
    restamp(data)
    outcome = replay(document(data))
    if ulps <= WIDE_ULP_BOUND:
        assert outcome.agrees, outcome.disagreements
        assert outcome.checked[0].startswith("reference recomputed from config: within 1 ULP")
        assert "first at flat index 5" in outcome.checked[0]
    else:
        assert len(outcome.disagreements) == 1
        assert "max 2 ULP; first at flat index 5" in outcome.disagreements[0]


def test_a_float32_accumulated_reference_is_bound_bit_exact(tmp_path: Path) -> None:
    check = make_check(CANDIDATE, "silu-mul")
    assert not check.op.wide_reference_accumulation
    data = _report(tmp_path, "silu", check)
    set_output(data, "reference", _nudged(output(data, "reference"), 0, 1))
    restamp(data)
    problems = _problems(data)
    assert len(problems) == 1
    assert "(must be bit-exact): 1 of" in problems[0]


def test_compare_reference_refuses_a_non_finite_difference_even_when_wide() -> None:
    stored = np.array([1.0, np.inf], np.float32)
    recomputed = np.array([1.0, np.float32(3.4e38)], np.float32)
    problem, _ = compare_reference(stored, recomputed, wide=True)
    assert problem is not None
    assert ulp_distance(np.array([-0.0], np.float32), np.array([0.0], np.float32))[0] == 0
    assert ulp_distance(np.array([-1e-45], np.float32), np.array([1e-45], np.float32))[0] == 2


@pytest.mark.parametrize("precision", ["f16", "bf16"])
def test_outputs_not_representable_in_the_executed_storage_do_not_replay(
    tmp_path: Path, precision: str
) -> None:
    # NumPy (the fake) stores f16; torch on the CPU stores bf16.
    fake = {"candidate": FakeAdapter()} if precision == "f16" else {}
    candidate = "fake" if fake else "torch:cpu"
    check = make_check(candidate, "gemm", m=4, n=8, k=6, precision=precision)
    data = _report(tmp_path, precision, check, **fake)
    assert data["executed_precision"]["backend_output_storage"] == precision
    assert replay(document(data)).agrees
    # The candidate's float32 bits in place of its narrow ones: closer to the reference,
    # and a pass, but not an output of a candidate that stored its output at this precision.
    set_output(data, "actual", output(data, "reference"))
    restamp(data)
    problems = _problems(data)
    assert len(problems) == 1, problems
    assert f"values are not representable in {precision}" in problems[0]


def test_a_self_test_is_derived_from_the_pair_and_never_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = make_check("numpy:cpu", "gemm", m=2, n=3, k=4, allow_self_test=True)
    data = _report(tmp_path, "self", check)
    path = tmp_path / "self.json"
    outcome = replay(document(data))
    assert outcome.agrees
    assert outcome.self_test
    assert not outcome.passed
    assert main(["replay", str(path)]) == 0
    assert "agrees: passed (SELF-TEST: not a pass for the backend)" in capsys.readouterr().out
    assert main(["replay", "--require-pass", str(path)]) == 1
    # Deleting the sentence does not make it a pass: the pair says it is a self-test.
    data["coverage"] = data["coverage"].split(" SELF-TEST:")[0]
    assert any(p.startswith("coverage: stored") for p in _problems(data))


def test_a_reference_renamed_to_the_candidate_is_a_self_test_that_disagrees(
    tmp_path: Path,
) -> None:
    data = _report(tmp_path, "pair", make_check(CANDIDATE, "gemm", m=2, n=3, k=4))
    data["reference_backend"] = CANDIDATE
    outcome = replay(document(data))
    assert outcome.self_test
    assert any(p.startswith("coverage: stored") for p in outcome.disagreements)


def test_claimed_fields_are_printed_as_claimed_and_never_change_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _report(tmp_path, "claims", make_check(CANDIDATE, "gemm", m=2, n=3, k=4))
    metal = "Metal GPU: Apple M3 Max (metal kernel gemm_f32)"
    data["environment"]["platform"] = "macOS-15-arm64"
    data["environment"]["candidate_detail"] = metal
    data["execution_path"] = metal
    data["executed_precision"]["kernel_entrypoint"] = metal
    path = tmp_path / "claimed.json"
    path.write_text(json.dumps(data))
    assert main(["replay", "--claims", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{path}: agrees: passed"
    claimed = [line for line in lines if ": claimed, not verified: " in line]
    assert len(claimed) == 1
    for field in ("environment.platform", "execution_path", "executed_precision.kernel_entrypoint"):
        assert f"{field}=" in claimed[0]
    assert metal in claimed[0]


def test_rerun_says_whether_the_stored_candidate_bits_reproduce(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _report(tmp_path, "rerun", make_check(CANDIDATE, "gemm", m=4, n=8, k=6))
    path = tmp_path / "rerun.json"
    assert main(["replay", "--rerun", str(path)]) == 0
    assert "stored bits reproduce bit-exact" in capsys.readouterr().out
    # Stored candidate bits a little off (still a pass): they do not reproduce, and the
    # candidate declares its output deterministic, so --rerun disagrees (exit 1).
    set_output(data, "actual", _nudged(output(data, "actual"), 3, 4))
    restamp(data)
    assert data["result"]["status"] == "passed"
    outcome = replay(document(data), rerun=True)
    assert (
        "stored bits do not reproduce: 1 of 32 elements differ, NMSE between"
        in (outcome.checked[-1])
    )
    assert len(outcome.disagreements) == 1
    assert outcome.disagreements[0].startswith("re-run: stored bits do not reproduce (1 of 32")
    path.write_text(json.dumps(data))
    assert main(["replay", "--rerun", str(path)]) == 1
    # Stored candidate bits forged into a failure: the re-run passes, which disagrees too.
    set_output(data, "actual", output(data, "actual") * 2)
    restamp(data)
    assert data["result"]["status"] == "failed"
    outcome = replay(document(data), rerun=True)
    assert outcome.disagreements[1:] == ["re-run: stored failed, the candidate now passed"]


def test_a_candidate_name_unknown_here_is_marked_not_trusted(tmp_path: Path) -> None:
    data = _report(tmp_path, "unknown", make_check(CANDIDATE, "gemm", m=2, n=3, k=4))
    data["config"]["require_backend"] = data["result"]["backend"] = "metalgpu"
    outcome = replay(document(data))
    # A plugin that is not installed here looks the same: marked, and --rerun cannot run it.
    assert outcome.notes[0].startswith("the backend pair cannot be checked for a self-test here")
    assert 'unsupported required backend "metalgpu"' in outcome.notes[0]
    assert not outcome.self_test
    # Its identity cannot be derived here, so a self-test sentence is taken as written.
    sentence = " SELF-TEST: the candidate metalgpu is the reference numpy's own backend."
    declared = json.loads(json.dumps(data))
    declared["coverage"] += sentence
    assert replay(document(declared)).self_test
    assert not replay(document(declared)).passed
    rerun = replay(document(data), rerun=True)
    assert rerun.checked[-1].startswith("candidate not re-run to an output: failed (backend")
