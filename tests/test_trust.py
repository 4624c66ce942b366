"""A pass must mean something: the runner and config side of the trust rules.

Each test feeds the path a configuration or an output that today's rules must refuse or
fail: a backend vouching for itself, an executed precision that is not the configured one,
segments with a gap, a lifecycle run without command contexts claiming phases, a loose
lifecycle tolerance, a check too big for memory, an error while preparing inputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import diffcheck
import diffcheck.testing
from diffcheck._numbers import parse_f32
from diffcheck.adapters import array_api, resolve, same_backend
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.cli import main
from diffcheck.config import make_check
from diffcheck.differ import Segment, diff
from diffcheck.errors import ConfigError
from diffcheck.ops.gemm import Gemm
from diffcheck.report import parse_report, replay
from diffcheck.runner import run as runner
from diffcheck.runner import run_check
from diffcheck.runner.budget import estimate_memory, format_bytes, parse_size
from fakes import FakeAdapter

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

CANDIDATE = "array_api_strict"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["run", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("diffcheck: ")
    assert "Traceback" not in err
    return lines[0]


# -- a backend cannot vouch for itself -------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("numpy", "numpy", True),
        ("numpy", "numpy:cpu", True),
        ("numpy:cpu", "numpy", True),
        ("numpy", "array_api_strict", False),
        ("torch:cpu", "torch", True),  # the plain name may be the same device
        ("torch:cpu", "torch:cuda", False),
        ("mlx:cpu", "mlx:gpu", False),
        ("mlx", "mlx:gpu", True),
    ],
)
def test_same_backend_is_adapter_identity_not_the_name(a: str, b: str, same: bool) -> None:
    assert same_backend(a, b) is same
    assert same_backend(b, a) is same


def test_a_compat_name_over_numpy_and_a_numpy_double_are_numpy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        array_api.ARRAY_API_LIBRARIES, "npcompat", ("numpy", "array_api_compat.numpy")
    )
    assert same_backend("npcompat", "numpy")
    assert same_backend(FakeAdapter(), "numpy:cpu")
    assert same_backend(diffcheck.testing.perturb(NumpyAdapter(), "nan"), "numpy")
    assert not same_backend(FakeAdapter(), "array_api_strict")


@pytest.mark.parametrize("candidate", ["numpy", "numpy:cpu"])
def test_run_refuses_the_reference_as_candidate_before_any_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], candidate: str
) -> None:
    report = tmp_path / "r.json"
    code, _, err = run_cli(
        ["--require-backend", candidate, "--op", "gemm", "--report", str(report)], capsys
    )
    assert code == 1
    assert "a backend cannot vouch for itself" in one_line_error(err)
    assert not report.exists()
    with pytest.raises(ConfigError, match="cannot vouch for itself"):
        diffcheck.run({"require_backend": candidate, "op": "gemm"})


def test_a_self_test_runs_only_when_asked_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    args = ["--require-backend", "numpy:cpu", "--op", "gemm", "--report", str(report)]
    code, _, _ = run_cli([*args, "--allow-self-test"], capsys)
    assert code == 0
    coverage = json.loads(report.read_text())["coverage"]
    assert "SELF-TEST: the candidate numpy:cpu is the reference numpy's own backend" in coverage
    document = diffcheck.run(
        {"require_backend": "numpy", "op": "gemm", "m": 2}, allow_self_test=True
    )
    assert "SELF-TEST" in document.coverage
    # An ordinary check says nothing of the kind.
    assert "SELF-TEST" not in run_check(make_check(CANDIDATE, "gemm", m=2)).coverage


def test_compare_refuses_numpy_against_numpy_unless_asked() -> None:
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    for candidate in ("numpy", "numpy:cpu", NumpyAdapter(), FakeAdapter()):
        with pytest.raises(ConfigError, match="cannot vouch for itself"):
            diffcheck.compare(lambda xp, v: xp.exp(v), x, candidate=candidate)
    verdict = diffcheck.compare(lambda xp, v: xp.exp(v), x, candidate="numpy", allow_self_test=True)
    assert verdict.passed


# -- executed precision -------------------------------------------------------------------------


class StoresF32(NumpyAdapter):
    """Claims f16 but stores (and computes) float32: an f16 check would pass with f32 accuracy."""

    name = "storesf32"
    devices = ()

    def storage_dtype(self, xp: Any, precision: Any) -> Any:
        return xp.float32


def test_an_executed_precision_that_is_not_the_configured_one_fails(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    document = run_check(
        make_check(CANDIDATE, "gemm", precision="f16"), report, candidate=StoresF32()
    )
    assert document.result is not None
    assert document.result.status == "failed"
    assert document.result.reason == (
        "executed precision differs from the configured f16: the candidate stored inputs as "
        "f32 and its output as f32"
    )
    assert document.executed_precision is not None
    assert document.executed_precision.backend_output_storage == "f32"
    # The same adapter asked for f32 passes: the check is about the mismatch, not the values.
    assert run_check(make_check(CANDIDATE, "gemm"), candidate=StoresF32()).result.status == "passed"  # type: ignore[union-attr]


# -- segments cover the output --------------------------------------------------------------


def test_a_wrong_element_between_segments_is_judged() -> None:
    # The issue's case: a 1% error at index 5, invisible in the aggregate (large values
    # elsewhere), in the range [4, 6) that the two named segments leave out.
    reference = np.array([1e4, 1e4, 1e4, 1e4, 1.0, 1.0, 1e4, 1e4], np.float32)
    actual = reference.copy()
    actual[5] = 1.01
    assert diff(reference, actual, max_nmse=1e-7).passed  # the aggregate alone misses it
    segments = [Segment("head", 0, 4), Segment("tail", 6, 8)]
    verdict = diff(reference, actual, max_nmse=1e-7, segments=segments)
    assert verdict.status == "failed"
    assert [s.segment.name for s in verdict.segments] == ["head", "tail", "uncovered"]
    assert [s.status for s in verdict.segments] == ["passed", "passed", "failed"]
    gap = verdict.segments[-1]
    assert (gap.segment.start, gap.segment.stop) == (4, 6)
    assert (verdict.reason or "").startswith("uncovered [4, 6): NMSE")
    # Overlap is allowed, and a covered output has no uncovered segment.
    overlapping = [Segment("a", 0, 6), Segment("b", 4, 8)]
    assert [
        s.segment.name
        for s in diff(reference, reference, max_nmse=1e-7, segments=overlapping).segments
    ] == ["a", "b"]


def test_a_gap_before_the_first_segment_is_judged_too() -> None:
    reference = np.ones(8, np.float32)
    actual = reference.copy()
    actual[0] = -1.0
    verdict = diff(reference, actual, max_nmse=1e-7, segments=[Segment("rest", 2, 8)])
    assert verdict.status == "failed"
    assert verdict.segments[-1].segment.display == "uncovered [0, 2)"


# -- the lifecycle without command contexts says what ran ------------------------------------


def test_a_lifecycle_run_as_independent_chains_claims_no_submission_phases(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    check = make_check("fakechains", "context-lifecycle")
    document = run_check(check, report, candidate=FakeAdapter(contexts=False))
    data = json.loads(report.read_text())
    assert document.result is not None
    assert document.result.status == "passed"
    assert "submission_phases" not in data
    assert "submission_metrics" not in data
    assert "four independent chains" in data["execution_path"]
    assert data["coverage"].startswith("Four independent gemm -> copy -> silu-mul chains")
    assert [s["name"] for s in data["segments"]] == ["chain0", "chain1", "chain2", "chain3"]
    assert replay(parse_report(json.dumps(data).encode(), "report")).agrees
    # A wrong chain is named by its chain label, not a phase it never ran under.
    failed = run_check(check, candidate=FakeAdapter("scale_segment", contexts=False))
    assert failed.result is not None
    assert failed.result.status == "failed"
    assert "Chain3: NMSE" in (failed.result.reason or "")
    # With command contexts the same op records its submission phases.
    phased = run_check(check, candidate=FakeAdapter())
    assert phased.submission_phases == [
        "initial",
        "reused_context",
        "independent_context",
        "drop_flush",
    ]
    assert [s.name for s in phased.segments or ()] == list(phased.submission_phases)


def test_the_incomplete_record_announces_the_chains_of_a_namespace_backend() -> None:
    initial = runner.initial_document(
        make_check(CANDIDATE, "context-lifecycle"), resolve(CANDIDATE)
    )
    assert initial.submission_phases is None
    assert initial.coverage.startswith("Four independent")


# -- tolerance rules -----------------------------------------------------------------------------


def test_the_lifecycle_at_f32_needs_max_nmse_at_most_1e_7(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    args = ["--require-backend", CANDIDATE, "--op", "context-lifecycle", "--report", str(report)]
    code, _, err = run_cli([*args, "--max-nmse", "2e-7"], capsys)
    assert code == 1
    assert one_line_error(err) == (
        "diffcheck: --max-nmse 0.0000002 is above the lifecycle's limit: context-lifecycle at "
        "f32 requires 0 < max_nmse <= 0.0000001"
    )
    assert not report.exists()
    assert make_check(CANDIDATE, "context-lifecycle", max_nmse=1e-7).max_nmse == 1e-7
    # Other precisions keep their buckets.
    assert make_check("torch:cpu", "context-lifecycle", precision="f16").max_nmse == 1e-6


def test_eps_given_or_defaulted_records_the_same_f32_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configs = []
    for extra in ([], ["--eps", "1e-6"]):
        report = tmp_path / f"r{len(configs)}.json"
        args = ["--require-backend", CANDIDATE, "--op", "rms-norm", "--report", str(report)]
        assert run_cli([*args, *extra], capsys)[0] == 0
        configs.append(json.loads(report.read_text())["config"])
    assert configs[0] == configs[1]
    assert configs[0]["eps"] == parse_f32("1e-6") == np.float32(1e-6)
    assert np.float32(configs[0]["eps"]).view(np.uint32) == 0x358637BD
    assert (
        make_check(CANDIDATE, "rms-norm", eps=1e-6).params
        == make_check(CANDIDATE, "rms-norm").params
    )


# -- memory, before allocating; preparing errors ------------------------------------------------


def test_the_issues_huge_gemm_is_refused_with_its_figure_before_any_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    args = ["--require-backend", CANDIDATE, "--op", "gemm", "--report", str(report)]
    code, _, err = run_cli([*args, "--m", "46000", "--n", "46000", "--k", "46000"], capsys)
    assert code == 1
    line = one_line_error(err)
    estimate = estimate_memory(make_check(CANDIDATE, "gemm", m=46000, n=46000, k=46000))
    assert estimate.inputs == 2 * 46000 * 46000 * 4
    assert f"needs about {format_bytes(estimate.total)}" in line
    assert "raise the budget (--max-memory, max_memory=)" in line
    assert not report.exists()


def test_max_memory_sets_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    args = ["--require-backend", CANDIDATE, "--op", "gemm", "--report", str(report)]
    code, _, err = run_cli([*args, "--max-memory", "1K"], capsys)
    assert code == 1
    assert "over the budget of 1000 B (--max-memory)" in one_line_error(err)
    assert not report.exists()
    assert run_cli([*args, "--max-memory", "1GiB"], capsys)[0] == 0
    with pytest.raises(ConfigError, match="over the budget"):
        diffcheck.run({"require_backend": CANDIDATE, "op": "gemm"}, max_memory=1000)
    for text in ("lots", "0", "-1G", "1Q"):
        with pytest.raises(ConfigError, match="--max-memory"):
            parse_size(text)
    assert parse_size("8G") == 8 * 10**9
    assert parse_size("512MiB") == 512 * 2**20


def test_format_bytes_names_every_size_even_past_float_range() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(3 * 2**50) == "3.0 PiB"
    # Estimates of hostile inputs (shapes of int64 minima) are integers past 10**308.
    for size in (1024**6, 2**80, 10**400):
        assert format_bytes(size) == "over 1024 PiB"


def test_an_error_while_preparing_inputs_is_a_completed_failed_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: object, params: object, seed: int) -> object:
        raise MemoryError("cannot allocate 8 GiB")

    monkeypatch.setattr(Gemm, "inputs", refuse)
    report = tmp_path / "r.json"
    code, _, err = run_cli(
        ["--require-backend", CANDIDATE, "--op", "gemm", "--report", str(report)], capsys
    )
    assert code == 1
    assert "preparing inputs failed: MemoryError: cannot allocate 8 GiB" in one_line_error(err)
    data = json.loads(report.read_text())
    assert data["completed"] is True
    assert data["result"]["status"] == "failed"


def test_anything_raised_after_the_report_exists_completes_it_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError("label")

    monkeypatch.setattr(runner, "_final_document", broken)
    report = tmp_path / "r.json"
    document = run_check(make_check(CANDIDATE, "gemm", m=2), report)
    data = json.loads(report.read_text())
    assert data["completed"] is True
    assert data["result"]["status"] == "failed"
    assert data["result"]["reason"] == "preparing the check failed: KeyError: 'label'"
    assert document.result is not None
    assert document.result.status == "failed"


# -- the CLI ------------------------------------------------------------------------------------


def test_an_unknown_run_option_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["--require-backend", CANDIDATE, "--bogus", "1"], capsys)
    assert code == 1
    assert out == ""
    assert one_line_error(err) == (
        "diffcheck: unknown option \"--bogus\"; run 'diffcheck run --help' for the options"
    )


@pytest.mark.parametrize(
    "config",
    [
        {"require_backend": 3, "op": "gemm"},
        {"require_backend": CANDIDATE, "op": ["gemm"]},
        {"require_backend": CANDIDATE, "op": "gemm", "reference": None},
        {"require_backend": CANDIDATE, "op": "gemm", "seed": "7"},
        {"require_backend": CANDIDATE, "op": "gemm", "seed": True},
        {"require_backend": CANDIDATE, "op": "gemm", "max_nmse": "1e-7"},
        {"require_backend": CANDIDATE, "op": "gemm", "allow_self_test": "yes"},
    ],
)
def test_a_mistyped_config_is_a_one_line_config_error(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as raised:
        diffcheck.run(config)
    assert len(str(raised.value).splitlines()) == 1
