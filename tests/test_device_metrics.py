"""The on-device differ equals the host differ: its logic runs here on CPU namespaces.

torch (CPU) and array-api-strict stand in for a GPU library: the same namespace calls run on
CUDA. Chunks are made small so that chunk boundaries are crossed.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import diffcheck
from diffcheck.differ import compare_outputs, diff_on_device, on_device
from diffcheck.report import decode_output

torch = pytest.importorskip("torch", reason="torch (CPU) is a test dependency")
strict = pytest.importorskip("array_api_strict", reason="array-api-strict is a test dependency")

CHUNK = 1000
SIZE = 3 * CHUNK + 17


def _to(library: str, values: npt.NDArray[Any], device: str | None = None) -> Any:
    if library == "torch":
        return torch.from_numpy(values.copy())
    if device is None:
        return strict.asarray(values)
    return strict.asarray(values, device=strict.Device(device))


def _words(reason: str | None) -> str | None:
    """A reason with its figures masked: the two sides sum in other orders (compared below
    to 1e-12), so the last digit of a printed NMSE may differ."""
    return None if reason is None else re.sub(r"\d\.\d+(e-?\d+)?", "#", reason)


def _same(host: diffcheck.Verdict, device: diffcheck.Verdict) -> None:
    assert (device.status, _words(device.reason)) == (host.status, _words(host.reason))
    # The values around the worst and first-bad indices, read off the device, are the host's.
    assert device.around == host.around
    if host.metrics is None or device.metrics is None:
        assert host.metrics is device.metrics
        return
    for name in ("nmse", "reference_mse", "max_abs"):
        got, want = getattr(device.metrics, name), getattr(host.metrics, name)
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0), name
    assert device.metrics.max_abs_index == host.metrics.max_abs_index
    assert device.metrics.max_ulp == host.metrics.max_ulp
    assert device.metrics.uses_absolute_mse == host.metrics.uses_absolute_mse
    assert device.metrics.element_count == host.metrics.element_count


def _pair(seed: int, scale: float = 1e-3) -> tuple[npt.NDArray[np.float32], Any]:
    rng = np.random.default_rng(seed)
    reference = (rng.standard_normal(SIZE) * 10.0 ** rng.uniform(-20, 20, SIZE)).astype(np.float32)
    actual = (reference * (1 + scale * rng.standard_normal(SIZE))).astype(np.float32)
    return reference, actual


@pytest.mark.parametrize("library", ["torch", "strict"])
@pytest.mark.parametrize("storage", [None, "f16", "bf16", "f32", "f64"])
def test_device_figures_equal_the_host_differ(library: str, storage: str | None) -> None:
    reference, actual = _pair(1)
    actual[CHUNK] = -actual[CHUNK]  # a pair straddling zero
    actual[5] = reference[5] = 0.0
    actual[6], reference[6] = np.float32(-0.0), np.float32(1e-45)  # subnormal against -0
    host = compare_outputs(reference, actual, 1.0, ulp_dtype=storage)
    measured = diff_on_device(
        reference, _to(library, actual), max_nmse=1.0, ulp_dtype=storage, chunk=CHUNK
    )
    _same(host, measured.verdict)
    assert measured.where.startswith("device")
    assert np.array_equal(measured.actual.view(np.uint32), actual.view(np.uint32))


@pytest.mark.parametrize("library", ["torch", "strict"])
def test_a_wrong_answer_fails_on_the_device(library: str) -> None:
    reference = np.random.default_rng(2).standard_normal(SIZE).astype(np.float32)
    actual = reference.copy()
    assert diff_on_device(
        reference, _to(library, actual), max_nmse=1e-7, chunk=CHUNK
    ).verdict.passed
    actual[2 * CHUNK + 3] = reference[2 * CHUNK + 3] * 2 + 1
    measured = diff_on_device(reference, _to(library, actual), max_nmse=1e-7, chunk=CHUNK)
    _same(compare_outputs(reference, actual, 1e-7), measured.verdict)
    assert measured.verdict.status == "failed"
    assert measured.verdict.metrics is not None
    assert measured.verdict.metrics.max_abs_index == 2 * CHUNK + 3


@pytest.mark.parametrize("library", ["torch", "strict"])
@pytest.mark.parametrize("where", [0, CHUNK - 1, CHUNK, SIZE - 1])
def test_non_finite_values_and_ties_match_the_host_at_chunk_boundaries(
    library: str, where: int
) -> None:
    reference = np.ones(SIZE, np.float32)
    actual = reference.copy()
    actual[where] = actual[min(where + CHUNK, SIZE - 1)] = 4.0  # a tie: the first must win
    _same(
        compare_outputs(reference, actual, 1.0),
        diff_on_device(reference, _to(library, actual), max_nmse=1.0, chunk=CHUNK).verdict,
    )
    for value in (np.nan, -np.inf):
        bad = actual.copy()
        bad[where] = value
        _same(
            compare_outputs(reference, bad, 1.0),
            diff_on_device(reference, _to(library, bad), max_nmse=1.0, chunk=CHUNK).verdict,
        )
        bad_reference = reference.copy()
        bad_reference[where] = value
        _same(
            compare_outputs(bad_reference, bad, 1.0),
            diff_on_device(bad_reference, _to(library, bad), max_nmse=1.0, chunk=CHUNK).verdict,
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
    ],
)
def test_validation_failures_read_as_on_the_host(
    reference: list[float], actual: list[float], tolerance: float
) -> None:
    ref = np.array(reference, np.float32)
    act = np.array(actual, np.float32)
    _same(
        compare_outputs(ref, act, tolerance),
        diff_on_device(ref, torch.from_numpy(act), max_nmse=tolerance).verdict,
    )


def test_a_device_without_float64_is_judged_on_the_host_and_says_so() -> None:
    reference, actual = _pair(3)
    measured = diff_on_device(reference, _to("strict", actual, "no_float64"), max_nmse=1.0)
    assert measured.where == "host (no float64 on the device)"
    _same(compare_outputs(reference, actual, 1.0), measured.verdict)


def _cuda_array(library: str, values: npt.NDArray[np.float32]) -> Any:
    if library == "torch":
        if not torch.cuda.is_available():
            pytest.skip("torch sees no CUDA device here")
        return torch.from_numpy(values.copy()).cuda()
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed here")
    try:
        return cupy.asarray(values)
    except Exception as error:  # CuPy installed without a usable GPU
        pytest.skip(f"CuPy has no GPU here: {type(error).__name__}")


@pytest.mark.parametrize("library", ["torch", "cupy"])
def test_a_wrong_answer_on_a_cuda_device_brings_back_the_values_around_it(library: str) -> None:
    reference = np.random.default_rng(4).standard_normal(SIZE).astype(np.float32)
    actual = reference.copy()
    actual[CHUNK + 1] += np.float32(3.0)
    measured = diff_on_device(reference, _cuda_array(library, actual), max_nmse=1e-7, chunk=CHUNK)
    assert measured.where.startswith("device")
    host = compare_outputs(reference, actual, 1e-7)
    # The reason prints device sums, equal to the host's to ~1e-12 (not always to the digit).
    assert measured.verdict.status == host.status == "failed"
    assert measured.verdict.around == host.around
    (worst,) = measured.verdict.around
    assert (worst.index, worst.start) == (CHUNK + 1, CHUNK - 2)
    assert worst.actual[3] == float(actual[CHUNK + 1])
    actual[CHUNK + 1] = np.nan
    bad = diff_on_device(reference, _cuda_array(library, actual), max_nmse=1e-7).verdict
    assert [a.what for a in bad.around] == ["first non-finite in actual"]
    assert math.isnan(bad.around[0].actual[3])


def test_host_arrays_are_not_on_a_device() -> None:
    assert not on_device(np.ones(3))
    assert not on_device(torch.ones(3))
    assert not on_device(strict.ones(3))


def test_compare_measures_a_device_output_where_it_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    import diffcheck.api as api

    x = np.linspace(-3, 3, 4001, dtype=np.float32)
    host = diffcheck.compare(lambda xp, x: xp.exp(x), x, candidate="torch:cpu")
    seen: list[object] = []

    def every_array_on_device(array: object) -> bool:
        seen.append(array)
        return True

    monkeypatch.setattr(api, "on_device", every_array_on_device)
    device = diffcheck.compare(lambda xp, x: xp.exp(x), x, candidate="torch:cpu")
    assert seen
    _same(host, device)
    wrong = diffcheck.compare(
        lambda xp, x: xp.exp(x) * (1.001 if "torch" in xp.__name__ else 1.0),
        x,
        candidate="torch:cpu",
    )
    assert wrong.status == "failed"
    assert (wrong.reason or "").startswith("torch:cpu at f32 against numpy: NMSE")
    shaped = diffcheck.compare(
        lambda xp, x: xp.reshape(x, (1, -1)) if "torch" in xp.__name__ else x,
        x,
        candidate="torch:cpu",
    )
    assert shaped.status == "failed"
    assert "shape" in (shaped.reason or "")


@pytest.mark.parametrize("precision", ["f16", "bf16"])
def test_a_half_precision_check_counts_ulps_in_its_storage_and_replays(precision: str) -> None:
    from diffcheck.report import replay

    document = diffcheck.run(
        {"require_backend": "torch:cpu", "op": "gemm", "m": 8, "precision": precision}
    )
    result = document.result
    assert result is not None
    assert result.metrics is not None
    assert result.reference is not None
    assert result.actual is not None
    reference = decode_output(result.reference, "reference")
    actual = decode_output(result.actual, "actual")
    in_f32 = compare_outputs(reference, actual, 1.0).metrics
    assert in_f32 is not None
    assert result.metrics.max_ulp > 0
    assert result.metrics.max_ulp * 1000 < in_f32.max_ulp  # 13 or 16 fraction bits fewer
    assert replay(document).disagreements == []


def test_a_bfloat16_device_output_shows_its_values_widened_exactly() -> None:
    # NumPy has no bfloat16: the few values shown are widened on the device, exactly.
    reference = np.random.default_rng(5).standard_normal(SIZE).astype(np.float32)
    wrong = torch.from_numpy(reference.copy()).to(torch.bfloat16)
    wrong[7] = 100.0
    measured = diff_on_device(reference, wrong, max_nmse=1e-7, chunk=CHUNK)
    host = compare_outputs(reference, wrong.float().numpy(), 1e-7, ulp_dtype="bf16")
    assert measured.verdict.status == host.status == "failed"
    assert measured.verdict.around == host.around
    assert measured.verdict.around[0].actual[3] == 100.0
