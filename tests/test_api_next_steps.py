"""compare()'s errors and failures say the next step: a candidate must be named, a misspelt
function is an error with the nearest name, and NaN at the same places points at values mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffcheck
from diffcheck.errors import ConfigError
from diffcheck.values.spec import STANDARD_FUNCTIONS

CANDIDATE = "array_api_strict"


def test_a_candidate_must_be_named() -> None:
    with pytest.raises(ConfigError, match=r"compare\(\) needs candidate=.*'diffcheck backends'"):
        diffcheck.compare(lambda xp, x: x, np.ones(3, np.float32))


@pytest.mark.parametrize("mode", ["nmse", "values"])
def test_a_misspelt_function_is_an_error_naming_the_nearest(mode: str) -> None:
    with pytest.raises(ConfigError, match=r'function "argmaxx" .* did you mean "argmax"\?'):
        diffcheck.compare("argmaxx", np.ones(3, np.float32), candidate=CANDIDATE, mode=mode)  # type: ignore[call-overload]


_ELEMENTWISE = ["exp", "sin", "cos", "tanh", "sqrt", "abs", "floor", "negative", "square"]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(_ELEMENTWISE), st.data())
def test_any_standard_name_with_a_letter_doubled_is_refused(name: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(name) - 1))
    typo = name[: at + 1] + name[at:]
    all_names = {n for names in STANDARD_FUNCTIONS.values() for n in names}
    if typo in all_names:
        return
    with pytest.raises(ConfigError, match="did you mean"):
        diffcheck.compare(typo, np.ones(3, np.float32), candidate=CANDIDATE, mode="values")


def test_a_correct_name_still_runs() -> None:
    verdict = diffcheck.compare("exp", np.ones(3, np.float32), candidate=CANDIDATE, mode="values")
    assert verdict.passed


def test_nan_at_the_same_places_hints_at_values_mode() -> None:
    x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)
    verdict = diffcheck.compare(lambda xp, v: v * 2, x, candidate=CANDIDATE)
    assert not verdict.passed
    assert verdict.reason is not None
    assert 'mode="values" compares NaN placement' in verdict.reason
    assert diffcheck.compare(lambda xp, v: v * 2, x, candidate=CANDIDATE, mode="values").passed


def test_nan_at_different_places_gives_no_hint() -> None:
    x = np.array([1.0, np.nan, 2.0, 3.0], np.float32)

    def moved(xp: object, v: object) -> object:
        import array_api_strict

        if xp is array_api_strict:  # the candidate puts its NaN elsewhere
            return xp.asarray([np.nan, 2.0, 4.0, 6.0], dtype=xp.float32)
        return v * 2  # type: ignore[operator]

    verdict = diffcheck.compare(moved, x, candidate=CANDIDATE)
    assert not verdict.passed
    assert verdict.reason is not None
    assert "values" not in verdict.reason
