"""What binding the candidate's name says, word for word, and when it cannot judge the pair.

Replay's lines are what a reader acts on: each disagreement and claim names the field, the
backend and why. The one-library judgment (``report.candidate``) needs the reference's probes
here; a reference that cannot be resolved, run or probed leaves the pair not one library
(the reference's own replay says why), never a guess.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diffcheck.adapters import Probe, resolve
from diffcheck.config import make_check
from diffcheck.report import candidate, replay
from diffcheck.runner import run_check
from fakes import FakeAdapter
from forgery import document

pytestmark = pytest.mark.usefixtures("fake_backends")

SMALL: dict[str, Any] = {"m": 4, "n": 8, "k": 5}
NOT_WHAT = "the report names a backend that is not what computed it"


def _data(tmp_path: Path, backend: str, name: str = "report") -> dict[str, Any]:
    path = tmp_path / f"{name}.json"
    run_check(make_check(backend, "gemm", **SMALL), path)
    found: dict[str, Any] = json.loads(path.read_text())
    return found


def _relabelled(data: dict[str, Any], backend: str) -> dict[str, Any]:
    forged: dict[str, Any] = json.loads(json.dumps(data))
    forged["config"]["require_backend"] = forged["result"]["backend"] = backend
    return forged


@pytest.mark.parametrize(
    ("target", "where"),
    [("torch:cpu", "torch (here)"), ("metal", "metal (by its adapter's declared identity)")],
)
def test_a_relabelled_pass_says_what_the_name_computes_through(
    tmp_path: Path, target: str, where: str
) -> None:
    if target == "torch:cpu":
        pytest.importorskip("torch")
    outcome = replay(document(_relabelled(_data(tmp_path, "array_api_strict"), target)))
    assert outcome.disagreements[0] == (
        f"result.backend: {target} computes through {where}, but computed_by.candidate "
        f"records array_api_strict: {NOT_WHAT}"
    )


def test_a_genuine_pass_lists_its_name_as_claimed_and_is_independent(tmp_path: Path) -> None:
    outcome = replay(document(_data(tmp_path, "array_api_strict")))
    assert outcome.agrees
    assert outcome.passed
    assert not outcome.one_library
    assert (
        "result.backend",
        "array_api_strict (its library as recorded, itself the candidate's word; --rerun binds it)",
    ) in outcome.claims


def test_a_candidate_that_returned_host_values_only_is_claimed_as_unrecorded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "phases.json"
    run_check(make_check("fake", "context-lifecycle", tokens=1, intermediate=2, k=3), path)
    data = json.loads(path.read_text())
    assert data["computed_by"]["candidate"] is None
    outcome = replay(document(data))
    assert outcome.agrees, outcome.disagreements
    assert ("result.backend", "fake (which library computed it is not recorded)") in (
        outcome.claims
    )


def test_a_backend_no_adapter_answers_to_is_claimed_with_the_first_line_of_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _relabelled(_data(tmp_path, "array_api_strict"), "notinstalled")
    outcome = replay(document(data))
    assert outcome.agrees
    assert (
        "result.backend",
        "notinstalled (no adapter of that name here: unsupported required backend "
        "\"notinstalled\"; 'diffcheck backends' lists every backend)",
    ) in outcome.claims
    # An error without a message is named by its type.
    real = candidate.resolve  # type: ignore[attr-defined]

    def silent(name: str) -> Any:
        if name == "notinstalled":
            raise RuntimeError()
        return real(name)

    monkeypatch.setattr(candidate, "resolve", silent)
    again = replay(document(data))
    assert ("result.backend", "notinstalled (no adapter of that name here: RuntimeError)") in (
        again.claims
    )


def test_a_check_whose_candidate_returned_nothing_is_not_one_library(tmp_path: Path) -> None:
    # The candidate (NumPy inside) raised: nothing computed, so nothing is one library.
    data = _data(tmp_path, "fakeraise")
    assert data["result"]["actual"] is None
    assert data["computed_by"] is None
    outcome = replay(document(data))
    assert outcome.agrees
    assert outcome.one_library is False


@pytest.mark.parametrize("removed", ["computed_by", "probe", "reference"])
def test_an_honest_pair_without_its_record_or_probe_is_not_one_library(
    tmp_path: Path, removed: str
) -> None:
    data = _data(tmp_path, "array_api_strict")
    if removed == "computed_by":
        data["computed_by"] = None
    else:
        data["computed_by"][removed] = None
    outcome = replay(document(data))
    assert not outcome.one_library


def _wraplib_case(tmp_path: Path) -> tuple[Any, Any]:
    forged = document(_data(tmp_path, "wraplib"))
    check = make_check("wraplib", "gemm", **SMALL)
    return check, forged.computed_by  # type: ignore[attr-defined]


def test_numpy_inside_is_one_library_by_its_adapter_or_by_its_claimed_probes(
    tmp_path: Path,
) -> None:
    check, computed_by = _wraplib_case(tmp_path)
    adapter = resolve("wraplib")
    assert candidate._one_library_here(check, adapter, computed_by)
    assert candidate._one_library_here(check, None, computed_by)  # its stored probes
    assert candidate._one_library_here(check, adapter, None)  # its adapter here
    assert not candidate._one_library_here(check, None, None)  # nothing to judge by
    honest = computed_by.model_copy(update={"probe": None})
    assert not candidate._one_library_here(check, None, honest)
    for side in ("reference", "candidate"):
        unknown = computed_by.model_copy(update={side: None})
        assert not candidate._one_library_here(check, None, unknown)


@pytest.mark.parametrize("broken", ["unknown", "unavailable", "unprobed"])
def test_a_reference_that_cannot_be_probed_here_judges_no_pair_one_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    check, computed_by = _wraplib_case(tmp_path)
    adapter = resolve("wraplib")
    real = candidate.resolve  # type: ignore[attr-defined]

    def reference_broken(name: str) -> Any:
        if name != check.reference:
            return real(name)
        if broken == "unknown":
            raise LookupError(name)
        return FakeAdapter(probe=Probe.unavailable("not here"))

    monkeypatch.setattr(candidate, "resolve", reference_broken)
    if broken == "unprobed":
        real_patterns = candidate.probe_patterns  # type: ignore[attr-defined]
        monkeypatch.setattr(candidate, "resolve", real)
        monkeypatch.setattr(
            candidate,
            "probe_patterns",
            lambda found: None if found.name == "numpy" else real_patterns(found),
        )
    assert not candidate._one_library_here(check, adapter, computed_by)


def test_rerun_binds_the_candidates_recorded_library_to_the_reruns(tmp_path: Path) -> None:
    data = _data(tmp_path, "array_api_strict")
    data["computed_by"]["candidate"]["array_type"] = "array_api_strict.Forged"
    outcome = replay(document(data), rerun=True)
    assert [p for p in outcome.disagreements if p.startswith("computed_by.candidate")] == [
        "computed_by.candidate: stored array_api_strict (array_api_strict.Forged via "
        "array_api_strict), the re-run returned array_api_strict arrays "
        "(array_api_strict._array_object.Array via array_api_strict)"
    ]


def test_a_backend_not_available_here_is_claimed_as_its_word(tmp_path: Path) -> None:
    outcome = replay(document(_relabelled(_data(tmp_path, "array_api_strict"), "metal")))
    assert ("result.backend", "metal (not available here: what computed it is its word)") in (
        outcome.claims
    )
    assert not outcome.one_library


def test_the_device_of_a_library_with_several_is_claimed_until_rerun(tmp_path: Path) -> None:
    if not resolve("mlx:cpu").probe().is_available:
        pytest.skip("mlx:cpu is not available here")
    data = _data(tmp_path, "mlx:cpu")
    claim = ("result.backend device", "cpu (one namespace for every device; --rerun binds it)")
    outcome = replay(document(data))
    assert outcome.passed
    assert claim in outcome.claims
    again = replay(document(data), rerun=True)
    assert again.agrees, again.disagreements
    assert [c for c in again.claims if c[0].startswith("result.backend")] == []


def _gone(monkeypatch: pytest.MonkeyPatch, name: str, adapter: Any) -> None:
    """``name`` resolves here to ``adapter``, which says it is not available."""
    real = candidate.resolve  # type: ignore[attr-defined]
    adapter._probe = lambda: Probe.unavailable("not here")
    monkeypatch.setattr(
        candidate, "resolve", lambda asked: adapter if asked == name else real(asked)
    )


def test_one_namespace_on_both_sides_is_one_library_as_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A record whose candidate computed through the reference's own namespace, named as a
    # backend that declares that namespace and is not available here (so neither its probes
    # nor the record's, which were removed, can say it): one library, as bound.
    data = _data(tmp_path, "array_api_strict")
    data["computed_by"]["candidate"] = dict(data["computed_by"]["reference"])
    data["computed_by"]["probe"] = None
    assert candidate.CandidateIdentity().one_library is False
    _gone(monkeypatch, "fake", FakeAdapter())
    identity = candidate.candidate_identity(
        document(_relabelled(data, "fake")), make_check("fake", "gemm", **SMALL), False
    )
    assert identity.problems == []
    assert identity.one_library
    assert identity.claims == [
        ("result.backend", "fake (not available here: what computed it is its word)")
    ]


def test_an_adapter_not_available_here_is_never_probed_its_stored_probes_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes import WrapLib

    data = _data(tmp_path, "wraplib")
    check = make_check("wraplib", "gemm", **SMALL)
    _gone(monkeypatch, "wraplib", WrapLib())
    assert candidate.candidate_identity(document(data), check, False).one_library
    # Its stored probes edited to differ: only probing the adapter could say one library,
    # and an adapter that is not available here is not asked.
    probe = data["computed_by"]["probe"]
    probe["candidate_exp_sha256"] = probe["candidate_matmul_sha256"] = "f" * 64
    found = candidate.candidate_identity(document(data), check, False)
    assert found.problems == []
    assert found.one_library is False


def test_a_device_is_claimed_only_for_a_library_with_several(tmp_path: Path) -> None:
    claimed = list(replay(document(_data(tmp_path, "wraplib"))).claims)
    assert [c for c in claimed if c[0] == "result.backend device"] == []
    if not resolve("mlx").probe().is_available:
        pytest.skip("mlx is not available here")
    outcome = replay(document(_data(tmp_path, "mlx", "mlx")))
    assert (
        "result.backend device",
        "the library's default (one namespace for every device; --rerun binds it)",
    ) in outcome.claims


def test_lifecycle_chains_under_a_backend_with_contexts_are_refused_in_full(
    tmp_path: Path,
) -> None:
    from diffcheck.ops.lifecycle import CHAIN_COVERAGE
    from forgery import restamp

    path = tmp_path / "phases.json"
    run_check(make_check("fake", "context-lifecycle", tokens=1, intermediate=2, k=3), path)
    forged = json.loads(path.read_text())
    forged.pop("submission_phases")
    forged.pop("submission_metrics", None)
    forged["coverage"] = CHAIN_COVERAGE
    restamp(forged)
    assert (
        "submission_phases: fake records command contexts at f32 here, so it runs the "
        "lifecycle's phases; a report of four independent chains is not its run"
    ) in replay(document(forged)).disagreements
