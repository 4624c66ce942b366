"""Replaying a bundle whose call crashed or hung: the worker ends, never the replaying process.

The backends run again in a worker process with a timeout (as the search runs them), so a
``crash`` bundle (the call raised SIGFPE or aborted) and a ``hang`` bundle (the call never
returned) reproduce in one line, and a bundle of another kind whose call now crashes no
longer reproduces, saying how.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.search import search_api
from diffcheck.search.replay import replay_bundle
from run_fakes import Misbehaving


def _finding(tmp_path: Path, how: str, kind: str) -> Path:
    out = tmp_path / "out"
    result = search_api(
        Misbehaving(how, str(tmp_path / "marker")),
        functions=["exp"],
        examples=10,
        seed=1,
        out=out,
        call_timeout_s=1.0,
    )
    found = [f for f in result.document.findings if f.kind == kind]
    assert found, [f.kind for f in result.document.findings]
    return out / found[0].bundle


@pytest.mark.parametrize(("how", "signal_name"), [("sigfpe", "SIGFPE"), ("abort", "SIGABRT")])
def test_a_crash_bundle_reproduces_in_a_worker(tmp_path: Path, how: str, signal_name: str) -> None:
    bundle = _finding(tmp_path, how, "crash")
    pid = os.getpid()
    outcome = replay_bundle(
        bundle, reference=NumpyAdapter(), candidate=Misbehaving(how, str(tmp_path / "again"))
    )
    assert os.getpid() == pid  # this process lived through it
    assert (tmp_path / "again").exists()  # the call did run, and crash, in the worker
    assert outcome.status == "reproduces", outcome.reason
    assert signal_name in outcome.reason
    assert "\n" not in outcome.line(bundle)


def test_a_hang_bundle_reproduces_within_the_timeout(tmp_path: Path) -> None:
    bundle = _finding(tmp_path, "hang", "hang")
    started = time.monotonic()
    outcome = replay_bundle(
        bundle,
        reference=NumpyAdapter(),
        candidate=Misbehaving("hang", str(tmp_path / "again")),
        timeout_s=2.0,
    )
    assert time.monotonic() - started < 30
    assert outcome.status == "reproduces"
    assert "2 s replay timeout" in outcome.reason


def test_a_value_bundle_whose_call_now_crashes_no_longer_reproduces(tmp_path: Path) -> None:
    bundle = _finding(tmp_path, "float32-only", "value")
    outcome = replay_bundle(
        bundle, reference=NumpyAdapter(), candidate=Misbehaving("sigfpe", str(tmp_path / "m"))
    )
    assert outcome.status == "no_longer_reproduces"
    assert outcome.reason.startswith("it fails as crash now")
    assert "SIGFPE" in outcome.reason


@pytest.mark.parametrize(
    ("how", "kind", "status", "reason"),
    [
        ("sigfpe", "crash", "reproduces", "SIGFPE"),
        ("float32-only", "value", "no_longer_reproduces", "it fails as crash now: "),
    ],
)
def test_a_replay_that_ends_its_worker_keeps_the_bundles_function_kind_and_claims(
    tmp_path: Path, how: str, kind: str, status: str, reason: str
) -> None:
    bundle = _finding(tmp_path, how, kind)
    outcome = replay_bundle(
        bundle, reference=NumpyAdapter(), candidate=Misbehaving("sigfpe", str(tmp_path / "m"))
    )
    assert (outcome.status, outcome.function, outcome.kind) == (status, "exp", kind)
    assert reason in outcome.reason
    # The line names the bundle's function and kind; what stays claimed is printed beside it.
    assert f": exp [{kind}]: " in outcome.line(bundle)
    assert [c.split(":")[0] for c in outcome.claims] == [
        "reference numpy",
        f"candidate misbehaving[{how}]",
    ]
    assert len(outcome.notes(bundle)) == 2
