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


def test_a_passing_located_verdict_has_an_empty_note() -> None:
    verdict = diffcheck.compare(
        programs.softmax_naive, LOGITS, candidate=BuggyAdapter("none"), locate=True
    )
    assert verdict.passed
    assert verdict.locate_note == ""  # type: ignore[union-attr]


def _fields(verdict: Any) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(verdict, f.name) for f in dataclasses.fields(verdict)}


SQUARE = RNG.standard_normal((6, 6)).astype(np.float32)
MODEST = LOGITS / 6  # inside float16's exp range: the f16 exp is only imprecise


def _negated_zeros(xp: Any, v: Any) -> Any:
    return -v if "buggy" in xp.__name__ else v


def _wraps_on_candidate(xp: Any, v: Any) -> Any:
    if "buggy" in xp.__name__:
        return xp.add(v, v)  # int32 overflow wraps here, which the standard leaves open
    return xp.add(v, xp.asarray(0, dtype=xp.int32))


@pytest.mark.parametrize(
    ("fn", "inputs", "options"),
    [
        (programs.softmax_naive, (MODEST,), {"max_nmse": 0.5}),
        (programs.softmax_naive, (MODEST,), {"segments": 2}),
        (programs.softmax_naive, (MODEST,), {"precision": "f16"}),
        (programs.softmax_naive, (MODEST,), {"reference": "array_api_strict"}),
        (programs.softmax_naive, (LOGITS,), {"mode": "values", "function": "exp"}),
        (_negated_zeros, (np.zeros(4),), {"mode": "values", "signed_zero": False}),
        ("var", (SQUARE,), {"mode": "values", "kwargs": {"axis": -1}}),
        (
            _wraps_on_candidate,
            (np.array([2**31 - 1], np.int32),),
            {"mode": "values", "function": "add", "voters": [("wraps", lambda v: np.add(v, v))]},
        ),
    ],
    ids=[
        "max_nmse",
        "segments",
        "precision",
        "reference",
        "function",
        "signed_zero",
        "kwargs",
        "voters",
    ],
)
def test_a_located_verdict_is_the_plain_verdict_for_every_option(
    fn: Any, inputs: tuple[Any, ...], options: dict[str, Any]
) -> None:
    bug = "var-axis" if fn == "var" else "exp-f16"
    plain = diffcheck.compare(fn, *inputs, candidate=BuggyAdapter(bug), **options)
    located = diffcheck.compare(fn, *inputs, candidate=BuggyAdapter(bug), locate=True, **options)
    assert not (plain.reason or "").startswith("raises:")
    # The same verdict; only the plain one offers locate=True as its next step.
    hint = "; locate=True names the call inside the function that went wrong"
    expected = _fields(plain)
    if isinstance(plain, diffcheck.Verdict) and not plain.passed:
        reason = plain.reason or ""
        assert plain.metrics is not None
        if plain.metrics.nmse < plain.tolerance:
            # Within the tolerance given, failed by the precision floor (max_nmse=0.5 lets
            # the f16 exp through; the floor does not): that reason offers no next step.
            assert "precision floor:" in reason, reason
            assert not reason.endswith(hint), reason
        else:
            assert reason.endswith(hint), reason
        expected["reason"] = reason.removesuffix(hint)
    assert _fields(located) == expected


def test_a_self_test_may_be_located_when_allowed() -> None:
    verdict = diffcheck.compare(
        programs.softmax_naive, LOGITS, candidate="numpy", allow_self_test=True, locate=True
    )
    assert verdict.passed


def test_a_named_function_is_located_with_its_keyword_arguments() -> None:
    verdict = diffcheck.compare(
        "var",
        SQUARE,
        candidate=BuggyAdapter("var-axis"),
        mode="values",
        kwargs={"axis": -1},
        locate=True,
    )
    assert not verdict.passed
    located = verdict.located  # type: ignore[union-attr]
    assert located is not None, verdict.locate_note  # type: ignore[union-attr]
    assert located.first_wrong is not None
    assert located.first_wrong.function == "var"


def test_values_mode_locates_on_the_inputs_in_their_own_dtypes() -> None:
    x, y = RNG.standard_normal(64), RNG.standard_normal(64)  # float64
    verdict = diffcheck.compare(
        lambda xp, a, b: xp.multiply(a, b),
        x,
        y,
        candidate=BuggyAdapter("multiply-f32"),
        mode="values",
        function="multiply",
        locate=True,
    )
    assert not verdict.passed
    located = verdict.located  # type: ignore[union-attr]
    assert located is not None, verdict.locate_note  # type: ignore[union-attr]
    assert located.first_wrong is not None
    assert located.first_wrong.function == "multiply"
    assert located.first_wrong.input_dtypes == ("float64", "float64")


def test_nmse_mode_locates_on_float32_inputs_at_the_precision_asked() -> None:
    for precision in ("f32", "f16"):
        verdict = diffcheck.compare(
            programs.softmax_naive,
            LOGITS.astype(np.float64),
            reference=BuggyAdapter("none"),
            candidate=BuggyAdapter("exp-f16"),
            precision=precision,
            allow_self_test=True,  # both are NumPy underneath
            locate=True,
        )
        located = verdict.located  # type: ignore[attr-defined]
        assert located is not None, verdict.locate_note  # type: ignore[attr-defined]
        assert (located.reference, located.precision) == ("buggy[none]", precision)
        assert located.calls[0].input_dtypes == ("float32",)
