"""The one-pass differ against the straightforward float64 formula, on both of its engines.

``numba`` runs the compiled kernel on every size (its minimum size is lowered), ``numpy`` the
chunked NumPy path. Arrays span several blocks and tiles so that boundaries are crossed.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffcheck.differ import _measure, compare_outputs, diff

BLOCK = _measure.BLOCK
SIZE = 3 * BLOCK + 77  # three block boundaries (thread boundaries) and a ragged tail


@pytest.fixture(params=["numpy", "numba"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "numba":
        pytest.importorskip("numba", reason="numba is a dependency; the kernel needs it")
        monkeypatch.setattr(_measure, "KERNEL_MIN", 0)
        monkeypatch.delenv("DIFFCHECK_DIFFER", raising=False)
    else:
        monkeypatch.setenv("DIFFCHECK_DIFFER", "numpy")
    yield request.param
    assert _measure._kernel_failure is None, _measure._kernel_failure


def _ordered(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Independent ULP keys: NumPy's own rounding into the format, then sign-magnitude.

    Python integers (object arrays) so that float64 keys subtract without overflow.
    """
    as_int = {np.float16: np.int16, np.float32: np.int32, np.float64: np.int64}[values.dtype.type]
    bits = values.view(as_int).astype(np.int64)
    magnitude = (bits & np.int64(np.iinfo(as_int).max)).astype(object)
    return np.where(bits < 0, -magnitude, magnitude)


def _expected(
    reference: npt.NDArray[Any], actual: npt.NDArray[Any], storage: type = np.float32
) -> dict[str, Any]:
    r, a = reference.astype(np.float64), actual.astype(np.float64)
    gap = np.abs(r - a)
    ulps = np.abs(_ordered(r.astype(storage)) - _ordered(a.astype(storage)))
    return {
        "reference_mse": float(np.mean(r * r)),
        "mse": float(np.mean((r - a) ** 2)),
        "max_abs": float(gap.max()),
        "max_abs_index": int(np.argmax(gap)),
        "max_ulp": int(ulps.max()),
    }


def _check(
    reference: npt.NDArray[Any], actual: npt.NDArray[Any], storage: type = np.float32
) -> None:
    verdict = compare_outputs(reference, actual, 1e300, ulp_dtype=np.dtype(storage))
    metrics = verdict.metrics
    assert metrics is not None, verdict.reason
    want = _expected(reference, actual, storage)
    assert metrics.reference_mse == pytest.approx(want["reference_mse"], rel=1e-12, abs=0)
    if metrics.uses_absolute_mse:
        assert metrics.nmse == pytest.approx(want["mse"], rel=1e-12, abs=0)
    else:
        assert metrics.nmse == pytest.approx(want["mse"] / want["reference_mse"], rel=1e-12)
    assert metrics.max_abs == want["max_abs"]
    assert metrics.max_abs_index == want["max_abs_index"]
    assert metrics.max_ulp == want["max_ulp"]


def _noisy(seed: int, dtype: type = np.float32) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    rng = np.random.default_rng(seed)
    reference = rng.standard_normal(SIZE).astype(dtype)
    actual = (reference + 1e-3 * rng.standard_normal(SIZE)).astype(dtype)
    return reference, actual


def _subnormals(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    magnitude = rng.integers(0, 2**23, SIZE, dtype=np.uint32)  # exponent field 0
    sign = rng.integers(0, 2, SIZE, dtype=np.uint32) << np.uint32(31)
    return (magnitude | sign).view(np.float32)


ADVERSARIAL: dict[str, Callable[[np.random.Generator], tuple[Any, Any]]] = {
    "huge dynamic range": lambda rng: (
        (r := (10.0 ** rng.uniform(-30, 30, SIZE) * rng.choice([-1, 1], SIZE)).astype(np.float32)),
        (r * np.float32(1 + 1e-6)).astype(np.float32),
    ),
    "cancellation": lambda rng: (
        (r := np.float32(1e8) + rng.integers(0, 64, SIZE).astype(np.float32)),
        (r + np.float32(8.0)).astype(np.float32),
    ),
    "all-zero reference": lambda rng: (
        np.zeros(SIZE, np.float32),
        (rng.standard_normal(SIZE) * 1e-20).astype(np.float32),
    ),
    "subnormals": lambda rng: (_subnormals(rng), _subnormals(rng)),
    "signed zeros": lambda rng: (
        np.where(rng.random(SIZE) < 0.5, np.float32(0.0), np.float32(-0.0)).astype(np.float32),
        np.where(rng.random(SIZE) < 0.5, np.float32(-0.0), np.float32(0.0)).astype(np.float32),
    ),
}


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_adversarial_inputs_match_the_float64_formula(engine: str, case: str) -> None:
    reference, actual = ADVERSARIAL[case](np.random.default_rng(1))
    _check(reference, actual)


def test_random_float32_and_float64_inputs_match_the_float64_formula(engine: str) -> None:
    _check(*_noisy(2))
    _check(*_noisy(3, np.float64), np.float64)


@pytest.mark.parametrize("where", [0, 2048, BLOCK - 1, 2 * BLOCK, SIZE - 1])
def test_ties_for_max_abs_report_the_first_index(engine: str, where: int) -> None:
    reference = np.ones(SIZE, np.float32)
    actual = reference.copy()
    later = [i for i in (where + 1, where + BLOCK, SIZE - 1) if where < i < SIZE]
    for i in [where, *later]:
        actual[i] = 3.0  # every pair at the same largest |diff|
    verdict = compare_outputs(reference, actual, 1e300)
    assert verdict.metrics is not None
    assert verdict.metrics.max_abs_index == where
    assert verdict.metrics.max_abs == 2.0


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (0, np.nan),
        (2047, np.inf),
        (2048, -np.inf),
        (BLOCK - 1, np.nan),
        (BLOCK, np.inf),
        (2 * BLOCK + 1, np.nan),
        (SIZE - 1, -np.inf),
    ],
)
def test_non_finite_values_are_found_at_every_boundary(
    engine: str, where: int, value: float
) -> None:
    reference, actual = _noisy(4)
    bad_actual = actual.copy()
    bad_actual[where] = value
    bad_actual[SIZE - 1 if where < SIZE - 1 else 0] = value  # a later one must not win
    verdict = compare_outputs(reference, bad_actual, 1e300)
    if where == SIZE - 1:
        assert verdict.reason == "required backend contains a non-finite value at 0"
    else:
        assert verdict.reason == f"required backend contains a non-finite value at {where}"
    assert verdict.metrics is None
    bad_reference = reference.copy()
    bad_reference[where] = value
    verdict = compare_outputs(bad_reference, bad_actual, 1e300)
    assert verdict.reason == f"reference contains a non-finite value at {where}"


def test_a_wrong_element_in_a_large_output_fails(engine: str) -> None:
    reference, actual = _noisy(5)
    actual = reference.copy()
    assert compare_outputs(reference, actual, 1e-7).passed
    actual[BLOCK + 5] += np.float32(50.0)
    verdict = compare_outputs(reference, actual, 1e-7)
    assert verdict.status == "failed"
    assert verdict.metrics is not None
    assert verdict.metrics.max_abs_index == BLOCK + 5


@pytest.mark.parametrize(
    ("storage", "numpy_type"), [("f16", np.float16), ("f32", np.float32), ("f64", np.float64)]
)
def test_ulps_count_in_the_storage_format(engine: str, storage: str, numpy_type: type) -> None:
    rng = np.random.default_rng(6)
    reference = rng.standard_normal(SIZE).astype(numpy_type)
    actual = (reference.astype(np.float64) * (1 + 1e-3 * rng.standard_normal(SIZE))).astype(
        numpy_type
    )
    # Float32 host copies, as adapters return them; for f64 the keys come from float32 values.
    ref32, act32 = reference.astype(np.float32), actual.astype(np.float32)
    verdict = compare_outputs(ref32, act32, 1e300, ulp_dtype=storage)
    assert verdict.metrics is not None
    want = _expected(ref32, act32, numpy_type)["max_ulp"]
    assert verdict.metrics.max_ulp == want


def test_bfloat16_ulps_round_to_nearest_even(engine: str) -> None:
    torch = pytest.importorskip("torch", reason="torch rounds to bfloat16 independently")
    rng = np.random.default_rng(7)
    wide = rng.standard_normal(SIZE).astype(np.float32)
    reference = torch.from_numpy(wide).to(torch.bfloat16)
    actual = torch.from_numpy(wide * np.float32(1.01)).to(torch.bfloat16)

    def keys(t: Any) -> npt.NDArray[np.int64]:
        bits = t.view(torch.int16).numpy().astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFF), bits)

    want = int(np.abs(keys(reference) - keys(actual)).max())
    # The reference stays float32 (unrounded): it is rounded into bfloat16 by the differ.
    verdict = compare_outputs(wide, actual.float().numpy(), 1e300, ulp_dtype="bf16")
    assert verdict.metrics is not None
    assert verdict.metrics.max_ulp == want
    assert 0 < want < 10


def test_crossing_zero_counts_the_values_on_both_sides() -> None:
    tiny = np.float32(np.finfo(np.float16).smallest_subnormal)
    verdict = compare_outputs(np.array([tiny]), np.array([-tiny]), 1e300, ulp_dtype="f16")
    assert verdict.metrics is not None
    assert verdict.metrics.max_ulp == 2
    zeros = compare_outputs(np.array([0.0], np.float32), np.array([-0.0], np.float32), 1.0)
    assert zeros.metrics is not None
    assert zeros.metrics.max_ulp == 0


def test_a_half_precision_output_is_not_counted_in_float32_bits() -> None:
    reference = np.array([1.0, -0.5, 3.0], np.float32)
    actual = np.array([1.0, 0.5, 3.0], np.float32)  # a sign flip, as a bad attention gives
    f32 = compare_outputs(reference, actual, 1e300).metrics
    bf16 = compare_outputs(reference, actual, 1e300, ulp_dtype="bf16").metrics
    assert f32 is not None
    assert bf16 is not None
    assert f32.max_ulp == 2 * 0x3F000000  # the old count, in float32 units
    assert bf16.max_ulp == 2 * 0x3F00  # 256x fewer: bfloat16 has 16 fewer fraction bits


def test_a_bad_ulp_dtype_is_misuse_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match=r"ulp_dtype 'int8' is not a floating storage format"):
        diff([1.0], [1.0], max_nmse=1e-7, ulp_dtype="int8")


def test_the_numpy_fallback_takes_over_when_the_kernel_breaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kernel = pytest.importorskip(
        "diffcheck.differ._kernel", reason="numba is missing: nothing to break"
    )
    monkeypatch.setattr(_measure, "KERNEL_MIN", 0)
    monkeypatch.setattr(_measure, "_kernel_failure", None)
    reference, actual = _noisy(8)
    fast = compare_outputs(reference, actual, 1e300).metrics

    def broken(*args: object) -> None:
        raise RuntimeError("no LLVM here")

    monkeypatch.setattr(kernel, "measure", broken)
    slow = compare_outputs(reference, actual, 1e300).metrics
    assert _measure.engine(SIZE) == "numpy (RuntimeError: no LLVM here)"
    assert fast is not None
    assert slow is not None
    assert slow.nmse == pytest.approx(fast.nmse, rel=1e-12)
    assert (slow.max_abs, slow.max_abs_index, slow.max_ulp) == (
        fast.max_abs,
        fast.max_abs_index,
        fast.max_ulp,
    )


finite32 = st.floats(-1e6, 1e6, width=32, allow_subnormal=True)


@settings(max_examples=25, deadline=None)
@given(
    reference=hnp.arrays(np.float32, st.integers(1, 4500), elements=finite32),
    noise=st.floats(0.0, 1.0),
    storage=st.sampled_from(["f16", "bf16", "f32", "f64"]),
    poison=st.sampled_from([None, np.nan, np.inf]),
    poison_at=st.integers(0, 4499),
)
def test_the_kernel_and_the_numpy_path_agree(
    reference: npt.NDArray[np.float32],
    noise: float,
    storage: str,
    poison: float | None,
    poison_at: int,
) -> None:
    pytest.importorskip("numba", reason="numba is a dependency; the kernel needs it")
    actual = (reference * np.float32(1 + noise) - np.float32(noise)).astype(np.float32)
    if poison is not None:
        actual[poison_at % actual.size] = poison
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIFFCHECK_DIFFER", "numpy")
        slow = compare_outputs(reference, actual, 1e-3, ulp_dtype=storage)
        patch.delenv("DIFFCHECK_DIFFER")
        patch.setattr(_measure, "KERNEL_MIN", 0)
        fast = compare_outputs(reference, actual, 1e-3, ulp_dtype=storage)
    assert (fast.status, fast.reason is None) == (slow.status, slow.reason is None)
    if fast.reason is not None and "NMSE" not in fast.reason:
        assert fast.reason == slow.reason
    assert (fast.metrics is None) == (slow.metrics is None)
    if fast.metrics is not None and slow.metrics is not None:
        for name in ("nmse", "reference_mse", "max_abs"):
            got, want = getattr(fast.metrics, name), getattr(slow.metrics, name)
            assert math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0), name
        assert fast.metrics.max_abs_index == slow.metrics.max_abs_index
        assert fast.metrics.max_ulp == slow.metrics.max_ulp
        assert fast.metrics.uses_absolute_mse == slow.metrics.uses_absolute_mse


@pytest.mark.parametrize("storage", ["f32", "bf16"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("side", ["reference", "actual", "both"])
def test_the_fast_tiles_hand_every_non_finite_pair_to_the_exact_pass(
    storage: str, value: float, side: str
) -> None:
    # The fast float32/bfloat16 tiles learn of a NaN or an infinity only through their sums
    # going non-finite; each kind, on each side, must still give the NumPy path's figures.
    pytest.importorskip("numba", reason="numba is a dependency; the kernel needs it")
    from diffcheck.differ import _kernel

    reference, actual = _noisy(11)
    where = BLOCK + 2048 + 5  # inside a tile that is not a block's first
    if side in ("reference", "both"):
        reference[where] = value
    if side in ("actual", "both"):
        actual[where] = value
    actual[3] += np.float32(7.0)  # a finite worst pair elsewhere
    fmt = _measure.ulp_format(storage)
    mode = _measure._mode(reference.dtype, fmt)
    fast = _kernel.measure(reference, actual, fmt, mode, mode)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIFFCHECK_DIFFER", "numpy")
        slow = _measure.measure(reference, actual, fmt)
    assert fast.first_bad_reference == (where if side != "actual" else None)
    assert fast.first_bad_actual == (where if side != "reference" else None)
    assert fast.max_abs_index == slow.max_abs_index == 3
    assert fast.max_ulp == slow.max_ulp
    assert fast.max_abs == slow.max_abs
    for name in ("sum_sq_diff", "sum_sq_ref"):
        assert math.isclose(getattr(fast, name), getattr(slow, name), rel_tol=1e-12), name


@pytest.mark.parametrize("storage", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_subnormal_keys_agree_in_every_format(storage: str, dtype: type) -> None:
    # A subnormal of the format counts in steps of 2**(min_exponent - fraction): 2**-1074 for
    # float64, which the kernel once computed as 0 and divided by (ZeroDivisionError, and
    # every later comparison of the process fell back to NumPy).
    pytest.importorskip("numba", reason="numba is a dependency; the kernel needs it")
    from diffcheck.differ import _kernel

    tiny = np.finfo(dtype).smallest_subnormal
    reference = np.array([0.0, tiny, 3 * tiny, -tiny, 1e-38, 1.0], dtype)
    actual = np.array([tiny, 0.0, tiny, tiny, -1e-38, 1.0], dtype)
    fmt = _measure.ulp_format(storage)
    mode = _measure._mode(reference.dtype, fmt)
    fast = _kernel.measure(reference, actual, fmt, mode, mode)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIFFCHECK_DIFFER", "numpy")
        slow = _measure.measure(reference, actual, fmt)
    assert fast.max_ulp == slow.max_ulp
    assert fast.max_ulp > 0 or storage == "f16"  # float16 rounds every value here to 0 or 1
    assert (fast.max_abs, fast.max_abs_index) == (slow.max_abs, slow.max_abs_index)


def test_small_inputs_load_the_kernel_only_after_its_load_cost_is_spent() -> None:
    # A fresh process: a one-off small check must not pay numba's import (the NumPy path),
    # and once the NumPy path has cost as much as loading would, the kernel takes over.
    pytest.importorskip("numba", reason="numba is a dependency; the kernel needs it")
    script = """
import sys
import numpy as np
from diffcheck import diff
from diffcheck.differ import _measure
r = np.linspace(1, 2, 1000, dtype=np.float32)
assert diff(r, r * np.float32(1.001), max_nmse=1.0).passed
print("diffcheck.differ._kernel" in sys.modules, _measure.engine(1000), _measure._numpy_seconds > 0)
_measure._numpy_seconds = _measure.LOAD_AFTER_SECONDS
assert diff(r, r * np.float32(1.001), max_nmse=1.0).passed
print("diffcheck.differ._kernel" in sys.modules, _measure.engine(1000))
"""
    env = {k: v for k, v in os.environ.items() if k != "DIFFCHECK_DIFFER"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split("\n")[:2] == ["False numpy True", "True numba"]
