"""compare(..., locate=True): a failing verdict names the first wrong call inside fn."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import diffcheck
import diffcheck.localize
import localize_programs as programs
from localize_fakes import BuggyAdapter

RNG = np.random.default_rng(3)
LOGITS = RNG.standard_normal((4, 16)).astype(np.float32) * 6  # some past float16's exp range


def _planted_site(fn: Any, bug: str) -> str:
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if f"# planted: {bug}" in line)
    return f"{programs.__file__}:{start + offset}"


@pytest.mark.parametrize("mode", ["nmse", "values"])
def test_a_failing_compare_names_the_planted_wrong_call(mode: str) -> None:
    verdict = diffcheck.compare(
        programs.softmax_naive,
        LOGITS,
        candidate=BuggyAdapter("exp-f16"),
        mode=mode,  # type: ignore[arg-type]
        locate=True,
    )
    assert not verdict.passed
    located = verdict.located  # type: ignore[union-attr]
    assert located is not None, verdict.locate_note  # type: ignore[union-attr]
    first = located.first_wrong
    assert first is not None
    assert (first.function, first.site) == ("exp", _planted_site(programs.softmax_naive, "exp-f16"))
    assert f"first wrong call: #{first.index} exp at" in str(verdict)
    assert str(verdict).startswith(
        str(
            diffcheck.compare(
                programs.softmax_naive,
                LOGITS,
                candidate=BuggyAdapter("exp-f16"),
                mode=mode,  # type: ignore[arg-type]
            )
        )
    )


def test_the_wrong_matmul_of_a_two_layer_mlp_is_named_not_the_calls_after_it() -> None:
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    w1 = RNG.standard_normal((16, 16)).astype(np.float32)
    w2 = RNG.standard_normal((16, 4)).astype(np.float32)
    verdict = diffcheck.compare(
        programs.two_layer_mlp,
        x,
        w1,
        w2,
        candidate=BuggyAdapter("matmul-square-transpose"),
        locate=True,
    )
    assert not verdict
    first = verdict.located.first_wrong  # type: ignore[attr-defined]
    assert first.site == _planted_site(programs.two_layer_mlp, "matmul-square-transpose")
    assert [c.status for c in verdict.located.calls if c.index > first.index].count("wrong") == 0  # type: ignore[attr-defined]


def test_a_passing_compare_does_not_run_locate(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("locate ran for a passing comparison")

    monkeypatch.setattr(diffcheck.localize, "locate", refuse)
    verdict = diffcheck.compare(
        programs.softmax_naive, LOGITS, candidate=BuggyAdapter("none"), locate=True
    )
    assert verdict.passed
    assert verdict.located is None  # type: ignore[attr-defined]
    assert "located" not in str(verdict)


def test_a_failing_compare_does_run_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = diffcheck.localize.locate

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["candidate"])
        return real(*args, **kwargs)

    monkeypatch.setattr(diffcheck.localize, "locate", counted)
    verdict = diffcheck.compare(
        programs.softmax_naive, LOGITS, candidate=BuggyAdapter("exp-f16"), locate=True
    )
    assert len(calls) == 1
    assert verdict.located is not None  # type: ignore[attr-defined]


def test_without_locate_the_verdict_is_the_plain_one() -> None:
    verdict = diffcheck.compare(programs.softmax_naive, LOGITS, candidate=BuggyAdapter("exp-f16"))
    assert type(verdict) is diffcheck.Verdict
    assert not hasattr(verdict, "located")


def test_a_locate_that_cannot_run_leaves_the_verdict_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the proxy cannot follow this program")

    monkeypatch.setattr(diffcheck.localize, "locate", broken)
    verdict = diffcheck.compare(
        programs.softmax_naive, LOGITS, candidate=BuggyAdapter("exp-f16"), locate=True
    )
    assert not verdict.passed
    assert verdict.located is None  # type: ignore[attr-defined]
    assert "the proxy cannot follow this program" in verdict.locate_note  # type: ignore[attr-defined]
    assert "located: not run (RuntimeError: the proxy cannot follow" in str(verdict)


def test_a_located_verdict_serializes_as_the_plain_one() -> None:
    import dataclasses

    plain = diffcheck.compare(programs.softmax_naive, LOGITS, candidate=BuggyAdapter("exp-f16"))
    located = diffcheck.compare(
        programs.softmax_naive, LOGITS, candidate=BuggyAdapter("exp-f16"), locate=True
    )
    assert [f.name for f in dataclasses.fields(located)] == [
        f.name for f in dataclasses.fields(plain)
    ]
    assert located.reason == plain.reason


def test_a_failure_without_a_wrong_call_says_where_the_carried_error_enters() -> None:
    # In float16 the naive softmax's exp overflows, and that is the right float16 answer:
    # no call is wrong, but the summary names where the two sides part.
    f16 = diffcheck.localize.locate(
        programs.softmax_naive, LOGITS * 3, candidate=BuggyAdapter("none"), precision="f16"
    )
    assert f16.first_wrong is None
    drift = f16.first_drift
    assert drift is not None
    assert drift.function == "exp"
    assert f"the carried error first breaks its bound at #{drift.index} exp" in f16.summary()
