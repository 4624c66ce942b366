"""The search's run loop: nothing a backend does stops it, and nothing found is lost.

A crash (SIGFPE, abort) or a hang of a call becomes a finding with its bundle and the run
goes on; an explicit time budget cuts and says where; the output directory is created
first and journaled per function, so an interrupted run keeps its findings and
``--resume`` continues it; one cause across dtypes is one finding.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffcheck.cli import main
from diffcheck.errors import ConfigError
from diffcheck.search import search_api
from diffcheck.search.bundle import read_bundle
from diffcheck.search.coverage import Coverage
from diffcheck.search.output import JOURNAL
from run_fakes import Misbehaving
from value_fakes import FaultyAdapter


@pytest.mark.parametrize(("how", "signal_name"), [("sigfpe", "SIGFPE"), ("abort", "SIGABRT")])
def test_a_call_that_kills_its_process_is_a_crash_finding_and_the_run_goes_on(
    tmp_path: Path, how: str, signal_name: str
) -> None:
    marker = tmp_path / "crashed"
    out = tmp_path / "out"
    result = search_api(
        Misbehaving(how, str(marker)), functions=["exp", "sin"], examples=15, seed=1, out=out
    )
    doc = result.document
    assert marker.exists()  # it did crash, in the worker
    crashes = [f for f in doc.findings if f.kind == "crash"]
    assert [f.function for f in crashes] == ["exp"]
    assert signal_name in crashes[0].reason
    assert crashes[0].blame == "candidate"
    assert [r.function for r in doc.functions_tried] == ["exp", "sin"]  # it went on
    assert doc.isolation.mode == "worker"
    assert doc.isolation.workers_started == 2  # the first, and one after the crash
    bundle = read_bundle(out / crashes[0].bundle)
    assert bundle.finding.kind == "crash"
    assert bundle.outputs["reference"].arrays  # the reference alone returned
    assert "crash" in (bundle.outputs["candidate"].raised or "")
    assert doc.complete


def test_a_crash_met_while_shrinking_another_failure_is_a_finding_too(tmp_path: Path) -> None:
    # exp is wrong everywhere (a value finding, then shrunk towards a 0-d input) and
    # crashes its worker on the first 0-d float input, which the shrink meets.
    marker = tmp_path / "crashed"
    result = search_api(
        Misbehaving("wrong-then-crash", str(marker)),
        functions=["exp"],
        examples=10,
        seed=0,
        out=tmp_path / "out",
    )
    doc = result.document
    assert marker.exists()
    assert doc.isolation.workers_started == 2
    kinds = [f.kind for f in doc.findings]
    assert kinds.count("crash") == 1, kinds
    assert "value" in kinds  # the failure being shrunk is still found
    assert doc.complete


def test_a_call_that_outlives_the_timeout_is_a_hang_finding(tmp_path: Path) -> None:
    started = time.monotonic()
    result = search_api(
        Misbehaving("hang", str(tmp_path / "hung")),
        functions=["exp", "sin"],
        examples=10,
        out=tmp_path / "out",
        call_timeout_s=1.0,
    )
    hangs = [f for f in result.document.findings if f.kind == "hang"]
    assert [f.function for f in hangs] == ["exp"]
    assert "1 s call timeout" in hangs[0].reason
    assert result.document.isolation.call_timeout_s == 1.0
    assert [r.function for r in result.document.functions_tried] == ["exp", "sin"]
    assert time.monotonic() - started < 60  # not the hour the call would have slept


def test_adapters_a_worker_cannot_load_are_one_line_before_any_search(tmp_path: Path) -> None:
    class Local(FaultyAdapter):
        pass

    with pytest.raises(ConfigError, match="--in-process") as error:
        search_api(Local(), functions=["exp"], examples=5, out=tmp_path / "out")
    assert "\n" not in str(error.value)


def test_the_time_budget_cuts_drawing_and_says_so_without_a_flaky_error(tmp_path: Path) -> None:
    started = time.monotonic()
    result = search_api(
        Misbehaving("slow"),
        functions=["exp"],
        examples=100_000,
        budget_s=1.0,
        out=tmp_path / "out",
        isolate=False,
    )
    spent = time.monotonic() - started
    run = result.document.functions_tried[0]
    assert spent < 15
    assert run.error is None  # no spurious FlakyFailure
    assert run.stopped_by_time_budget
    assert run.cut is not None
    assert "time budget 1 s" in run.cut
    assert 1 <= run.examples < 100_000
    assert result.document.time_budget_cuts == ["exp"]
    assert "time budget 1 s" in (tmp_path / "out" / "index.html").read_text()


def test_the_time_budget_stops_a_call_in_flight_without_calling_it_a_hang(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    result = search_api(
        Misbehaving("hang", str(tmp_path / "hung")),
        functions=["exp"],
        examples=1000,
        budget_s=1.0,
        call_timeout_s=60.0,
    )
    run = result.document.functions_tried[0]
    assert time.monotonic() - started < 30  # not the 60 s call timeout, nor the hour
    assert run.cut is not None
    assert "during a call" in run.cut
    assert [f.kind for f in result.document.findings] == []


def test_the_time_budget_also_cuts_a_shrink(tmp_path: Path) -> None:
    # ulp3 fails at once; a tiny budget then stops its shrink, keeping the failure found.
    result = search_api(
        FaultyAdapter("ulp3"), functions=["exp"], examples=50, budget_s=1e-6, isolate=False
    )
    run = result.document.functions_tried[0]
    assert run.cut is not None
    assert run.error is None


def test_without_a_budget_the_same_seed_gives_the_same_findings_even_when_slow(
    tmp_path: Path,
) -> None:
    def found(**options: object) -> list[tuple[str, str, str, str]]:
        result = search_api(
            FaultyAdapter("ulp3"), functions=["exp", "sin"], examples=20, seed=4, **options
        )
        assert result.document.time_budget_s is None
        assert result.document.time_budget_cuts == []
        return [(f.function, f.kind, f.dtype, f.example) for f in result.document.findings]

    assert found() == found(isolate=False)


@pytest.mark.parametrize(
    "make_out",
    [
        lambda tmp: tmp / "file" / "out",  # a regular file as its parent
        lambda tmp: Path("/proc/diffcheck-out"),
        lambda tmp: tmp / ("x" * 300),
    ],
)
def test_an_out_that_cannot_be_created_is_one_line_before_the_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_out: object
) -> None:
    (tmp_path / "file").write_text("a file")
    out = make_out(tmp_path)  # type: ignore[operator]
    started = time.monotonic()
    code = main(["fuzz", "--require-backend", "array_api_strict", "--api", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert "cannot create it" in err
    assert time.monotonic() - started < 20  # refused before searching 200 functions


class _Stop(KeyboardInterrupt):
    pass


def _interrupt_after(count: int):  # type: ignore[no-untyped-def]
    def progress(function: str, done: int, total: int, found: int) -> None:
        if done >= count:
            raise _Stop

    return progress


def test_an_interrupted_run_keeps_what_it_found_and_resume_continues_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    options: dict[str, object] = {"functions": ["exp", "sin", "abs"], "examples": 15, "seed": 2}
    with pytest.raises(_Stop):
        search_api(FaultyAdapter("ulp3"), out=out, progress=_interrupt_after(1), **options)
    first = json.loads((out / "findings.json").read_text())
    assert first["complete"] is False
    assert [r["function"] for r in first["functions_tried"]] == ["exp"]
    assert {f["function"] for f in first["findings"]} == {"exp"}
    kept = [f["bundle"] for f in first["findings"]]
    assert "INTERRUPTED" in (out / "index.html").read_text()
    # A kill in the middle of the next journal line leaves half a line: it is ignored.
    with (out / JOURNAL).open("a") as journal:
        journal.write('{"run": {"function": "si')
    (out / "bundles" / "999-stale.json").write_text("{}")  # a bundle never journaled
    resumed = search_api(FaultyAdapter("ulp3"), out=out, resume=True, **options)
    doc = resumed.document
    assert doc.complete
    assert doc.resumed_functions == 1
    assert [r.function for r in doc.functions_tried] == ["exp", "sin", "abs"]
    assert [f.bundle for f in doc.findings if f.function == "exp"] == kept
    assert not (out / "bundles" / "999-stale.json").exists()
    assert all((out / name).exists() for name in kept)
    assert "exp" in (out / "index.html").read_text()
    fresh = search_api(FaultyAdapter("ulp3"), out=tmp_path / "fresh", **options)
    assert [(f.function, f.kind, f.example) for f in fresh.document.findings] == [
        (f.function, f.kind, f.example) for f in doc.findings
    ]


def test_resume_refuses_another_command_and_a_directory_without_a_journal(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    search_api(FaultyAdapter(), functions=["abs"], examples=5, out=out)
    with pytest.raises(ConfigError, match=r"other options \(seed\)"):
        search_api(FaultyAdapter(), functions=["abs"], examples=5, seed=7, out=out, resume=True)
    with pytest.raises(ConfigError, match="holds no journal"):
        search_api(FaultyAdapter(), functions=["abs"], out=tmp_path, resume=True)
    with pytest.raises(ConfigError, match="--resume needs --out"):
        search_api(FaultyAdapter(), functions=["abs"], resume=True)


def test_sigterm_asks_the_search_to_stop_and_a_second_one_raises() -> None:
    from diffcheck.cli.api_search_command import _terminate_as_interrupt
    from diffcheck.search.stop import clear_stop, stop_requested

    clear_stop()

    def terminated() -> None:
        with _terminate_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop_requested()  # the first only asks (checked before every example)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)

    with pytest.raises(KeyboardInterrupt):
        terminated()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    clear_stop()


def test_one_cause_across_dtypes_is_one_finding(tmp_path: Path) -> None:
    result = search_api(FaultyAdapter("ulp3"), functions=["exp"], examples=30, seed=3)
    values = [f for f in result.document.findings if f.kind == "value"]
    assert len(values) == 1, values
    assert set(values[0].dtypes) >= {"float32", "float64"}


def test_a_cause_of_one_dtype_is_not_grouped_with_others(tmp_path: Path) -> None:
    result = search_api(Misbehaving("float32-only"), functions=["exp"], examples=30, seed=3)
    values = [f for f in result.document.findings if f.kind == "value"]
    assert [f.dtypes for f in values] == [["float32"]]


def test_coverage_is_counted_per_function(tmp_path: Path) -> None:
    result = search_api(FaultyAdapter(), functions=["exp", "bitwise_and"], examples=20, seed=1)
    exp, bitwise = result.document.functions_tried
    assert exp.coverage["ordinary"] > 0
    assert exp.coverage["integer"] == 0
    assert bitwise.coverage["integer"] > 0
    assert bitwise.coverage["ordinary"] == 0


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.float32, np.float64, np.complex64, np.int16, np.bool_]),
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=6),
    )
)
def test_coverage_counts_distinct_values_per_class(array: np.ndarray) -> None:
    coverage = Coverage()
    coverage.add((array, array.copy()))  # the same values twice count once
    counts = coverage.counts()
    parts = [array.real, array.imag] if array.dtype.kind == "c" else [array]
    if array.dtype.kind in "fc":
        values = [v for p in parts for v in np.asarray(p).reshape(-1).tolist()]
        tiny = np.finfo(np.asarray(parts[0]).dtype).smallest_normal
        bits = {np.asarray(v, np.asarray(parts[0]).dtype).tobytes(): v for v in values}
        expected = {
            "nan": sum(1 for v in bits.values() if v != v),
            "inf": sum(1 for v in bits.values() if v in (np.inf, -np.inf)),
            "zero": sum(1 for v in bits.values() if v == 0),
            "subnormal": sum(1 for v in bits.values() if v != 0 and abs(v) < tiny),
        }
        expected["ordinary"] = len(bits) - sum(expected.values())
        assert {k: counts[k] for k in expected} == expected
    else:
        name = "bool" if array.dtype.kind == "b" else "integer"
        assert counts[name] == len(set(array.reshape(-1).tolist()))


_KILLED_RUN = """
import sys
sys.path.insert(0, {tests!r})
from value_fakes import FaultyAdapter
from diffcheck.search import search_api
search_api(FaultyAdapter("ulp3"), out={out!r}, **{options!r})
"""


def test_a_run_killed_with_sigkill_resumes_from_its_journal(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "out"
    options: dict[str, object] = {
        "functions": ["exp", "sin", "cos", "tan", "tanh", "abs"],
        "examples": 40,
        "seed": 5,
    }
    tests = str(Path(__file__).parents[1])
    script = _KILLED_RUN.format(tests=tests, out=str(out), options=options)
    run = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 120
    journal = out / JOURNAL
    while time.monotonic() < deadline and run.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 2:  # a function done
            break
        time.sleep(0.05)
    children = Path(f"/proc/{run.pid}/task/{run.pid}/children")
    workers = children.read_text().split() if children.exists() else []
    run.kill()
    run.wait()
    assert run.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    for pid in workers:  # the worker dies with the search (PR_SET_PDEATHSIG)
        stat = Path(f"/proc/{pid}/stat")
        for _ in range(100):
            if not stat.exists() or stat.read_text().split()[2] == "Z":
                break
            time.sleep(0.05)
        assert not stat.exists() or stat.read_text().split()[2] == "Z", f"worker {pid} left"
    assert not (out / "findings.json").exists()  # nothing but the journal was written
    resumed = search_api(FaultyAdapter("ulp3"), out=out, resume=True, **options)  # type: ignore[arg-type]
    doc = resumed.document
    assert doc.resumed_functions >= 1
    assert [r.function for r in doc.functions_tried] == options["functions"]
    fresh = search_api(FaultyAdapter("ulp3"), out=tmp_path / "fresh", **options)  # type: ignore[arg-type]
    assert [(f.function, f.kind, f.example) for f in fresh.document.findings] == [
        (f.function, f.kind, f.example) for f in doc.findings
    ]


@pytest.mark.parametrize(("signal_number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_the_cli_stopped_by_a_signal_writes_what_it_found(
    tmp_path: Path, signal_number: int, code: int
) -> None:
    import subprocess
    import sys

    pytest.importorskip("array_api_strict", reason="the candidate is array-api-strict")
    out = tmp_path / "out"
    argv = ["fuzz", "--require-backend", "array_api_strict", "--api", "--examples", "5"]
    run = subprocess.Popen(
        [sys.executable, "-m", "diffcheck", *argv, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None:
        journal = out / JOURNAL
        if journal.exists() and journal.read_text().count("\n") >= 3:  # two functions done
            break
        time.sleep(0.05)
    run.send_signal(signal_number)
    _, err = run.communicate(timeout=60)
    assert run.returncode == code, err[-500:]
    assert err.splitlines()[-1].startswith("diffcheck: api search ")
    assert "--resume continues it" in err.splitlines()[-1]
    assert "Traceback" not in err
    document = json.loads((out / "findings.json").read_text())
    assert document["complete"] is False
    assert len(document["functions_tried"]) >= 2
