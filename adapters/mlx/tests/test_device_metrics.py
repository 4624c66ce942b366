"""``diff_on_device`` on MLX arrays equals the host differ: float32 error-free sums, no float64.

These run on MLX's default device: the CPU here, the GPU (Metal or CUDA) where MLX has one,
through the same code. Chunks and blocks are made small so that their boundaries are crossed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from diffcheck import Verdict
from diffcheck.differ import MLX_BLOCK, compare_outputs, diff_on_device, on_device

mx = pytest.importorskip("mlx.core", reason="MLX is this adapter's library")

CHUNK = 2 * MLX_BLOCK
SIZE = 3 * CHUNK + 17  # three full chunks and a partial block


def _same(host: Verdict, device: Verdict) -> None:
    assert (device.status, device.reason) == (host.status, host.reason)
    assert device.around == host.around  # the values next to the worst and first-bad indices
    if host.metrics is None or device.metrics is None:
        assert host.metrics is device.metrics
        return
    for name in ("nmse", "reference_mse", "max_abs"):
        got, want = getattr(device.metrics, name), getattr(host.metrics, name)
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0), (name, got, want)
    assert device.metrics.max_abs_index == host.metrics.max_abs_index
    assert device.metrics.max_ulp == host.metrics.max_ulp
    assert device.metrics.uses_absolute_mse == host.metrics.uses_absolute_mse
    assert device.metrics.element_count == host.metrics.element_count


def _pair(seed: int, scale: float = 1e-3) -> tuple[npt.NDArray[np.float32], Any]:
    rng = np.random.default_rng(seed)
    magnitude = 10.0 ** rng.uniform(-20, 20, SIZE)
    reference = (rng.standard_normal(SIZE) * magnitude).astype(np.float32)
    actual = (reference * (1 + scale * rng.standard_normal(SIZE))).astype(np.float32)
    return reference, actual


def _measured(reference: Any, actual: Any, tolerance: float = 1.0, **options: Any) -> Any:
    return diff_on_device(reference, mx.array(actual), max_nmse=tolerance, chunk=CHUNK, **options)


@pytest.mark.parametrize("storage", [None, "f16", "bf16", "f32"])
def test_figures_equal_the_host_differ_without_float64(storage: str | None) -> None:
    reference, actual = _pair(1)
    actual[CHUNK] = -actual[CHUNK]  # a pair straddling zero
    actual[5] = reference[5] = 0.0
    actual[6], reference[6] = np.float32(-0.0), np.float32(1e-45)  # subnormal against -0
    actual[7], reference[7] = np.float32(2e38), np.float32(-1e38)  # |diff| near float32 max
    host = compare_outputs(reference, actual, 1.0, ulp_dtype=storage)
    measured = _measured(reference, actual, ulp_dtype=storage)
    assert measured.where.startswith("device"), measured.where
    _same(host, measured.verdict)
    assert np.array_equal(measured.actual.view(np.uint32), actual.view(np.uint32))


def test_an_overflowing_difference_is_measured_on_the_host_and_says_so() -> None:
    reference, actual = _pair(7)
    actual[9], reference[9] = np.float32(3e38), np.float32(-3e38)  # float32 r - a overflows
    measured = _measured(reference, actual)
    assert measured.where.endswith("a float32 difference overflows)")
    _same(compare_outputs(reference, actual, 1.0), measured.verdict)


@pytest.mark.parametrize("seed", range(6))
def test_close_outputs_of_every_scale_match_to_1e_12(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    reference = rng.standard_normal(SIZE).astype(np.float32) * np.float32(10.0 ** (seed * 7 - 20))
    actual = np.nextafter(reference, np.float32(np.inf) * rng.choice([-1, 1], SIZE))
    actual = actual.astype(np.float32)
    _same(compare_outputs(reference, actual, 1.0), _measured(reference, actual).verdict)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_outputs_count_ulps_in_their_storage(dtype: str) -> None:
    reference, _ = _pair(2)
    reference = np.clip(reference, -6e4, 6e4).astype(np.float32)
    half = mx.array(reference * np.float32(1.001)).astype(getattr(mx, dtype))
    widened = np.array(half.astype(mx.float32), np.float32)
    host = compare_outputs(reference, widened, 1.0, ulp_dtype=dtype)
    measured = diff_on_device(reference, half, max_nmse=1.0, chunk=CHUNK)
    assert measured.where.startswith("device")
    _same(host, measured.verdict)
    assert np.array_equal(measured.actual, widened)


def test_one_wrong_element_fails_and_is_found() -> None:
    reference = np.random.default_rng(3).standard_normal(SIZE).astype(np.float32)
    actual = reference.copy()
    assert _measured(reference, actual, 1e-7).verdict.passed
    wrong = 2 * CHUNK + 3
    actual[wrong] = reference[wrong] * 2 + 1
    measured = _measured(reference, actual, 1e-7)
    _same(compare_outputs(reference, actual, 1e-7), measured.verdict)
    assert measured.verdict.status == "failed"
    assert measured.verdict.metrics is not None
    assert measured.verdict.metrics.max_abs_index == wrong


def test_one_ulp_off_everywhere_is_seen_and_ties_go_to_the_first() -> None:
    reference = np.ones(SIZE, np.float32)
    actual = reference.copy()
    for where in (CHUNK - 1, CHUNK, 2 * CHUNK + 1):
        actual[where] = 4.0  # a tie across a chunk boundary: the first must win
    measured = _measured(reference, actual)
    _same(compare_outputs(reference, actual, 1.0), measured.verdict)
    assert measured.verdict.metrics is not None
    assert measured.verdict.metrics.max_abs_index == CHUNK - 1
    nudged = np.nextafter(reference, np.float32(2))
    _same(compare_outputs(reference, nudged, 1e-30), _measured(reference, nudged, 1e-30).verdict)


@pytest.mark.parametrize("where", [0, MLX_BLOCK - 1, CHUNK, SIZE - 1])
@pytest.mark.parametrize("value", [np.nan, -np.inf])
def test_non_finite_values_never_pass(where: int, value: float) -> None:
    reference = np.random.default_rng(4).standard_normal(SIZE).astype(np.float32)
    bad = reference.copy()
    bad[where] = value
    measured = _measured(reference, bad)
    assert measured.verdict.status == "failed"
    _same(compare_outputs(reference, bad, 1.0), measured.verdict)
    bad_reference = reference.copy()
    bad_reference[where] = value
    _same(compare_outputs(bad_reference, bad, 1.0), _measured(bad_reference, bad).verdict)
    _same(
        compare_outputs(bad_reference, reference, 1.0), _measured(bad_reference, reference).verdict
    )


@pytest.mark.parametrize(
    ("reference", "actual", "tolerance"),
    [
        ([1.0, 2.0], [1.0], 1e-7),
        ([], [1.0], 1e-7),
        ([1.0], [], 1e-7),
        ([np.nan, 1.0], [1.0], 1e-7),
        ([1.0], [1.0], 0.0),
        ([0.0, 0.0], [0.0, 1e-3], 1e-7),
        ([0.0, 0.0], [0.0, 0.0], 1e-7),
    ],
)
def test_validation_failures_read_as_on_the_host(
    reference: list[float], actual: list[float], tolerance: float
) -> None:
    ref = np.array(reference, np.float32)
    act = np.array(actual, np.float32)
    _same(compare_outputs(ref, act, tolerance), _measured(ref, act, tolerance).verdict)


def test_a_shape_mismatch_fails() -> None:
    reference = np.ones(SIZE, np.float32)
    measured = _measured(reference, np.ones(SIZE - 1, np.float32))
    assert measured.verdict.status == "failed"
    assert measured.verdict.reason == f"output length mismatch: reference={SIZE} actual={SIZE - 1}"


def test_what_float32_cannot_hold_exactly_is_measured_on_the_host() -> None:
    reference, actual = _pair(5)
    wide = _measured(reference.astype(np.float64), actual)
    assert wide.where.startswith("host (MLX on ")
    assert "float64 reference" in wide.where
    _same(compare_outputs(reference.astype(np.float64), actual, 1.0), wide.verdict)
    in_f64 = _measured(reference, actual, ulp_dtype="f64")
    assert in_f64.where.startswith("host")
    _same(compare_outputs(reference, actual, 1.0, ulp_dtype="f64"), in_f64.verdict)


def test_the_verdict_alone_brings_no_copy() -> None:
    reference, actual = _pair(6)
    measured = _measured(reference, actual, host_copy=False)
    assert measured.actual is None
    _same(compare_outputs(reference, actual, 1.0), measured.verdict)


def test_compare_reads_an_mlx_output_on_the_host() -> None:
    # Host-visible memory: the host differ reads it without moving the reference over.
    assert not on_device(mx.array([1.0]))


def test_compare_on_mlx_measures_where_the_output_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    import diffcheck
    import diffcheck.api as api

    x = np.linspace(-3, 3, 3 * MLX_BLOCK + 5, dtype=np.float32)
    monkeypatch.setattr(api, "on_device", lambda array: True)
    measured = diffcheck.compare(lambda xp, v: xp.exp(v), x, candidate="mlx")
    monkeypatch.setattr(api, "on_device", lambda array: False)
    host = diffcheck.compare(lambda xp, v: xp.exp(v), x, candidate="mlx")
    _same(host, measured)
    monkeypatch.setattr(api, "on_device", lambda array: True)
    wrong = diffcheck.compare(
        lambda xp, v: xp.exp(v) * (1.001 if "mlx" in xp.__name__ else 1.0), x, candidate="mlx"
    )
    assert wrong.status == "failed"
    assert (wrong.reason or "").startswith("mlx at f32 against numpy: NMSE")


@pytest.mark.parametrize("nudge", [1.0, 1.0 + 1e-15, 1.0 - 1e-15])
def test_a_tolerance_at_the_nmse_is_decided_by_the_host(nudge: float) -> None:
    reference, actual = _pair(8)
    exact = compare_outputs(reference, actual, 1.0).metrics
    assert exact is not None
    tolerance = exact.nmse * nudge
    measured = _measured(reference, actual, tolerance)
    _same(compare_outputs(reference, actual, tolerance), measured.verdict)
    assert "host differ" in measured.where
    assert measured.actual is not None


def test_a_flushing_device_measures_on_the_host_only_with_inputs_below_2_to_the_minus_102(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from diffcheck.differ import device_mlx

    monkeypatch.setattr(device_mlx, "_mlx_keeps_subnormals", lambda mx: False)
    reference, actual = _pair(9)
    reference = np.where(np.abs(reference) < 2.0**-100, 1.0, reference).astype(np.float32)
    actual = np.where(np.abs(actual) < 2.0**-100, 1.0, actual).astype(np.float32)
    actual[3] = 0.0
    normal = _measured(reference, actual)
    assert normal.where.startswith("device")
    _same(compare_outputs(reference, actual, 1.0), normal.verdict)
    actual[CHUNK + 1] = np.float32(2.0**-110)
    tiny = _measured(reference, actual)
    assert tiny.where.endswith("an input lies below 2**-102)")
    _same(compare_outputs(reference, actual, 1.0), tiny.verdict)
