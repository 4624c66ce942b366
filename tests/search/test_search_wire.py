"""What comes back from the search's worker: host data only, and a lost answer is a finding.

torch shares a pickled tensor through file descriptors that only the sending process's
key unlocks: the search's worker answering with one ended the run at its second function
(``AuthenticationError``). Answers now carry host arrays only, read back by a reader that
builds nothing else; an answer that cannot come home is a crash finding of that call.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from diffcheck.search import search_api
from diffcheck.search.bundle import read_bundle
from diffcheck.search.isolation import WIRE_FAILURE, CallFailure, Isolated
from diffcheck.search.recipes import Example
from diffcheck.search.wire import WireError, dump_answer, load_answer
from diffcheck.values.call import Outcome
from run_fakes import Foreign, Misbehaving
from value_fakes import FaultyAdapter


def test_torch_cpu_completes_in_the_default_isolated_mode(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the candidate is torch:cpu")
    functions = ["exp", "sum", "linalg.vecdot"]
    result = search_api("torch:cpu", functions=functions, examples=4, seed=0, out=tmp_path / "o")
    doc = result.document
    assert doc.isolation.mode == "worker"
    assert doc.complete
    assert [r.function for r in doc.functions_tried] == functions
    assert [r.error for r in doc.functions_tried] == [None] * len(functions)
    assert not [f for f in doc.findings if f.kind == "crash"], [f.reason for f in doc.findings]
    assert doc.isolation.workers_started == 1


def test_an_answer_holding_a_library_object_is_refused_by_the_reader() -> None:
    data = dump_answer(("ok", Outcome(value=np.asarray(Foreign(), dtype=object))))
    with pytest.raises(WireError, match=r"run_fakes\.Foreign"):
        load_answer(data)
    with pytest.raises(WireError, match="cannot be read"):
        load_answer(data[:-3])
    calls = pickle.dumps(eval)  # builtins that are not data are refused as well
    with pytest.raises(WireError, match=r"builtins\.eval"):
        load_answer(calls)


def test_the_worker_drops_device_results_and_sends_host_arrays() -> None:
    value = np.arange(3.0)
    answer = load_answer(dump_answer(("ok", (Outcome(value=value, device_result=Foreign()),))))
    status, (outcome,) = answer
    assert status == "ok"
    assert outcome.device_result is None
    np.testing.assert_array_equal(outcome.value, value)


def test_an_answer_that_cannot_come_home_is_a_crash_of_that_call_only(tmp_path: Path) -> None:
    calls = Isolated(FaultyAdapter(), Misbehaving("foreign"), timeout_s=30)
    try:
        example = Example((np.asarray([1.0, 2.0]),))
        lost = calls.outputs("exp", example)
        assert isinstance(lost, CallFailure)
        assert lost.kind == "crash"
        assert lost.reason.startswith(WIRE_FAILURE)
        assert "Foreign" in lost.reason
        again = calls.outputs("sin", example)  # the next call is answered
        assert not isinstance(again, CallFailure)
        np.testing.assert_allclose(again[1].value, np.sin([1.0, 2.0]))
    finally:
        calls.close()


def test_a_search_meeting_a_lost_answer_keeps_it_as_a_finding_and_goes_on(
    tmp_path: Path,
) -> None:
    result = search_api(
        Misbehaving("foreign"), functions=["exp", "sin"], examples=5, seed=0, out=tmp_path / "o"
    )
    doc = result.document
    assert [r.function for r in doc.functions_tried] == ["exp", "sin"]
    assert doc.complete
    exp = [f for f in doc.findings if f.function == "exp"]
    assert exp, "the wrong result is reported"
    assert all(f.function == "exp" for f in doc.findings)
    # its bundle's outputs could not come home: the bundle says so instead of the run ending
    bundle = read_bundle(tmp_path / "o" / exp[0].bundle)
    assert WIRE_FAILURE in (bundle.outputs["candidate"].raised or "")
