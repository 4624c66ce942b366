"""The candidate's side of a report is evidence only where replay can bind it (issue 33).

Each test is one path by which a forged or mislabelled report, or a weak rule, let a
candidate pass: ``--rerun`` that printed "stored bits do not reproduce" and exited 0, a
re-run that could not run vouching for nothing, ``--require-pass`` meaning one thing for a
report and another for a sweep directory.
"""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from diffcheck.adapters import _registry
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.report import replay
from diffcheck.runner import run_check
from forgery import document, output, restamp, set_output

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

SMALL = {"m": 4, "n": 8, "k": 5}


def _report(tmp_path: Path, name: str, backend: str, op: str = "gemm", **params: Any) -> Path:
    path = tmp_path / f"{name}.json"
    run_check(make_check(backend, op, **(params or SMALL)), path)
    return path


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def jitterlib(monkeypatch: pytest.MonkeyPatch) -> str:
    """``jitterlib`` installed as a backend (tests/fakes.py), declared non-deterministic."""
    registered = _registry.adapter_entry_points()
    entry = EntryPoint("jitterlib", "fakes:JitterLib", _registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        _registry, "adapter_entry_points", lambda: registered | {"jitterlib": entry}
    )
    return "jitterlib"


# -- --rerun decides ------------------------------------------------------------------------


def test_rerun_bits_that_do_not_reproduce_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A forger re-stamps a passing report with other candidate bits (still a pass by their
    # own figures); --rerun printed "stored bits do not reproduce" and exited 0.
    path = _report(tmp_path, "strict", "array_api_strict")
    assert main(["replay", "--rerun", str(path)]) == 0
    data = json.loads(path.read_text())
    actual = output(data, "actual")
    # A few ULP: still a pass by their own figures, the precision floor's included.
    set_output(data, "actual", actual * np.float32(1 + 2e-7))
    restamp(data)
    assert data["result"]["status"] == "passed"
    assert main(["replay", str(_write(path, data))]) == 0  # without --rerun: testimony
    capsys.readouterr()
    assert main(["replay", "--rerun", str(path)]) == 1
    err = capsys.readouterr().err
    assert "DISAGREES: re-run: stored bits do not reproduce (" in err
    assert "declares its output deterministic" in err


def test_rerun_of_a_candidate_that_cannot_run_here_does_not_confirm_it(tmp_path: Path) -> None:
    # A genuine pass relabelled as a backend absent here: "candidate not re-run: not_run"
    # was printed beside "agrees: passed".
    path = _report(tmp_path, "relabelled", "array_api_strict")
    data = json.loads(path.read_text())
    data["config"]["require_backend"] = data["result"]["backend"] = "metal"
    outcome = replay(document(data), rerun=True)
    assert outcome.checked[-1].startswith("candidate not re-run to an output: not_run")
    assert any(
        p.startswith("re-run: the candidate metal did not run") for p in outcome.disagreements
    )


def test_a_declared_non_deterministic_candidate_is_held_to_its_verdict(
    jitterlib: str, tmp_path: Path
) -> None:
    path = _report(tmp_path, "jitter", jitterlib)
    data = json.loads(path.read_text())
    assert data["result"]["status"] == "passed"
    # Other bits on every run: declared, so the verdict (passed) is what must reproduce.
    honest = replay(document(data), rerun=True)
    assert "stored bits do not reproduce" in honest.checked[-1]
    assert "declared non-deterministic" in honest.checked[-1]
    assert not [p for p in honest.disagreements if p.startswith("re-run")]
    # Its stored verdict forged into a failure (bits doubled, figures re-stamped): the
    # re-run's verdict is passed, which disagrees.
    set_output(data, "actual", output(data, "actual") * 2)
    restamp(data)
    forged = replay(document(data), rerun=True)
    assert "re-run: stored failed, the candidate now passed" in forged.disagreements


# -- the candidate's identity is bound like the reference's ----------------------------------


def _has(backend: str) -> bool:
    from diffcheck.adapters import resolve

    return resolve(backend).probe().is_available


MLX = "mlx:cpu"


def _needs(backend: str) -> None:
    """Skip unless ``backend`` is available here, probed when the test runs: a probe while the
    module is collected would start MLX's threads in the process mutation testing forks
    each run from, and a forked run then deadlocks."""
    if not _has(backend):
        pytest.skip(f"{backend} is not available here")


def _renamed(data: dict[str, Any], backend: str, *, copy_library: bool = False) -> dict[str, Any]:
    """``data`` relabelled as ``backend``, as a careful forger does it (config and result
    together; with ``copy_library``, the candidate's recorded namespace made the one that
    backend's adapter declares)."""
    from diffcheck.adapters import resolve

    forged: dict[str, Any] = json.loads(json.dumps(data))
    forged["config"]["require_backend"] = forged["result"]["backend"] = backend
    if copy_library and forged["computed_by"]["candidate"] is not None:
        library = resolve(backend).identity()[0]
        forged["computed_by"]["candidate"] |= {"namespace": library, "module": library}
    return forged


@pytest.mark.parametrize("source", ["array_api_strict", MLX])
@pytest.mark.parametrize("target", ["metal", "torch:cpu", "wgpu", "example:cpu"])
def test_a_pass_relabelled_as_a_backend_that_did_not_compute_it_is_refused(
    tmp_path: Path, source: str, target: str
) -> None:
    _needs(source)
    data = json.loads(_report(tmp_path, "genuine", source).read_text())
    assert data["result"]["status"] == "passed"
    assert replay(document(data)).agrees
    outcome = replay(document(_renamed(data, target)))
    assert not outcome.agrees
    assert outcome.disagreements[0].startswith(f"result.backend: {target} computes through ")


def test_an_mlx_cpu_pass_relabelled_as_its_gpu_is_claimed_and_rerun_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _needs(MLX)
    # One namespace for both devices: nothing in the report says which ran, so the device is
    # listed as claimed (it was not), and --rerun, which cannot run mlx:gpu here, refuses it.
    data = json.loads(_report(tmp_path, "mlx", "mlx:cpu").read_text())
    path = _write(tmp_path / "gpu.json", _renamed(data, "mlx:gpu"))
    assert main(["replay", "--claims", str(path)]) == 0
    claimed = next(line for line in capsys.readouterr().out.splitlines() if "claimed" in line)
    assert "result.backend='mlx:gpu (not available here" in claimed
    assert "result.backend device='gpu" in claimed
    assert main(["replay", "--rerun", str(path)]) == 1


def test_a_relabelled_report_that_copies_the_declared_library_is_only_claimed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # metal is not here: its declared library can be copied into computed_by, so its name is
    # the report's word, said so beside the verdict; --rerun refuses it.
    data = json.loads(_report(tmp_path, "strict", "array_api_strict").read_text())
    path = _write(tmp_path / "metal.json", _renamed(data, "metal", copy_library=True))
    assert main(["replay", "--claims", str(path)]) == 0
    claimed = next(line for line in capsys.readouterr().out.splitlines() if "claimed" in line)
    assert "result.backend='metal (not available here: what computed it is its word)'" in claimed
    assert main(["replay", "--rerun", str(path)]) == 1


def test_an_erased_or_edited_candidate_library_never_makes_a_pass(tmp_path: Path) -> None:
    # fake computes with NumPy, the reference's library: one library, never a pass.
    data = json.loads(_report(tmp_path, "fake", "fake").read_text())
    assert data["result"]["status"] == "passed"
    honest = replay(document(data))
    assert honest.agrees
    assert honest.one_library
    assert not honest.passed
    for module in ("fastlib", "torch", "array_api_strict"):
        edited = json.loads(json.dumps(data))
        edited["computed_by"]["candidate"]["module"] = module
        outcome = replay(document(edited))
        assert outcome.agrees  # the module is claimed ...
        assert not outcome.passed  # ... and never turns the pair into a pass
    erased = json.loads(json.dumps(data))
    erased["computed_by"]["candidate"] = None
    outcome = replay(document(erased))
    assert outcome.disagreements == [
        "computed_by.candidate: null, but fake computes through a namespace and returns its "
        "arrays: which library computed it was removed"
    ]


def _phases_of(chains: dict[str, Any]) -> dict[str, Any]:
    """A lifecycle report of four chains relabelled as command-context phases."""
    from diffcheck.ops import get_op
    from diffcheck.ops.lifecycle import PHASES

    forged: dict[str, Any] = json.loads(json.dumps(chains))
    forged["submission_phases"] = list(PHASES)
    forged["coverage"] = get_op("context-lifecycle").coverage
    restamp(forged)
    return forged


def _chains_of(phases: dict[str, Any]) -> dict[str, Any]:
    """A lifecycle report of command-context phases downgraded to four chains."""
    from diffcheck.ops.lifecycle import CHAIN_COVERAGE

    forged: dict[str, Any] = json.loads(json.dumps(phases))
    forged.pop("submission_phases")
    forged.pop("submission_metrics", None)
    forged["coverage"] = CHAIN_COVERAGE
    restamp(forged)
    return forged


LIFECYCLE = {"tokens": 1, "intermediate": 2, "k": 3}


def test_lifecycle_chains_relabelled_as_phases_are_refused(tmp_path: Path) -> None:
    # example:cpu has no command contexts: it ran four chains, whatever the report says.
    path = _report(tmp_path, "example", "example:cpu", "context-lifecycle", **LIFECYCLE)
    data = json.loads(path.read_text())
    assert "submission_phases" not in data
    assert replay(document(data)).agrees
    outcome = replay(document(_phases_of(data)))
    assert outcome.disagreements == [
        "submission_phases: example:cpu records no command contexts, so it runs the lifecycle "
        "as four independent chains; a report of phases is not its run"
    ]


@pytest.mark.parametrize("backend", ["fake", MLX])
def test_lifecycle_phases_downgraded_to_chains_are_refused(tmp_path: Path, backend: str) -> None:
    _needs(backend)
    path = _report(tmp_path, "phases", backend, "context-lifecycle", **LIFECYCLE)
    data = json.loads(path.read_text())
    assert "submission_phases" in data
    assert replay(document(data)).agrees
    outcome = replay(document(_chains_of(data)))
    assert any(
        p.startswith(f"submission_phases: {backend} records command contexts at f32 here")
        for p in outcome.disagreements
    ), outcome.disagreements


# -- independence is decided from what computed ----------------------------------------------


def _exp(xp: Any, x: Any) -> Any:
    return xp.exp(x)


X = np.linspace(-3.0, 3.0, 256, dtype=np.float32)


def test_a_numpy_adapter_subclass_on_either_side_is_never_a_true_verdict() -> None:
    import diffcheck
    from fakes import NumpyUnderAnotherName

    for sides in (
        {"candidate": NumpyUnderAnotherName()},
        {"reference": NumpyUnderAnotherName(), "candidate": "numpy"},
    ):
        verdict = diffcheck.compare(_exp, X, **sides)
        assert verdict.passed  # the numbers agree: it is NumPy
        assert verdict.provenance is not None
        assert verdict.provenance.one_library
        assert not bool(verdict), sides
        values = diffcheck.compare(_exp, X, mode="values", **sides)
        assert values.passed
        assert not bool(values), sides


@pytest.mark.parametrize("backend", ["example:cpu", "wraplib"])
def test_numpy_inside_another_namespace_is_no_pass_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    import diffcheck
    from diffcheck.pytest_plugin import assert_verdict

    verdict = diffcheck.compare(_exp, X, candidate=backend)
    assert verdict.passed
    assert not bool(verdict)
    with pytest.raises(AssertionError, match="NOT INDEPENDENT"):
        assert_verdict(verdict)  # what the pytest fixture asserts
    path = _report(tmp_path, backend, backend)
    outcome = replay(document(json.loads(path.read_text())))
    assert outcome.agrees
    assert outcome.status == "passed"
    assert outcome.one_library
    assert not outcome.passed
    capsys.readouterr()
    assert main(["replay", "--require-pass", str(path)]) == 1
    assert "NOT INDEPENDENT" in capsys.readouterr().out


def test_a_claimed_probe_never_turns_numpy_inside_into_a_pass(tmp_path: Path) -> None:
    # example:cpu's stored probe sums edited to differ: the report alone would now say
    # independent; replay probes the adapter of that name here and still finds NumPy.
    data = json.loads(_report(tmp_path, "example", "example:cpu").read_text())
    data["computed_by"]["probe"]["candidate_sum_bits"] = "00000000"
    forged = document(data)
    assert forged.computed_by is not None
    assert not forged.computed_by.one_library
    outcome = replay(forged)
    assert outcome.agrees
    assert outcome.one_library
    assert not outcome.passed


def test_a_failure_whose_bits_became_the_references_is_refused_by_rerun(tmp_path: Path) -> None:
    # A failing candidate's output replaced by the reference's and every figure re-stamped:
    # a pass by its own bits, which replay alone cannot tell from the candidate's word.
    path = tmp_path / "failing.json"
    run_check(make_check("fakescalesegment", "gemm", **SMALL), path)
    data = json.loads(path.read_text())
    assert data["result"]["status"] == "failed"
    set_output(data, "actual", output(data, "reference"))
    restamp(data)
    assert data["result"]["status"] == "passed"
    assert replay(document(data)).agrees
    again = replay(document(data), rerun=True)
    assert again.disagreements[:2] == [
        again.disagreements[0],
        "re-run: stored passed, the candidate now failed",
    ]
    assert again.disagreements[0].startswith("re-run: stored bits do not reproduce (")


@pytest.mark.parametrize(
    ("edit", "stored"),
    [({"backend_input_storage": "f16"}, "('f16', 'f32')"), (None, "None")],
    ids=["edited", "removed"],
)
def test_rerun_binds_the_stored_storages_to_the_reruns(
    tmp_path: Path, edit: dict[str, str] | None, stored: str
) -> None:
    data = json.loads(_report(tmp_path, "strict", "array_api_strict").read_text())
    if edit is None:
        data["executed_precision"] = None
    else:
        data["executed_precision"] |= edit
    line = f"executed_precision: stored {stored}, the re-run stored ('f32', 'f32')"
    assert line not in replay(document(data)).disagreements  # only a re-run can say it
    assert line in replay(document(data), rerun=True).disagreements
