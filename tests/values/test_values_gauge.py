"""Decompositions: a candidate's other (equally right) choice of vectors passes; a wrong one fails.

``linalg.svd``, ``linalg.eigh`` and ``linalg.qr`` fix their vectors only up to signs (phases)
and, for repeated values, a rotation. Each test below makes the candidate's outputs from
NumPy's own by such a choice (it must pass) or by a change outside it (it must fail).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.values import compare_values
from diffcheck.values.gauge import align_to_reference


def _matrix(seed: int, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _signs(seed: int, n: int, complex_: bool = False) -> Any:
    rng = np.random.default_rng(seed + 1)
    if complex_:
        return np.exp(1j * rng.uniform(0, 2 * np.pi, n))
    return rng.choice([-1.0, 1.0], n)


def _svd_in_another_gauge(x: Any, seed: int) -> tuple[list[Any], list[Any]]:
    u, s, vh = np.linalg.svd(x)
    k = s.shape[-1]
    d = _signs(seed, k, np.iscomplexobj(x))
    u2, vh2 = u.copy(), vh.copy()
    u2[..., :k] = u[..., :k] * d
    vh2[..., :k, :] = np.conj(d)[:, None] * vh[..., :k, :]
    return [u, s, vh], [u2.astype(u.dtype), s, vh2.astype(vh.dtype)]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    m=st.integers(1, 6),
    n=st.integers(1, 6),
    dtype=st.sampled_from([np.float32, np.float64, np.complex64]),
)
def test_an_svd_with_other_signs_passes_and_the_unaligned_compare_would_fail(
    seed: int, m: int, n: int, dtype: Any
) -> None:
    reference, candidate = _svd_in_another_gauge(_matrix(seed, (m, n), dtype), seed)
    assert compare_values(reference, candidate, function="linalg.svd").passed
    moved = any(not np.array_equal(r, c) for r, c in zip(reference, candidate, strict=True))
    if moved:  # without the function's name nothing is aligned: the other signs fail
        assert not compare_values(reference, candidate).passed


def test_the_same_singular_vector_negated_on_one_side_only_fails() -> None:
    # u_k negated without v_k: U S Vh is no longer the matrix; no sign choice allows it.
    u, s, vh = np.linalg.svd(_matrix(3, (5, 4)))
    wrong = u.copy()
    wrong[:, 1] *= -1
    verdict = compare_values([u, s, vh], [wrong, s, vh], function="linalg.svd")
    assert not verdict.passed
    assert verdict.kind == "value"


def test_two_singular_vectors_of_distinct_values_swapped_fail() -> None:
    u, s, vh = np.linalg.svd(_matrix(4, (4, 4)))
    assert s[0] - s[1] > 0.1 * s[0]
    u2, vh2 = u.copy(), vh.copy()
    u2[:, [0, 1]] = u[:, [1, 0]]
    vh2[[0, 1], :] = vh[[1, 0], :]
    assert not compare_values([u, s, vh], [u2, s, vh2], function="linalg.svd").passed


def test_a_vector_a_little_off_fails_after_its_sign_is_aligned() -> None:
    u, s, vh = np.linalg.svd(_matrix(5, (4, 4)))
    off = -u.copy()  # the other sign, and then a real error in one element
    vh_other = -vh.copy()
    off[2, 0] += np.float32(1e-3)
    verdict = compare_values([u, s, vh], [off, s, vh_other], function="linalg.svd")
    assert not verdict.passed
    assert verdict.first is not None


@pytest.mark.parametrize("repeat", [2, 3])
def test_a_repeated_singular_value_takes_any_basis_of_its_subspace(repeat: int) -> None:
    # A matrix with `repeat` equal singular values: its vectors there are any rotation.
    rng = np.random.default_rng(repeat)
    q1, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    q2, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    s = np.array([4.0] * repeat + [2.0, 1.0, 0.5][: 5 - repeat])
    x = (q1 @ np.diag(s) @ q2.T).astype(np.float64)
    u, sv, vh = np.linalg.svd(x)
    turn, _ = np.linalg.qr(rng.standard_normal((repeat, repeat)))
    u2, vh2 = u.copy(), vh.copy()
    u2[:, :repeat] = u[:, :repeat] @ turn
    vh2[:repeat, :] = turn.T @ vh[:repeat, :]
    assert np.allclose(u2 @ np.diag(sv) @ vh2, x)  # the same matrix: a right answer
    assert compare_values([u, sv, vh], [u2, sv, vh2], function="linalg.svd").passed
    # Rotating the left vectors alone is not a decomposition of it, and fails.
    assert not compare_values([u, sv, vh], [u2, sv, vh], function="linalg.svd").passed


def test_full_matrices_extra_vectors_are_any_basis_of_the_null_space() -> None:
    x = _matrix(7, (6, 3), np.float64)
    u, s, vh = np.linalg.svd(x, full_matrices=True)
    turn, _ = np.linalg.qr(np.random.default_rng(8).standard_normal((3, 3)))
    u2 = u.copy()
    u2[:, 3:] = u[:, 3:] @ turn
    assert compare_values([u, s, vh], [u2, s, vh], function="linalg.svd").passed


def test_a_stack_of_svds_is_aligned_matrix_by_matrix() -> None:
    x = _matrix(9, (3, 4, 4))
    u, s, vh = np.linalg.svd(x)
    u2, vh2 = u.copy(), vh.copy()
    u2[1, :, 2] *= -1
    vh2[1, 2, :] *= -1
    assert compare_values([u, s, vh], [u2, s, vh2], function="linalg.svd").passed
    u2[2, :, 0] *= -1  # its partner in vh left as it was
    assert not compare_values([u, s, vh], [u2, s, vh2], function="linalg.svd").passed


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_eigenvectors_with_other_signs_pass_and_a_mixed_one_fails(dtype: Any) -> None:
    a = _matrix(11, (5, 5), dtype)
    h = (a @ np.conj(a.T)).astype(dtype)
    w, v = np.linalg.eigh(h)
    d = _signs(11, 5, np.iscomplexobj(h))
    other = (v * d).astype(v.dtype)
    assert compare_values([w, v], [w, other], function="linalg.eigh").passed
    mixed = other.copy()
    mixed[:, 0] = (other[:, 0] + other[:, 1]) / np.sqrt(2)
    assert not compare_values([w, v], [w, mixed], function="linalg.eigh").passed


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr_with_a_column_and_its_row_negated_passes_and_either_alone_fails(
    shape: tuple[int, int],
) -> None:
    q, r = np.linalg.qr(_matrix(13, shape))
    q2, r2 = q.copy(), r.copy()
    q2[:, 0] *= -1
    r2[0, :] *= -1
    assert compare_values([q, r], [q2, r2], function="linalg.qr").passed
    assert not compare_values([q, r], [q2, r], function="linalg.qr").passed
    assert not compare_values([q, r], [q, r2], function="linalg.qr").passed


def test_bfloat16_vectors_are_only_negated_never_rotated() -> None:
    u, s, vh = np.linalg.svd(_matrix(15, (3, 3)))
    turn = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    reference = [(u, "bfloat16"), (s, "bfloat16"), (vh, "bfloat16")]
    signed = [(-u, "bfloat16"), (s, "bfloat16"), (-vh, "bfloat16")]
    aligned = align_to_reference("linalg.svd", reference, signed)
    assert all(np.array_equal(a[0], r[0]) for a, r in zip(aligned, reference, strict=True))
    assert [a[1] for a in aligned] == ["bfloat16"] * 3
    swapped = [(u @ turn, "bfloat16"), (s, "bfloat16"), (turn @ vh, "bfloat16")]
    kept = align_to_reference("linalg.svd", reference, swapped)
    assert np.array_equal(kept[0][0], u @ turn)  # distinct values: no rotation to undo it


@pytest.mark.parametrize(
    ("function", "candidate"),
    [
        ("exp", [np.ones(3, np.float32)]),  # not a decomposition
        ("linalg.svd", [np.ones((2, 2), np.float32)] * 2),  # not its number of outputs
        ("linalg.svd", [np.ones((2, 2), np.int32)] * 3),  # not floats
        ("linalg.svd", [np.full((2, 2), np.nan, np.float32)] * 3),  # not finite
    ],
)
def test_anything_else_comes_back_as_it_was(function: str, candidate: list[Any]) -> None:
    reference = [np.zeros_like(c) for c in candidate]
    out = align_to_reference(function, reference, candidate)
    assert all(o is c for o, c in zip(out, candidate, strict=True))


def test_numpy_and_mlx_choose_different_signs_and_both_pass() -> None:
    mx = pytest.importorskip("mlx.core", reason="the candidate is MLX")
    import diffcheck

    x = _matrix(0, (4, 4))
    verdict = diffcheck.compare("linalg.svd", x, candidate="mlx:cpu", mode="values")
    assert verdict.passed, str(verdict)
    theirs = [np.array(o) for o in mx.linalg.svd(mx.array(x), stream=mx.cpu)]
    ours = list(np.linalg.svd(x))
    assert not compare_values(ours, theirs).passed  # unaligned, the signs differ
