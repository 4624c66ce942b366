"""Every report records which library computed each side (``computed_by``, schema v3).

A name is a label: NumPy registered as ``fastlib`` passes the name-based self-test check, so
the report records the module of the arrays each side returned. Both sides from one library
is not an independent pair and, like a self-test, never a pass; a genuine pair of libraries
records two; editing the record is printed as claimed and never turns a failure into a pass,
and what replay can re-derive (the reference's library, the candidate's under ``--rerun``)
is bound.
"""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import diffcheck
from diffcheck.adapters import _registry, resolve
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import SCHEMA_VERSION, load_report, replay
from diffcheck.report.identity import claimed_identity, independence
from diffcheck.report.models import ReportDocumentV3
from diffcheck.report.upgrade import upgrade_document
from diffcheck.runner import run_check
from diffcheck.testing import perturb
from forgery import as_v2, as_v3, document

SCHEMA_DIR = Path(__file__).parents[1] / "reports" / "schema"
SMALL = {"m": 4, "n": 8, "k": 6}


@pytest.fixture
def fastlib(monkeypatch: pytest.MonkeyPatch) -> str:
    """``fastlib`` installed as a backend: NumPy under another name (tests/fakes.py)."""
    registered = _registry.adapter_entry_points()
    entry = EntryPoint("fastlib", "fakes:NumpyUnderAnotherName", _registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(_registry, "adapter_entry_points", lambda: registered | {"fastlib": entry})
    return "fastlib"


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_numpy_under_another_name_is_recorded_as_numpy_and_never_passes(
    fastlib: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "fastlib.json"
    code, out, err = _cli(
        ["run", "--require-backend", fastlib, "--op", "gemm", "--report", str(report)], capsys
    )
    # The numbers agree (it is NumPy), so the status is passed; the run is still no pass.
    assert "status: passed" in out
    assert code == 1
    assert err.startswith("diffcheck: NOT INDEPENDENT: both sides returned numpy arrays")
    assert err.count("\n") == 1
    data = json.loads(report.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    computed_by = data["computed_by"]
    assert computed_by["reference"]["module"] == computed_by["candidate"]["module"] == "numpy"
    assert computed_by["candidate"]["array_type"] == "numpy.ndarray"
    assert computed_by["reference"]["version"] == computed_by["candidate"]["version"]
    assert computed_by["probe"] is None  # one module on both sides: nothing left to probe

    stored = load_report(report)
    assert not bool(stored)
    outcome = replay(stored)
    assert outcome.agrees
    assert outcome.status == "passed"
    assert outcome.one_library
    assert not outcome.self_test
    assert outcome.independent is False
    assert not outcome.passed
    assert (
        f"NOT INDEPENDENT: the candidate {fastlib} returned the reference's own library's "
        "arrays; like a self-test, it is never a pass for the backend"
    ) in outcome.notes

    code, out, _ = _cli(["replay", "--require-pass", str(report)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        f"{report}: agrees: passed (NOT INDEPENDENT: one library on both sides, not a pass "
        "for the backend)"
    )
    assert any("NOT INDEPENDENT: both sides returned numpy arrays" in line for line in lines)
    # Without --require-pass the report agrees: the record is honest, just not a pass.
    assert main(["replay", str(report)]) == 0


def test_the_python_api_run_is_false_for_numpy_under_another_name(fastlib: str) -> None:
    document_ = diffcheck.run({"require_backend": fastlib, "op": "gemm", **SMALL})
    assert document_.result is not None
    assert document_.result.status == "passed"
    assert document_.one_library
    assert not document_


@pytest.mark.parametrize("candidate", ["torch:cpu", "mlx:cpu"])
def test_a_genuine_pair_records_two_libraries_and_an_independent_probe(
    candidate: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(candidate.split(":")[0])
    report = tmp_path / "pair.json"
    run_check(make_check(candidate, "gemm", **SMALL), report)
    computed_by = json.loads(report.read_text())["computed_by"]
    library = candidate.split(":")[0]
    assert computed_by["reference"]["module"] == "numpy"
    assert computed_by["reference"]["blas"]  # NumPy's BLAS, from numpy.show_config
    assert computed_by["candidate"]["module"] == library
    assert computed_by["candidate"]["version"]
    assert computed_by["candidate"]["blas"] is None
    probe = computed_by["probe"]
    assert probe["reference_sum_bits"] != probe["candidate_sum_bits"]

    outcome = replay(load_report(report), rerun=True)
    assert outcome.agrees, outcome.disagreements
    assert outcome.independent is True
    assert not outcome.one_library
    assert outcome.passed
    assert main(["replay", "--require-pass", str(report)]) == 0
    out = capsys.readouterr().out
    assert f"{report}: note: computed by: reference numpy" in out
    assert f"candidate {library}" in out
    assert "independent: the 131072-element sums differ" in out


def test_a_delegating_wrapper_is_printed_as_not_independent_by_its_probe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # array_api_strict wraps NumPy: its own module, NumPy's sums. Its layer (dtype rules,
    # dispatch) is what a check of it tests, and a probe of one sum cannot decide what
    # computed the op (docs/evidence.md), so it is shown, not counted as a self-test.
    report = tmp_path / "strict.json"
    code, _, err = _cli(
        ["run", "--require-backend", "array_api_strict", "--op", "gemm", "--report", str(report)],
        capsys,
    )
    assert (code, err) == (0, "")
    probe = json.loads(report.read_text())["computed_by"]["probe"]
    assert probe["reference_sum_bits"] == probe["candidate_sum_bits"]
    stored = load_report(report)
    assert bool(stored)
    outcome = replay(stored)
    assert outcome.independent is False
    assert not outcome.one_library
    assert outcome.passed
    assert outcome.computed_by is not None
    assert "NOT INDEPENDENT: a 131072-element float32 sum is bit-identical" in outcome.computed_by
    code, out, _ = _cli(["replay", "--require-pass", str(report)], capsys)
    assert code == 0
    assert out.splitlines()[0] == f"{report}: agrees: passed"
    assert "bit-identical on both sides" in out


def test_a_backend_storing_numpy_arrays_and_summing_as_numpy_is_one_library(
    tmp_path: Path,
) -> None:
    # The example adapter stores its values in NumPy arrays and computes through its own
    # namespace (a hand-written GEMM loop), whose sum is NumPy's bit for bit: NumPy under
    # another name as far as the probe can tell, so never a pass (issue 33: it was counted
    # passed in sweeps while its replay printed NOT INDEPENDENT).
    pytest.importorskip("diffcheck_example")
    report = tmp_path / "example.json"
    run_check(make_check("example:cpu", "gemm", **SMALL), report)
    computed_by = json.loads(report.read_text())["computed_by"]
    assert computed_by["candidate"]["module"] == "numpy"
    assert computed_by["candidate"]["namespace"] == "diffcheck_example.xp"
    assert computed_by["reference"]["namespace"] == "array_api_compat.numpy"
    assert computed_by["probe"] is not None
    outcome = replay(load_report(report))
    assert outcome.agrees
    assert outcome.one_library
    assert not outcome.passed
    assert outcome.independent is False
    assert outcome.computed_by is not None
    assert "bit-identical" in outcome.computed_by


def test_a_declared_self_test_records_one_library(tmp_path: Path) -> None:
    report = tmp_path / "self.json"
    run_check(make_check("numpy:cpu", "gemm", allow_self_test=True, **SMALL), report)
    outcome = replay(load_report(report))
    assert outcome.agrees
    assert outcome.self_test
    assert outcome.one_library
    assert not outcome.passed


def _failing(tmp_path: Path) -> dict[str, Any]:
    """A genuine failing report of array_api_strict (a NaN planted in its output)."""
    report = tmp_path / "failing.json"
    run_check(
        make_check("array_api_strict", "gemm", **SMALL),
        report,
        candidate=perturb(resolve("array_api_strict"), "nan"),
    )
    data: dict[str, Any] = json.loads(report.read_text())
    assert data["result"]["status"] == "failed"
    assert data["computed_by"]["candidate"]["module"] == "array_api_strict"
    return data


def test_an_edited_candidate_fingerprint_is_claimed_and_never_makes_a_failure_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _failing(tmp_path)
    data["computed_by"]["candidate"] |= {"module": "torch", "version": "9.9", "blas": "MKL 99"}
    data["computed_by"]["probe"]["candidate_sum_bits"] = "00000000"
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data))
    outcome = replay(load_report(path))
    assert outcome.status == "failed"
    assert not outcome.passed
    claims = dict(outcome.claims)
    assert claims["computed_by.candidate"].startswith("torch 9.9")
    assert "candidate sum 00000000" in claims["computed_by.probe"]
    code, out, _ = _cli(["replay", "--require-pass", "--claims", str(path)], capsys)
    assert code == 1
    assert "computed_by.candidate='torch 9.9" in out.splitlines()[-1]
    assert out.splitlines()[-1].startswith(f"{path}: claimed, not verified: ")
    # Re-running the candidate binds its library: the edit no longer agrees.
    rerun = replay(load_report(path), rerun=True)
    assert any(p.startswith("computed_by.candidate: stored torch") for p in rerun.disagreements)


def test_hiding_one_library_is_caught_by_rerun_and_renaming_the_reference_always(
    fastlib: str, tmp_path: Path
) -> None:
    report = tmp_path / "fastlib.json"
    run_check(make_check(fastlib, "gemm", **SMALL), report)
    honest = json.loads(report.read_text())
    # The candidate's library is its testimony: claimed without --rerun, bound with it.
    assert honest["computed_by"]["candidate"]["namespace"] == "array_api_compat.numpy"
    hidden = json.loads(json.dumps(honest))
    hidden["computed_by"]["candidate"]["module"] = "fastlib"
    without = replay(document(hidden))
    assert without.agrees
    # The claimed module changes nothing: the namespace is bound to fastlib's adapter here,
    # which computes through NumPy's, the reference's (issue 33: a claimed field never
    # turns a one-library pair into a pass).
    assert without.one_library
    assert not without.passed
    assert "computed_by.candidate" in dict(without.claims)
    rerun = replay(document(hidden), rerun=True)
    assert not rerun.agrees
    assert any(
        "computed_by.candidate: stored fastlib" in p and "returned numpy arrays" in p
        for p in rerun.disagreements
    )
    assert replay(document(honest), rerun=True).agrees
    # Claiming a namespace of its own hides it the same way, and --rerun binds it too.
    hidden = json.loads(json.dumps(honest))
    hidden["computed_by"]["candidate"]["namespace"] = "fastlib.xp"
    assert replay(document(hidden)).disagreements == [
        "result.backend: fastlib computes through numpy (here), but computed_by.candidate "
        "records fastlib.xp: the report names a backend that is not what computed it"
    ]
    assert any("via fastlib.xp" in p for p in replay(document(hidden), rerun=True).disagreements)
    # The reference's library is recomputed by every replay: renaming it disagrees.
    for key, value in (("module", "fastlib"), ("namespace", "fastlib.xp")):
        renamed = json.loads(json.dumps(honest))
        renamed["computed_by"]["reference"][key] = value
        assert any(
            p.startswith("computed_by.reference: stored ")
            for p in replay(document(renamed)).disagreements
        ), key
    # Deleting the reference's side disagrees; deleting the record leaves what an upgraded
    # v2 report says, and replay says that it is not recorded.
    gone = json.loads(json.dumps(honest))
    gone["computed_by"]["reference"] = None
    assert any(
        p.startswith("computed_by.reference: stored null")
        for p in replay(document(gone)).disagreements
    )
    gone["computed_by"] = None
    outcome = replay(document(gone))
    assert outcome.computed_by is not None
    assert "not recorded" in outcome.computed_by
    # A record of what computed an output that is not there is no record at all.
    not_run = json.loads(json.dumps(honest))
    not_run["result"] |= {"status": "failed", "reason": "required backend execution failed: X"}
    not_run["result"] |= {"actual": None, "metrics": None}
    not_run["executed_precision"] = None
    not_run.pop("segments", None)
    not_run.pop("submission_metrics", None)
    assert "computed_by is stored but the candidate returned no output" in (
        replay(document(not_run)).disagreements
    )


def test_v3_needs_its_own_schema_and_v2_reports_still_replay_and_upgrade(tmp_path: Path) -> None:
    data = _failing(tmp_path)
    v3 = json.loads((SCHEMA_DIR / f"v{SCHEMA_VERSION}.json").read_text())
    v2 = json.loads((SCHEMA_DIR / "v2.json").read_text())
    jsonschema.validate(data, v3)
    # The field could not be added to v2: a v2 reader forbids a key it does not name.
    claimed_v2 = json.loads(json.dumps(data)) | {"schema_version": 2}
    claimed_v2["result"]["schema_version"] = 2
    with pytest.raises(jsonschema.ValidationError, match="computed_by"):
        jsonschema.validate(claimed_v2, v2)
    # A v2 report (no computed_by) still reads and replays; nothing is said of its libraries.
    old = as_v2(data)
    jsonschema.validate(old, v2)
    outcome = replay(document(old))
    assert outcome.agrees
    assert outcome.computed_by is None
    assert outcome.independent is None
    # Upgraded, it is v3 with computed_by null: not recorded, never invented.
    upgraded = upgrade_document(document(old))
    assert upgraded.schema_version == SCHEMA_VERSION
    assert upgraded.computed_by is None
    again = replay(upgraded)
    assert again.agrees
    assert again.computed_by == (
        "computed by: not recorded (upgraded from schema v2, or the record was removed); the "
        "pair's independence is unknown"
    )
    jsonschema.validate(json.loads(upgraded.to_json()), v3)


@pytest.mark.parametrize("side", ["reference", "candidate"])
def test_a_side_that_returned_host_values_only_is_named_and_leaves_independence_unknown(
    side: str, tmp_path: Path
) -> None:
    report = tmp_path / "strict.json"
    run_check(make_check("array_api_strict", "gemm", **SMALL), report)
    stored = load_report(report)
    computed_by = stored.computed_by  # type: ignore[attr-defined]
    edited = stored.model_copy(update={"computed_by": computed_by.model_copy(update={side: None})})
    assert independence(edited) == (
        None,
        f"computed by: the {side} returned host values only; which library computed it is "
        "not recorded, and the pair's independence is unknown",
    )


def test_the_claimed_parts_of_computed_by_are_listed_with_their_values(tmp_path: Path) -> None:
    report = tmp_path / "strict.json"
    run_check(make_check("array_api_strict", "gemm", **SMALL), report)
    stored = load_report(report)
    computed_by = stored.computed_by  # type: ignore[attr-defined]
    reference, probe = computed_by.reference, computed_by.probe
    assert claimed_identity(stored) == [
        ("computed_by.reference.version", reference.version),
        ("computed_by.reference.blas", str(reference.blas)),
        ("computed_by.candidate", str(computed_by.candidate.fingerprint())),
        (
            "computed_by.probe",
            f"131072 elements: reference sum {probe.reference_sum_bits}, "
            f"candidate sum {probe.candidate_sum_bits}; "
            f"exp: reference {probe.reference_exp_sha256[:12]}, "
            f"candidate {probe.candidate_exp_sha256[:12]}; "
            f"matmul: reference {probe.reference_matmul_sha256[:12]}, "
            f"candidate {probe.candidate_matmul_sha256[:12]}",
        ),
    ]
    assert str(computed_by.candidate.fingerprint()).startswith("array_api_strict ")
    bare = stored.model_copy(
        update={"computed_by": computed_by.model_copy(update={"reference": None, "probe": None})}
    )
    assert claimed_identity(bare) == [
        ("computed_by.candidate", str(computed_by.candidate.fingerprint())),
        ("computed_by.probe", "null"),
    ]
    assert claimed_identity(stored.model_copy(update={"computed_by": None})) == []


def test_a_check_without_a_candidate_output_says_nothing_of_its_libraries(tmp_path: Path) -> None:
    # computed_by is recorded once both sides ran to an output: without one, its absence is
    # not a record removed, and nothing is printed; with one, the absence is said.
    report = tmp_path / "strict.json"
    run_check(make_check("array_api_strict", "gemm", **SMALL), report)
    stored = load_report(report)
    assert stored.result is not None
    removed = stored.model_copy(update={"computed_by": None})
    assert independence(removed)[1] is not None
    never_ran = removed.model_copy(
        update={"result": stored.result.model_copy(update={"actual": None})}
    )
    assert independence(never_ran) == (None, None)


def test_the_claimed_probes_show_a_probe_either_side_ran_and_omit_one_neither_ran(
    tmp_path: Path,
) -> None:
    report = tmp_path / "strict.json"
    run_check(make_check("array_api_strict", "gemm", **SMALL), report)
    stored = load_report(report)
    computed_by = stored.computed_by  # type: ignore[attr-defined]
    probe = computed_by.probe
    ref_exp, cand_matmul = probe.reference_exp_sha256, probe.candidate_matmul_sha256

    def claimed(**edits: str | None) -> str:
        edited = computed_by.model_copy(update={"probe": probe.model_copy(update=edits)})
        return dict(claimed_identity(stored.model_copy(update={"computed_by": edited})))[
            "computed_by.probe"
        ]

    sums = (
        f"131072 elements: reference sum {probe.reference_sum_bits}, "
        f"candidate sum {probe.candidate_sum_bits}"
    )
    # exp probed on the reference only, matmul on the candidate only.
    assert claimed(candidate_exp_sha256=None, reference_matmul_sha256=None) == (
        f"{sums}; exp: reference {ref_exp[:12]}, candidate not probed; "
        f"matmul: reference not probed, candidate {cand_matmul[:12]}"
    )
    # Neither side ran exp: its part is left out, matmul's stays.
    assert claimed(reference_exp_sha256=None, candidate_exp_sha256=None) == (
        f"{sums}; matmul: reference {probe.reference_matmul_sha256[:12]}, "
        f"candidate {cand_matmul[:12]}"
    )
    none = {
        f"{side}_{what}_sha256": None
        for side in ("reference", "candidate")
        for what in ("exp", "matmul")
    }
    assert claimed(**none) == sums


def test_a_v3_report_whose_computed_by_was_removed_says_its_independence_is_unknown(
    tmp_path: Path,
) -> None:
    report = tmp_path / "strict.json"
    run_check(make_check("array_api_strict", "gemm", **SMALL), report)
    v3 = as_v3(json.loads(report.read_text()))
    v3["computed_by"] = None
    stored = document(v3)
    assert type(stored) is ReportDocumentV3
    assert independence(stored) == (
        None,
        "computed by: not recorded (upgraded from schema v2, or the record was removed); the "
        "pair's independence is unknown",
    )
    assert independence(document(as_v2(json.loads(report.read_text())))) == (None, None)
