"""Bundle replay checks the world, not the bundle: every stored field is derived or claimed.

Genuine bundles of several injected faults replay with no disagreement. A forger who edits
any derived field (the verdict's kind, reason, bound, blame, ``finding.dtype``; either
stored output; an input), re-stamping digests and sizes as anyone can, gets DISAGREES or
NO LONGER REPRODUCES, never REPRODUCES, unless the edited document is still what the
computations give. Library, version and device are claims: editing them changes only the
"claimed, not verified" lines.
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bundle_docs import restamp
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.cli import main
from diffcheck.errors import BundleError
from diffcheck.search import search_api
from diffcheck.search.bundle import BUNDLE_FUNCTIONS, bundle_from
from diffcheck.search.recipes import call_for
from diffcheck.search.record import example_of
from diffcheck.search.replay import BundleReplay, replay_bundle
from diffcheck.values.call import call_on, host_inputs
from diffcheck.values.compare import host_value
from value_fakes import FaultyAdapter, FaultyNamespace, nudge

#: Fault -> the function it is injected into (one finding of each kind of divergence).
CASES = {
    "ulp3": "exp",
    "dtype": "argmax",
    "raises": "atan2",
    "missing": "hypot",
    "special-case": "expm1",
    "shift-wrap": "bitwise_left_shift",
    "nan": "log1p",
}
#: The search's seed per fault (3 otherwise): each finds its fault and shrinks it in about a
#: second, where seed 3 first met log1p's NaN in a long complex array and shrank it for 14 s
#: (the module's whole setup went from about 26 s to 7 s).
SEEDS = {"nan": 4, "ulp3": 4, "special-case": 4}


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One genuine bundle document per fault."""
    found: dict[str, dict[str, Any]] = {}
    for fault, function in CASES.items():
        out = tmp_path_factory.mktemp(fault) / "out"
        search_api(
            FaultyAdapter(fault),
            functions=[function],
            examples=10,
            seed=SEEDS.get(fault, 3),
            out=out,
            isolate=False,
        )
        documents = [json.loads(p.read_text()) for p in sorted(out.glob("bundles/*.json"))]
        # The fault's own kind of finding first (a search may find a raise beside it).
        documents.sort(key=lambda d: (d["finding"]["kind"] == "raises") != (fault == "raises"))
        found[fault] = documents[0]
    return found


def _replay(doc: dict[str, Any], fault: str, tmp_path: Path | None = None) -> BundleReplay | str:
    """The replay of ``doc`` on NumPy and the faulty backend, or the one-line refusal.

    In-process: none of these faults crashes or hangs, and what is judged here is the
    evidence, not the worker around the calls (tests/search/test_bundle_replay_isolation.py
    has that); a worker per example would cost the 2,000-example CI run minutes.
    """
    path = (tmp_path or Path(".")) / "bundle.json"
    try:
        bundle = bundle_from(doc, where=str(path))
        return replay_bundle(
            path,
            bundle=bundle,
            reference=NumpyAdapter(),
            candidate=FaultyAdapter(fault),
            isolate=False,
        )
    except BundleError as error:
        return str(error)


@pytest.mark.parametrize("fault", sorted(CASES))
def test_a_genuine_bundle_reproduces_with_nothing_in_dispute(
    genuine: dict[str, dict[str, Any]], fault: str
) -> None:
    outcome = _replay(genuine[fault], fault)
    assert isinstance(outcome, BundleReplay), outcome.disagreements
    assert outcome.disagreements == ()
    assert outcome.status == "reproduces"
    assert any(c.startswith(f"candidate faulty[{fault}]: library") for c in outcome.claims)


def test_the_command_prints_claims_as_not_verified(
    genuine: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(genuine["ulp3"]))
    assert main(["replay", str(path)]) == 2  # the fake candidate is not installed: not_run
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1
    # Why it did not run: the registry's own words for the backend it does not know.
    assert f'{path}: not_run: exp [value]: unsupported required backend "faulty[ulp3]"' in (
        captured.err
    )
    claims = [line for line in captured.out.splitlines() if "claimed, not verified" in line]
    assert any("candidate faulty[ulp3]: library" in line for line in claims)
    assert any("reference numpy" in line for line in claims)


@pytest.mark.parametrize(
    ("outcome", "line"),
    [
        (
            BundleReplay("reproduces", "exp", "value", "1 of 2 elements\n  differ", None, True),
            "REPRODUCES: exp [value]: 1 of 2 elements differ; candidate output bit-identical "
            "to the stored one",
        ),
        (
            BundleReplay("no_longer_reproduces", "exp", "value", "it passes now", None, False),
            "NO LONGER REPRODUCES: exp [value]: it passes now; candidate output differs from "
            "the stored one",
        ),
        (
            BundleReplay("reproduces", "exp", "crash", "the worker was killed by SIGFPE"),
            "REPRODUCES: exp [crash]: the worker was killed by SIGFPE",
        ),
        (
            BundleReplay("not_run", "exp", "value", "mlx:cpu is unavailable: no mlx"),
            "not_run: exp [value]: mlx:cpu is unavailable: no mlx",
        ),
        (
            BundleReplay(
                "disagrees", "exp", "value", "", disagreements=("finding.kind: x", "bound.kind: y")
            ),
            "DISAGREES: exp: finding.kind: x; bound.kind: y",
        ),
    ],
)
def test_the_replay_line_says_status_function_kind_and_why(
    outcome: BundleReplay, line: str
) -> None:
    # What a person reads: the status in its words, the reason on one line, and whether the
    # candidate's bits now are the stored ones only when the call ran again.
    assert outcome.line(Path("b.json")) == f"b.json: {line}"


def _swap_outputs(doc: dict[str, Any]) -> None:
    outputs = doc["outputs"]
    outputs["reference"], outputs["candidate"] = outputs["candidate"], outputs["reference"]


@pytest.mark.parametrize("fault", ["ulp3", "shift-wrap", "nan", "special-case"])
def test_swapped_outputs_disagree(genuine: dict[str, dict[str, Any]], fault: str) -> None:
    doc = copy.deepcopy(genuine[fault])
    _swap_outputs(doc)
    outcome = _replay(doc, fault)
    assert isinstance(outcome, BundleReplay)
    assert outcome.status == "disagrees"
    assert any(d.startswith("outputs.reference: numpy") for d in outcome.disagreements)


@pytest.mark.parametrize("fault", ["ulp3", "shift-wrap", "nan"])
def test_swapped_sides_do_not_reproduce_while_blaming_numpy(
    genuine: dict[str, dict[str, Any]], fault: str
) -> None:
    from diffcheck.search.stored import stored_verdict

    doc = copy.deepcopy(genuine[fault])
    _swap_outputs(doc)
    doc["reference"], doc["candidate"] = doc["candidate"], doc["reference"]
    assert doc["finding"]["blame"]["side"] == "candidate"  # now it blames NumPy
    bundle = bundle_from(doc, where="b")
    sides = {"reference": FaultyAdapter(fault), "candidate": NumpyAdapter()}  # as now named
    outcome = replay_bundle(Path("b"), bundle=bundle, **sides)
    assert outcome.status == "disagrees"
    assert any(
        d.startswith("finding.blame.side: stored 'candidate'") for d in outcome.disagreements
    )
    # The careful forger writes the verdict the swapped outputs give: then it is the honest
    # finding of that pair (the faulty reference is blamed), never one blaming NumPy.
    verdict = stored_verdict(bundle, example_of(bundle))
    assert verdict.blame is not None
    doc["finding"].update(
        kind=verdict.kind,
        reason=verdict.reason or "",
        blame={
            "side": verdict.blame.side,
            "evidence": verdict.blame.evidence,
            "why": verdict.blame.why,
        },
    )
    again = replay_bundle(Path("b"), bundle=bundle_from(doc, where="b"), **sides)
    if again.status == "reproduces":
        assert again.verdict is not None
        assert again.verdict.blame is not None
        assert again.verdict.blame.side != "candidate"


def test_a_mislabelled_dtype_is_a_disagreement_of_that_field(
    genuine: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = copy.deepcopy(genuine["ulp3"])
    doc["finding"]["dtype"] = "float64" if doc["finding"]["dtype"] != "float64" else "float32"
    outcome = _replay(doc, "ulp3")
    assert isinstance(outcome, BundleReplay)
    assert outcome.status == "disagrees"
    assert [d.split(":")[0] for d in outcome.disagreements] == ["finding.dtype"]
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert "DISAGREES: exp: finding.dtype: stored" in err
    assert "NO LONGER REPRODUCES" not in err


# ---- the forger ---------------------------------------------------------------------------

_VERDICT_FIELDS = [
    ("finding", "kind"),
    ("finding", "dtype"),
    ("finding", "reason"),
    ("finding", "blame"),
    ("bound", "kind"),
    ("bound", "ulps"),
    ("bound", "nmse"),
    ("bound", "atol"),
    ("bound", "provenance"),
]
_CLAIMED = [
    (side, field)
    for side in ("reference", "candidate")
    for field in ("library", "version", "device")
]
_ANY_VALUE = st.one_of(
    st.none(),
    st.sampled_from(["value", "dtype", "nan", "raises", "shape", "exact", "ulp", "float64"]),
    st.text(max_size=20),
    st.floats(allow_nan=False, min_value=0, max_value=1e6),
    st.fixed_dictionaries(
        {
            "side": st.sampled_from(["candidate", "reference", "both", "undecided"]),
            "evidence": st.sampled_from(
                ["special-case", "oracle", "standard-rule", "vote", "none"]
            ),
            "why": st.text(max_size=10),
        }
    ),
)


def _arrays_of(doc: dict[str, Any], where: str) -> list[dict[str, Any]]:
    if where == "inputs":
        values = [*doc["call"]["args"], *doc["call"].get("kwargs", {}).values()]
        return [v["array"] for v in values if "array" in v]
    return list(doc["outputs"][where].get("arrays") or [])


def _flip_a_bit(stored: dict[str, Any], seed: int) -> bool:
    import base64

    raw = bytearray(base64.b64decode(stored["data"]))
    if not raw:
        return False
    rng = random.Random(seed)
    raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    restamp(stored, bytes(raw))
    return True


def _computed(doc: dict[str, Any], adapter: Any) -> list[bytes] | None:
    """What ``adapter`` returns for the document's inputs, as bytes (None: no result)."""
    bundle = bundle_from(doc, where="x")
    example = example_of(bundle)
    now = call_on(
        adapter, call_for(bundle.function, example), host_inputs(example.args), example.kwargs
    )
    if not now.ok:
        return None
    several = isinstance(now.value, tuple) and not isinstance(now.value[-1], str)
    return [
        np.asarray(host_value(v)[0]).tobytes() for v in (now.value if several else (now.value,))
    ]


def _stored(doc: dict[str, Any], side: str) -> list[bytes] | None:
    import base64

    arrays = doc["outputs"][side].get("arrays")
    return None if arrays is None else [base64.b64decode(a["data"]) for a in arrays]


def _same_document(doc: dict[str, Any], original: dict[str, Any]) -> bool:
    try:
        return bundle_from(doc, where="x") == bundle_from(original, where="x")
    except BundleError:
        return False


@settings(
    max_examples=2000 if os.environ.get("CI") else 120,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_no_careful_forgery_reproduces(
    genuine: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    fault = data.draw(st.sampled_from(sorted(CASES)))
    original = genuine[fault]
    doc = copy.deepcopy(original)
    kinds = ["verdict", "claimed", "reference", "candidate", "inputs", "function"]
    what = data.draw(st.sampled_from(kinds))
    if what == "function":  # another function of the standard, everything else kept
        doc["function"] = data.draw(st.sampled_from(sorted(BUNDLE_FUNCTIONS[1])))
    elif what == "verdict":
        section, field = data.draw(st.sampled_from(_VERDICT_FIELDS))
        doc[section][field] = data.draw(_ANY_VALUE)
    elif what == "claimed":
        side, field = data.draw(st.sampled_from(_CLAIMED))  # printed as claimed, below
        doc[side][field] = data.draw(st.text(min_size=1, max_size=12))
    else:
        arrays = _arrays_of(doc, what)
        if not arrays or not _flip_a_bit(
            data.draw(st.sampled_from(arrays)), data.draw(st.integers())
        ):
            return  # nothing stored to forge here
        if what == "candidate":  # the careful forger re-derives the verdict for the new bits
            from diffcheck.search.stored import stored_verdict

            bundle = bundle_from(doc, where="x")
            verdict = stored_verdict(bundle, example_of(bundle))
            if verdict.passed:
                return  # the forged candidate is right: no finding left to claim
            doc["finding"].update(kind=verdict.kind, reason=verdict.reason or "")
    if _same_document(doc, original):
        return  # no edit (an absent field set to null reads the same): the same evidence
    outcome = _replay(doc, fault)
    status = outcome if isinstance(outcome, str) else outcome.status
    if what == "claimed":
        assert status == "reproduces"  # claims never change the verdict...
        assert isinstance(outcome, BundleReplay)
        assert any(f"{side} " in c and doc[side][field] in c for c in outcome.claims)
        return
    if status == "reproduces":  # ...anything else only when the edit changed no evidence
        assert what in ("inputs", "function")
        assert _computed(doc, NumpyAdapter()) == _stored(doc, "reference")
        assert _computed(doc, FaultyAdapter(fault)) == _stored(doc, "candidate")


def test_real_mlx_bundles_reproduce_and_their_forgeries_disagree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mlx.core")
    from diffcheck.adapters import resolve

    if not resolve("mlx:cpu").probe().is_available:
        pytest.skip("mlx:cpu does not run here")
    out = tmp_path / "mlx"
    # sign(NaN) is 0 in MLX (floor_divide's findings were choices the standard allows).
    search_api("mlx:cpu", functions=["sign"], examples=30, seed=0, out=out)
    paths = sorted(out.glob("bundles/*.json"))
    assert paths, "MLX's sign findings were not found"
    assert main(["replay", *map(str, paths)]) == 0
    document = json.loads(paths[0].read_text())
    _swap_outputs(document)
    forged = tmp_path / "swapped.json"
    forged.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["replay", str(forged)]) == 1
    err = capsys.readouterr().err
    assert "DISAGREES" in err
    assert "outputs.reference: numpy:cpu recomputed from the stored inputs" in err


# -- a bundle whose reference is not NumPy: recomputed on that reference, or claimed -------


@pytest.fixture(scope="module")
def faulty_reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A genuine bundle of NumPy (the candidate) against a faulty reference's exp."""
    out = tmp_path_factory.mktemp("faulty-reference") / "out"
    search_api(
        NumpyAdapter(),
        reference=FaultyAdapter("ulp3"),
        functions=["exp"],
        examples=10,
        seed=4,
        out=out,
        isolate=False,
    )
    documents = [json.loads(p.read_text()) for p in sorted(out.glob("bundles/*.json"))]
    values = [d for d in documents if d["finding"]["kind"] == "value"]
    assert values, "the faulty reference's exp gave no value finding"
    return values[0]


def _found(candidate: Any, function: str, out: Path) -> list[dict[str, Any]]:
    """The bundle documents a seeded in-process search of ``function`` on ``candidate`` writes."""
    search_api(candidate, functions=[function], examples=10, seed=3, out=out, isolate=False)
    return [json.loads(p.read_text()) for p in sorted(out.glob("bundles/*.json"))]


def _replay_sides(doc: dict[str, Any], reference: Any, candidate: Any = None) -> BundleReplay:
    return replay_bundle(
        Path("bundle.json"),
        bundle=bundle_from(doc, where="bundle.json"),
        reference=reference,
        candidate=candidate or NumpyAdapter(),
        isolate=False,
    )


def test_a_reference_that_runs_here_is_recomputed_on_itself(
    faulty_reference: dict[str, Any],
) -> None:
    # Its stored output is what it computes, not what NumPy does: NumPy's exp differs there.
    outcome = _replay_sides(faulty_reference, FaultyAdapter("ulp3"))
    assert outcome.disagreements == ()
    assert outcome.status == "reproduces"
    assert not any("does not run here" in c for c in outcome.claims)
    assert _computed(faulty_reference, NumpyAdapter()) != _stored(faulty_reference, "reference")


def test_a_forged_output_of_a_reference_that_runs_here_disagrees(
    faulty_reference: dict[str, Any],
) -> None:
    forged = copy.deepcopy(faulty_reference)
    assert _flip_a_bit(_arrays_of(forged, "reference")[0], 1)
    outcome = _replay_sides(forged, FaultyAdapter("ulp3"))
    assert outcome.status == "disagrees"
    assert (outcome.function, outcome.kind, outcome.reason) == ("exp", "value", "")
    assert any(
        d.startswith("outputs.reference: faulty[ulp3] recomputed from the stored inputs")
        for d in outcome.disagreements
    ), outcome.disagreements


def test_a_reference_that_does_not_run_here_leaves_its_output_claimed(
    faulty_reference: dict[str, Any],
) -> None:
    # faulty[ulp3] is no installed backend: the replay cannot run it, and says what it
    # therefore takes on trust; the candidate's claims are still listed after it.
    outcome = replay_bundle(
        Path("bundle.json"),
        bundle=bundle_from(faulty_reference, where="bundle.json"),
        candidate=NumpyAdapter(),
        isolate=False,
    )
    assert outcome.status == "not_run"
    assert "the stored reference output (faulty[ulp3] does not run here)" in outcome.claims
    assert any(c.startswith("candidate numpy") for c in outcome.claims)


def test_a_claimed_identity_unlike_what_runs_here_is_printed_beside_it(
    faulty_reference: dict[str, Any],
) -> None:
    doc = copy.deepcopy(faulty_reference)
    doc["candidate"]["version"] = "0.0-claimed"
    doc["candidate"]["device"] = None
    from diffcheck.search.record import backend_identity

    here = backend_identity(NumpyAdapter())
    outcome = _replay_sides(doc, FaultyAdapter("ulp3"))
    assert outcome.status == "reproduces"  # a claim: never part of the verdict
    claim = next(c for c in outcome.claims if c.startswith("candidate "))
    assert claim == (
        f"candidate {doc['candidate']['backend']}: library {doc['candidate']['library']} "
        f"0.0-claimed, device unknown (here {here.backend}: {here.library} {here.version}, "
        f"device {here.device or 'unknown'})"
    )
    same = _replay_sides(faulty_reference, FaultyAdapter("ulp3"))
    assert not any("(here " in c for c in same.claims)  # as stored: nothing beside it


class _NoDeviceNumpy(NumpyAdapter):
    """NumPy, reporting no device: its identity line says the device is unknown."""

    def identity(self) -> tuple[str, str | None]:
        library, _ = super().identity()
        return library, None


def test_a_backend_here_that_names_no_device_is_printed_as_unknown(
    faulty_reference: dict[str, Any],
) -> None:
    doc = copy.deepcopy(faulty_reference)
    doc["candidate"]["version"] = "0.0-claimed"
    outcome = _replay_sides(doc, FaultyAdapter("ulp3"), _NoDeviceNumpy())
    claim = next(c for c in outcome.claims if c.startswith("candidate "))
    assert claim.endswith(", device unknown)"), claim


# -- the same backend returning other bits than its bundle stores --------------------------


class _OneUlpMoreNamespace(FaultyNamespace):
    """faulty[ulp3]'s exp, every element one more ULP up: other bits from the same backend."""

    def exp(self, x: Any, /) -> Any:
        return nudge(super().exp(x), 1)


class _OtherBitsNow(FaultyAdapter):
    """The bundle's faulty[ulp3] under its own name and library, computing other bits now."""

    def __init__(self, device: str | None, named: bool) -> None:
        super().__init__("ulp3", device)
        self._namespace = _OneUlpMoreNamespace("ulp3")
        self._named = named

    def identity(self) -> tuple[str, str | None]:
        library, device = super().identity()
        return library, device if self._named else None


@pytest.mark.parametrize("named", [True, False], ids=["device-named", "no-device"])
def test_the_same_backend_returning_other_bits_disagrees_with_its_stored_output(
    genuine: dict[str, dict[str, Any]], named: bool
) -> None:
    from diffcheck.search.record import backend_identity

    doc = copy.deepcopy(genuine["ulp3"])
    candidate = _OtherBitsNow(None, named)
    here = backend_identity(candidate)
    doc["candidate"]["device"] = here.device  # as stored: the very backend the bundle names
    outcome = replay_bundle(
        Path("b.json"),
        bundle=bundle_from(doc, where="b.json"),
        reference=NumpyAdapter(),
        candidate=candidate,
        isolate=False,
    )
    device = here.device if named else "unknown"
    assert named == (here.device is not None)
    why = (
        f"outputs.candidate: faulty[ulp3] ({here.library} {here.version}, device {device}, "
        "as stored) returns other bits than the bundle stores for it: a forged output, or a "
        "nondeterministic backend"
    )
    assert (outcome.status, outcome.function, outcome.kind, outcome.reason) == (
        "disagrees",
        "exp",
        "value",
        "",
    )
    assert outcome.disagreements == (why,)
    assert outcome.same_output is False
    assert outcome.verdict is not None  # the run's own verdict
    assert outcome.verdict.kind == "value"
    assert any(c.startswith("candidate faulty[ulp3]: library") for c in outcome.claims)
    assert outcome.line(Path("b.json")) == f"b.json: DISAGREES: exp: {why}"
    assert len(outcome.notes(Path("b.json"))) == len(outcome.claims) >= 2


def test_a_forged_finding_disagrees_with_no_reason_and_keeps_its_claims(
    genuine: dict[str, dict[str, Any]],
) -> None:
    doc = copy.deepcopy(genuine["ulp3"])
    doc["finding"]["reason"] = "a reason the stored outputs do not give"
    outcome = _replay(doc, "ulp3")
    assert isinstance(outcome, BundleReplay)
    assert (outcome.status, outcome.function, outcome.kind, outcome.reason) == (
        "disagrees",
        "exp",
        "value",
        "",
    )
    assert [d.split(":")[0] for d in outcome.disagreements] == ["finding.reason"]
    # What it claims stays printed beside the disagreement: both sides' identities.
    assert [c.split(":")[0] for c in outcome.claims] == [
        "reference numpy",
        "candidate faulty[ulp3]",
    ]
    assert outcome.notes(Path("b.json"))[1].startswith(
        "b.json: claimed, not verified: candidate faulty[ulp3]: library"
    )


# -- the backends' own declared default dtypes, and backends that cannot be set up ---------


class _Int32Info:
    """NumPy's inspection API, declaring int32 as the default integer and index dtype."""

    def default_dtypes(self, **_: Any) -> dict[str, Any]:
        return {
            "real floating": np.float64,
            "complex floating": np.complex128,
            "integral": np.int32,
            "indexing": np.int32,
        }


class _Int32ArgminNamespace(FaultyNamespace):
    """A namespace whose declared index dtype is int32, and whose argmax is argmin's index."""

    def __array_namespace_info__(self) -> _Int32Info:
        return _Int32Info()

    def argmax(self, x: Any, /, **kwargs: Any) -> Any:
        return np.asarray(np.argmin(x, **kwargs)).astype(np.int32)


class _Int32Argmin(FaultyAdapter):
    def __init__(self) -> None:
        super().__init__("none")
        self._namespace = _Int32ArgminNamespace("none")


def test_a_bundle_is_rederived_under_the_default_dtypes_its_backend_declares_here(
    tmp_path: Path,
) -> None:
    # argmax in int32 is that backend's declared index dtype: the finding is the index, not
    # the dtype, and it re-derives so only under the candidate's own defaults.
    documents = _found(_Int32Argmin(), "argmax", tmp_path / "out")
    assert documents, "the index fault was not found"
    doc = documents[0]
    assert doc["finding"]["kind"] != "dtype", doc["finding"]
    outcome = _replay_sides(doc, NumpyAdapter(), _Int32Argmin())
    assert outcome.disagreements == ()
    assert (outcome.status, outcome.kind) == ("reproduces", doc["finding"]["kind"])


def test_a_bundle_of_a_version_this_diffcheck_does_not_know_calls_nothing(
    genuine: dict[str, dict[str, Any]],
) -> None:
    # Built without validation, as a caller may: its function is still looked up in the
    # functions of its own bundle version, of which this diffcheck knows none.
    bundle = bundle_from(genuine["ulp3"], where="b.json").model_copy(update={"bundle_version": 2})
    with pytest.raises(BundleError, match=r"^b\.json: function: 'exp' is not a function"):
        replay_bundle(
            Path("b.json"),
            bundle=bundle,
            reference=NumpyAdapter(),
            candidate=FaultyAdapter("ulp3"),
            isolate=False,
        )


def test_a_backend_that_cannot_be_set_up_and_says_nothing_is_not_run_as_unavailable(
    genuine: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import diffcheck.adapters
    from diffcheck.errors import ConfigError

    def silent(name: str) -> Any:
        raise ConfigError()

    monkeypatch.setattr(diffcheck.adapters, "resolve", silent)
    outcome = replay_bundle(
        Path("b.json"),
        bundle=bundle_from(genuine["ulp3"], where="b.json"),
        reference=NumpyAdapter(),
        isolate=False,
    )
    assert (outcome.status, outcome.reason) == ("not_run", "unavailable")
    assert outcome.line(Path("b.json")) == "b.json: not_run: exp [value]: unavailable"


def _bfloat16_exp_mlx() -> Any:
    """MLX on its CPU whose exp rounds its result to bfloat16 (a result dtype fault)."""
    pytest.importorskip("mlx.core")
    import mlx.core as mx

    from diffcheck.adapters import resolve

    base = resolve("mlx:cpu")
    if not base.probe().is_available:
        pytest.skip("mlx:cpu does not run here")

    class _Namespace:
        def __getattr__(self, name: str) -> Any:
            return getattr(mx, name)

        def exp(self, x: Any, /) -> Any:
            return mx.exp(x).astype(mx.bfloat16)

    class _Bfloat16Exp(type(base)):  # type: ignore[misc]
        @property
        def spec(self) -> str:
            return "mlx-bfloat16-exp:cpu"

        def namespace(self) -> Any:
            return _Namespace()

    return _Bfloat16Exp("cpu")


def test_a_bundle_of_a_bfloat16_output_replays_bit_identical(tmp_path: Path) -> None:
    # bfloat16 comes home as its float32 widening, and is stored so: the same backend's
    # output now is the stored one, bit for bit, not a second output nor other bits.
    candidate = _bfloat16_exp_mlx()
    documents = _found(candidate, "exp", tmp_path / "out")
    doc = next(d for d in documents if d["finding"]["kind"] == "dtype")
    assert [a["stored_as"] for a in doc["outputs"]["candidate"]["arrays"]] == ["bfloat16"]
    outcome = _replay_sides(doc, NumpyAdapter(), _bfloat16_exp_mlx())
    assert outcome.disagreements == ()
    assert (outcome.status, outcome.same_output) == ("reproduces", True)


class _RefusesExpNamespace(FaultyNamespace):
    def exp(self, x: Any, /) -> Any:
        raise ValueError("exp is switched off")


class _RefusesExp(FaultyAdapter):
    def __init__(self) -> None:
        super().__init__("none")
        self._namespace = _RefusesExpNamespace("none")


@pytest.mark.parametrize(
    ("candidate", "reason", "verdict_kind", "same"),
    [
        (FaultyAdapter("none"), "it passes now", None, False),
        (
            _RefusesExp(),
            "it fails as raises now: faulty[none] raised ValueError: exp is switched off; the "
            "reference returned a result",
            "raises",
            None,  # no output to compare with the stored one
        ),
    ],
    ids=["fixed", "raises"],
)
def test_a_bundle_its_candidate_no_longer_fails_so_says_how_it_ends_now(
    genuine: dict[str, dict[str, Any]],
    candidate: Any,
    reason: str,
    verdict_kind: str | None,
    same: bool | None,
) -> None:
    outcome = replay_bundle(
        Path("b.json"),
        bundle=bundle_from(genuine["ulp3"], where="b.json"),
        reference=NumpyAdapter(),
        candidate=candidate,
        isolate=False,
    )
    assert (outcome.status, outcome.function, outcome.kind) == (
        "no_longer_reproduces",
        "exp",
        "value",
    )
    assert outcome.reason == reason
    assert outcome.verdict is not None  # the run's verdict, kept beside the stored kind
    assert outcome.verdict.kind == verdict_kind
    assert outcome.same_output is same
    assert [c.split(":")[0] for c in outcome.claims] == [
        "reference numpy",
        "candidate faulty[ulp3]",
    ]
    tail = "; candidate output differs from the stored one" if same is False else ""
    assert outcome.line(Path("b.json")) == (
        f"b.json: NO LONGER REPRODUCES: exp [value]: {reason}{tail}"
    )
