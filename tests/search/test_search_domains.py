"""Draws reach the ordinary range of each function's domain, and cancelling long reductions.

Ordinary values were log-uniform over the whole float range only: float32 ``exp`` was
found wrong at its range's ends (-87.34, 88.72), never in the middle (45.6 ULP at -79.3),
which such a draw reaches about once in 170. Half the ordinary values now fall uniformly
over the function's own domain. Long sum-like reductions also judge a row of 10^6 values
of a large mean and a small spread, where a one-pass variance loses its digits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diffcheck.search.arrays import Space
from diffcheck.search.isolation import InProcess
from diffcheck.search.table import recipes
from diffcheck.search.values import domain_of, float_elements, sweep
from value_fakes import FaultyAdapter, FaultyNamespace

_FLOATS = ("float32", "float64")


def test_sweep_rows_reach_the_middle_of_exps_domain() -> None:
    lo, hi = domain_of("exp", "float32") or (0.0, 0.0)
    assert lo < -80
    assert hi > 88
    rows = np.concatenate([sweep(seed, "float32", "exp") for seed in range(12)])
    middle = rows[(rows > -80.0) & (rows < -60.0)]
    assert middle.size >= 5, middle  # a log-uniform draw alone lands here about 1 in 170


def test_hypothesis_draws_reach_the_middle_of_asins_domain() -> None:
    seen: list[float] = []

    @settings(max_examples=20, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(float_elements("float64", "asin"), min_size=50, max_size=50))
    def draw(values: list[float]) -> None:
        seen.extend(values)

    draw()
    # asin's own points (+-0.5 a few ULPs off) are drawn anyway: the rest of the middle
    inside = {v for v in seen if 0.1 < abs(v) < 0.9 and abs(abs(v) - 0.5) > 1e-9}
    assert len(inside) >= 20, inside  # a log-uniform draw lands here about 1 in 700


class _WrongInTheMiddle(FaultyNamespace):
    """float32 exp 40 ULP off inside (-85, -60) only: no edge of the range shows it."""

    def __init__(self) -> None:
        super().__init__("none")

    def exp(self, x: Any, /) -> Any:
        result = np.asarray(super().__getattr__("exp")(x))
        values = np.asarray(x)
        if values.dtype != np.float32:
            return result
        off = result.copy()
        middle = (values > -85.0) & (values < -60.0)
        for _ in range(40):
            off = np.where(middle, np.nextafter(off, np.float32(np.inf)), off)
        return off.astype(np.float32)


class WrongInTheMiddle(FaultyAdapter):
    def __init__(self) -> None:
        super().__init__("none")
        self._namespace = _WrongInTheMiddle()

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), ())

    @property
    def spec(self) -> str:
        return "wrong-in-the-middle"


def test_an_error_in_the_ordinary_range_of_exp_is_found(tmp_path: Any) -> None:
    from diffcheck.search import search_api

    result = search_api(
        WrongInTheMiddle(), functions=["exp"], examples=30, seed=0, out=tmp_path / "o",
        isolate=False,
    )  # fmt: skip
    found = [f for f in result.findings if f.kind == "value" and "float32" in f.dtypes]
    assert found, [(f.kind, f.dtype) for f in result.findings]
    x = np.asarray(found[0].example.args[0], np.float64).reshape(-1)
    assert np.any((x > -85.0) & (x < -60.0))


def test_sum_like_reductions_judge_a_cancelling_row_and_a_one_pass_variance_fails_it() -> None:
    table = recipes()
    for name in ("sum", "mean", "var", "std"):
        assert table[name].sweeps is not None, name
    space = Space(dtypes=_FLOATS, function="var")
    rows = table["var"].sweeps(space, 0)  # type: ignore[misc]
    assert [r.args[0].dtype.name for r in rows] == ["float32", "float64"]
    for row in rows:
        x = row.args[0]
        assert x.size == 10**6
        assert 64 <= x.mean() <= 130
        assert 0 < x.std() / x.mean() < 2.0**-8
    calls = InProcess(FaultyAdapter(), FaultyAdapter("one-pass-var"))
    verdict = calls.judge("var", rows[0])
    assert not verdict.passed
    assert verdict.blame is not None
    assert verdict.blame.side == "candidate"
    assert calls.judge("var", rows[0]).kind == "value"
    clean = InProcess(FaultyAdapter(), FaultyAdapter())
    assert clean.judge("var", rows[0]).passed  # a robust variance passes the same row


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(["exp", "sin", "asin", "acosh", "log", "pow", "tanh"]), st.sampled_from(_FLOATS)
)
def test_every_domain_is_an_interval_of_finite_values(function: str, dtype: str) -> None:
    domain = domain_of(function, dtype)
    assert domain is not None
    assert np.isfinite(domain[0])
    assert np.isfinite(domain[1])
    assert domain[0] < domain[1]
