"""The shared-work assessment of output pairs gives the single-pair functions' answers."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffcheck.localize._arrays import cast
from diffcheck.localize._batched import Pair, _one, _within_ulps, assess
from diffcheck.values.bounds import bound_for
from diffcheck.values.model import Bound
from diffcheck.values.ulp import round_to_bfloat16, ulp_distance
from ulp_steps import FLOAT_DTYPES, nudge


def _bound(kind: str, dtype: str, magnitude: float) -> Bound:
    if kind == "nmse":
        return bound_for(None, dtype)
    if kind == "sum-atol":
        return bound_for("sum", dtype, reduced=1, magnitude=magnitude)
    return bound_for({"exact": "negative", "ulp": "exp", "reduction": "sum"}[kind], dtype)


@st.composite
def _pairs(draw: st.DrawFn) -> Pair:
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    storage = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    shape = draw(st.sampled_from([(), (0,), (1,), (7,), (3, 5), (2, 3, 4)]))
    finite = st.floats(-1e4, 1e4, width=16 if dtype == "float16" else 32)
    values = draw(hnp.arrays(storage, shape, elements=finite))
    steps = draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3)))
    candidate = nudge(values, steps)
    if candidate.size and draw(st.booleans()):
        special = draw(st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0]))
        candidate.reshape(-1)[draw(st.integers(0, candidate.size - 1))] = special
    if candidate.ndim == 2 and draw(st.booleans()):  # a strided view
        values, candidate = values.T, candidate.T
    reference: Any = values
    got: Any = candidate
    if dtype == "bfloat16":
        reference = (round_to_bfloat16(values), "bfloat16")
        got = (round_to_bfloat16(candidate), "bfloat16")
    expected = reference
    if draw(st.booleans()) and dtype in ("float32", "float64"):
        # A narrower candidate: the reference is rounded into its dtype to be compared.
        narrow = draw(st.sampled_from(["float16", "bfloat16"]))
        expected = cast(reference, narrow)
        got = cast(got, narrow)
        dtype = narrow
    kind = draw(st.sampled_from(["exact", "ulp", "reduction", "sum-atol", "nmse"]))
    bound = _bound(kind, dtype, float(draw(finite)))
    return Pair(reference, expected, got, bound)


@settings(max_examples=400, deadline=None)
@given(pairs=st.lists(_pairs(), min_size=1, max_size=6), shared=st.booleans())
def test_assessing_pairs_together_gives_each_pairs_own_answer(
    pairs: list[Pair], shared: bool
) -> None:
    if shared:  # the carried and the local pair of one call share the reference's array
        pairs = [Pair(pairs[0].reference, p.expected, p.candidate, p.bound) for p in pairs]
        pairs = [p for p in pairs if np.shape(_array(p.reference)) == np.shape(_array(p.expected))]
    found = assess(pairs)
    for pair, got in zip(pairs, found, strict=True):
        assert repr(got) == repr(_one(pair))  # repr: NaN figures compare equal, exactly


def _array(host: Any) -> np.ndarray:
    return np.asarray(host[0] if isinstance(host, tuple) else host)


def test_a_candidate_beyond_its_bound_fails_and_one_within_passes() -> None:
    x = np.linspace(0.5, 2.0, 64, dtype=np.float32)
    two_ulp = bound_for("exp", "float32")
    near, far = nudge(x, np.full(64, 2)), nudge(x, np.full(64, 3))
    matmul = bound_for(None, "float32")
    off = x * np.float32(1.01)
    within, beyond, exact_moved, nmse_off = assess(
        [
            Pair(x, x, near, two_ulp),
            Pair(x, x, far, two_ulp),
            Pair(x, x, near, bound_for("negative", "float32")),
            Pair(x, x, off, matmul),
        ]
    )
    assert within.quick is True
    assert not within.same_bits
    assert beyond.quick is False
    assert exact_moved.quick is False
    assert nmse_off.quick is False
    assert beyond.figures.max_abs > within.figures.max_abs > 0
    assert assess([Pair(x, x, x.copy(), two_ulp)])[0].same_bits


def test_an_nmse_just_over_its_bucket_fails_and_just_under_passes() -> None:
    x = np.linspace(0.5, 2.0, 256)
    bound = bound_for(None, "float64")
    assert bound.nmse is not None
    over = x * (1 + np.sqrt(bound.nmse * 1.2))
    under = x * (1 + np.sqrt(bound.nmse * 0.8))
    found = assess([Pair(x, x, over, bound), Pair(x, x, under, bound)])
    assert [a.quick for a in found] == [False, True]
    assert [a.quick for a in found] == [
        _one(p).quick for p in (Pair(x, x, over, bound), Pair(x, x, under, bound))
    ]


def test_a_narrowed_reduction_measures_its_absolute_error_from_the_rounded_reference() -> None:
    # float32 1 + 2**-12 rounds to float16 1.0; the candidate is 3 float16 ULPs from that.
    reference = np.array([1 + 2.0**-12], np.float32)
    expected = cast(reference, "float16")
    candidate = np.array([1 + 3 * 2.0**-10], np.float16)
    # Within this absolute error of the unrounded reference, beyond it from the rounded one.
    atol = 3 * 2.0**-10 - 2.0**-13
    bound = Bound("reduction", 2.0, None, "a reduction's ULPs or an absolute error", atol)
    pair = Pair(reference, expected, candidate, bound)
    assert assess([pair])[0].quick is False
    assert _one(pair).quick is False


@st.composite
def _ulp_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, str, float]:
    name = draw(st.sampled_from(["float16", "float32", "bfloat16", "float64"]))
    storage = np.float32 if name == "bfloat16" else np.dtype(name)
    size = draw(st.integers(1, 12))
    widths: dict[str, Literal[16, 32, 64]] = {"float16": 16, "float64": 64}
    finite = st.floats(allow_nan=False, allow_infinity=False, width=widths.get(name, 32))
    values = draw(hnp.arrays(storage, size, elements=finite))
    steps = draw(hnp.arrays(np.int64, size, elements=st.integers(-3, 3)))
    with np.errstate(over="ignore"):  # the largest finite values step to infinity: replaced
        candidate = nudge(values, steps)
    if draw(st.booleans()):  # elements that change sign (a zero of the other sign among them)
        flip = draw(hnp.arrays(np.bool_, size))
        candidate = np.where(flip, -candidate, candidate).astype(storage)
    candidate = np.where(np.isfinite(candidate), candidate, values).astype(storage)
    if name == "bfloat16":
        values, candidate = round_to_bfloat16(values), round_to_bfloat16(candidate)
    return values, candidate, name, draw(st.sampled_from([0.0, 1.0, 2.0, 2.5, 3.0, 4.0]))


@settings(max_examples=400, deadline=None)
@given(case=_ulp_pairs())
def test_the_quick_ulp_check_agrees_with_the_ulp_distance(
    case: tuple[np.ndarray, np.ndarray, str, float],
) -> None:
    expected, candidate, name, ulps = case
    assert _within_ulps(expected, candidate, name, ulps) == (
        not bool((ulp_distance(expected, candidate, name) > ulps).any())
    )


def test_the_quick_ulp_check_counts_steps_across_zero_and_within_one_sign() -> None:
    one = np.float32(1.0)
    up = np.nextafter(np.nextafter(one, np.float32(2)), np.float32(2))
    assert _within_ulps(np.array([one]), np.array([up]), "float32", 2.0)
    assert not _within_ulps(np.array([one]), np.array([up]), "float32", 1.0)
    tiny = np.array([np.float32(1e-45)])  # the smallest subnormal: one step from zero
    assert _within_ulps(tiny, -tiny, "float32", 2.0)
    assert not _within_ulps(tiny, -tiny, "float32", 1.0)
    bf = round_to_bfloat16(np.array([1.0, 1.0 + 2**-7, 1.0 + 2**-6], np.float32))
    assert _within_ulps(bf[:1], bf[2:], "bfloat16", 2.0)
    assert not _within_ulps(bf[:1], bf[2:], "bfloat16", 1.0)
