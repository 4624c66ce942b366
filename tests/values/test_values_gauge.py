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
from diffcheck.values.gauge import align_and_explain, align_to_reference


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


# What the choice of vectors leaves open, at every scale and at its edges; what never moves.

_F32 = np.float32


def _orthogonal(seed: int, n: int) -> Any:
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q


def _turn(angle: float) -> Any:
    return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])


def _svd_of(s: list[float], seed: int, dtype: Any = _F32) -> list[Any]:
    """``U, S, Vh`` of a square matrix with singular values ``s`` (sorted down), in ``dtype``."""
    n = len(s)
    u, v = _orthogonal(seed, n), _orthogonal(seed + 1, n)
    return [u.astype(dtype), np.array(s, dtype), v.T.astype(dtype)]


def _moved(svd: list[Any], columns: list[int], left: Any, right: Any | None = None) -> list[Any]:
    """The SVD with ``U[:, columns]`` times ``left`` and ``V[:, columns]`` times ``right``."""
    u, s, vh = (np.array(a, np.float64) for a in svd)
    right = left if right is None else right
    u[:, columns] = u[:, columns] @ left
    vh[columns, :] = np.asarray(right).T @ vh[columns, :]
    return [u.astype(svd[0].dtype), s.astype(svd[1].dtype), vh.astype(svd[2].dtype)]


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_singular_values_a_thousandth_apart_take_any_basis_at_any_scale(scale: float) -> None:
    # 1e-3 apart is inside float32's eps ** (1/3) (about 5e-3) of the largest value: their
    # vectors are any basis of the pair's subspace, whatever the matrix's magnitude.
    reference = _svd_of([4 * scale, 4 * scale * (1 - 1e-3), 2 * scale, scale], 20)
    turned = _moved(reference, [0, 1], _turn(0.7))
    assert compare_values(reference, turned, function="linalg.svd").passed
    left_only = _moved(reference, [0, 1], _turn(0.7), np.eye(2))
    assert not compare_values(reference, left_only, function="linalg.svd").passed


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_singular_vectors_of_values_a_hundredth_apart_swapped_fail_at_any_scale(
    scale: float,
) -> None:
    # 1e-2 apart is outside float32's eps ** (1/3): each vector is fixed up to its sign.
    reference = _svd_of([4 * scale, 4 * scale * (1 - 1e-2), 2 * scale, scale], 21)
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])
    signs = np.diag([-1.0, 1.0])
    assert compare_values(reference, _moved(reference, [0, 1], signs), function="linalg.svd").passed
    swapped = _moved(reference, [0, 1], swap)
    assert not compare_values(reference, swapped, function="linalg.svd").passed


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
@pytest.mark.parametrize(
    ("smallest", "free"),
    [
        (1e-4, True),  # below eps ** (1/3) of the largest: a zero, its vectors unpaired
        (1e-2, False),  # above it: a singular value, its vectors tied together
    ],
)
def test_a_left_vector_negated_alone_passes_only_for_a_zero_singular_value(
    scale: float, smallest: float, free: bool
) -> None:
    reference = _svd_of([4 * scale, 2 * scale, 4 * scale * smallest], 22)
    left_only = _moved(reference, [2], -np.eye(1), np.eye(1))
    verdict = compare_values(reference, left_only, function="linalg.svd")
    assert verdict.passed is free


def test_the_cube_root_of_eps_itself_groups_values_and_is_a_zero() -> None:
    # The edges are inclusive: values eps ** (1/3) of the largest apart share a group, and
    # a singular value of eps ** (1/3) of the largest is a zero.
    edge = float(np.finfo(np.float64).eps) ** (1 / 3)
    w = np.array([0.0, edge, 1.0])
    v = _orthogonal(23, 3)
    turned = v.copy()
    turned[:, :2] = v[:, :2] @ _turn(0.9)
    assert compare_values([w, v], [w, turned], function="linalg.eigh").passed
    reference = _svd_of([1.0, edge], 24, np.float64)
    left_only = _moved(reference, [1], -np.eye(1), np.eye(1))
    assert compare_values(reference, left_only, function="linalg.svd").passed


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_eigenvalues_a_thousandth_apart_take_any_basis_at_any_scale(scale: float) -> None:
    w = np.array([-scale, 2 * scale * (1 - 1e-3), 2 * scale], _F32)
    v = _orthogonal(25, 3)
    turned = v.copy()
    turned[:, 1:] = v[:, 1:] @ _turn(2.0)
    reference = [w, v.astype(_F32)]
    assert compare_values(reference, [w, turned.astype(_F32)], function="linalg.eigh").passed
    mixed = v.copy()
    mixed[:, :2] = v[:, :2] @ _turn(2.0)  # -scale and 2 * scale: far apart, never mixed
    assert not compare_values(reference, [w, mixed.astype(_F32)], function="linalg.eigh").passed


@pytest.mark.parametrize(
    ("function", "x"),
    [
        ("linalg.svd", np.zeros((0, 3), _F32)),
        ("linalg.svd", np.zeros((3, 0), _F32)),
        ("linalg.eigh", np.zeros((0, 0), _F32)),
        ("linalg.qr", np.zeros((0, 3), _F32)),
    ],
)
def test_decompositions_of_an_empty_matrix_pass(function: str, x: Any) -> None:
    outputs = list(getattr(np.linalg, function.removeprefix("linalg."))(x))
    assert compare_values(outputs, [o.copy() for o in outputs], function=function).passed


def test_a_function_named_in_its_namespace_is_aligned_too() -> None:
    reference, candidate = _svd_in_another_gauge(_matrix(26, (4, 3)), 26)
    aligned = align_to_reference("xp.linalg.svd", reference, candidate)
    assert all(np.array_equal(a, r) for a, r in zip(aligned, reference, strict=True))
    assert compare_values(reference, candidate, function="xp.linalg.svd").passed


def _bfloat16(x: Any) -> Any:
    """``x`` cut to bfloat16's 8 significant bits, carried as float32."""
    return (np.asarray(x, _F32).view(np.uint32) & np.uint32(0xFFFF0000)).view(_F32)


def test_bfloat16_vectors_of_values_it_cannot_tell_apart_are_left_as_they_are() -> None:
    # 4 and 3.4375 are 14% apart: within bfloat16's eps ** (1/3) (16%), so their vectors are
    # a group, and a bfloat16 group is never moved; float32 tells them apart.
    u, s, vh = (_bfloat16(a) for a in _svd_of([4.0, 3.4375, 1.0], 27))
    signs = np.diag([-1.0, -1.0, -1.0])
    other = _moved([u, s, vh], [0, 1, 2], signs)
    reference = [(u, "bfloat16"), (s, "bfloat16"), (vh, "bfloat16")]
    aligned = align_to_reference("linalg.svd", reference, [(o, "bfloat16") for o in other])
    expected_u = u.copy()
    expected_u[:, :2] *= -1  # the group kept the candidate's signs; the lone vector took ours
    assert np.array_equal(aligned[0][0], expected_u)
    assert [a[1] for a in aligned] == ["bfloat16"] * 3
    plain = align_to_reference("linalg.svd", [u, s, vh], other)
    assert all(np.array_equal(a, r) for a, r in zip(plain, [u, s, vh], strict=True))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_bfloat16_qr_with_a_column_and_its_row_negated_is_aligned(shape: tuple[int, int]) -> None:
    q, r = (_bfloat16(a) for a in np.linalg.qr(_matrix(28, shape)))
    q2, r2 = q.copy(), r.copy()
    q2[:, 1] *= -1
    r2[1, :] *= -1
    reference = [(q, "bfloat16"), (r, "bfloat16")]
    aligned = align_to_reference("linalg.qr", reference, [(q2, "bfloat16"), (r2, "bfloat16")])
    assert np.array_equal(aligned[0][0], q)
    assert np.array_equal(aligned[1][0], r)


def test_complete_qr_extra_columns_are_any_basis_of_the_complement() -> None:
    q, r = np.linalg.qr(_matrix(29, (6, 3), np.float64), mode="complete")
    q2, r2 = q.copy(), r.copy()
    q2[:, 3:] = q[:, 3:] @ _orthogonal(30, 3)
    q2[:, 0] *= -1
    r2[0, :] *= -1
    assert compare_values([q, r], [q2, r2], function="linalg.qr").passed
    q3 = q2.copy()
    q3[:, 2] = q2[:, 3]  # a complement vector in place of a determined one: wrong
    assert not compare_values([q, r], [q3, r2], function="linalg.qr").passed


def test_qr_columns_swapped_without_their_rows_fail() -> None:
    # Q's columns are fixed one by one (R ties each to its row), never rotated together.
    r = np.triu(_matrix(31, (3, 3))) + 3 * np.eye(3, dtype=_F32)
    q = np.eye(3, dtype=_F32)
    swapped = q[:, [1, 0, 2]]
    assert not np.allclose(swapped @ r, q @ r)
    assert not compare_values([q, r], [swapped, r.copy()], function="linalg.qr").passed


_REPEATED = _svd_of([3.0, 3.0, 1.0], 32)  # U, S, Vh with a repeated singular value
_M, _V = np.ones((2, 2), _F32), np.ones(2, _F32)
# U and Vh a stack of two matrices, S a stack of three: no stack they share
_UNSTACKED = [np.ones((2, 3, 3), _F32), np.ones((3, 3), _F32), np.ones((2, 3, 3), _F32)]


@pytest.mark.parametrize(
    ("function", "reference", "candidate"),
    [
        pytest.param("linalg.svd", [], [], id="no-outputs"),
        pytest.param(None, [_M, _M], [_M, _M], id="no-function"),
        pytest.param("linalg.svd", _UNSTACKED, _UNSTACKED, id="svd-stacks-differ"),
        pytest.param("linalg.svd", [_M] * 3, [_M] * 3, id="svd-S-a-matrix"),
        pytest.param("linalg.svd", [_M, _V], [_M, _V], id="svd-without-Vh"),
        pytest.param("linalg.eigh", [_M] * 2, [_M] * 2, id="eigh-values-a-matrix"),
        pytest.param("linalg.qr", [_M] * 3, [_M] * 3, id="qr-three-outputs"),
        pytest.param("linalg.qr", [_M, _V], [_M, _V], id="qr-R-a-vector"),
        pytest.param(
            "linalg.svd",
            _REPEATED,
            [_REPEATED[0], _REPEATED[1], np.ones((3, 3), np.int32)],
            id="an-integer-Vh",
        ),
        pytest.param(
            "linalg.svd", _REPEATED, [tuple(_REPEATED), *_REPEATED[1:]], id="a-nested-tuple"
        ),
        pytest.param(
            "linalg.svd",
            [a.astype(np.float64) for a in _REPEATED],
            [-_REPEATED[0], _REPEATED[1], -_REPEATED[2]],
            id="another-dtype",
        ),
        pytest.param(
            "linalg.svd",
            _REPEATED,
            [np.where(np.eye(3) > 0, np.nan, _REPEATED[0]).astype(_F32), *_REPEATED[1:]],
            id="a-candidate-nan",
        ),
    ],
)
def test_outputs_that_are_not_the_decompositions_come_back_as_they_were(
    function: str | None, reference: list[Any], candidate: list[Any]
) -> None:
    out = align_to_reference(function, reference, candidate)
    assert len(out) == len(candidate)
    assert all(o is c for o, c in zip(out, candidate, strict=True))


def test_a_nan_in_the_candidates_vectors_is_reported_as_a_nan() -> None:
    reference = _REPEATED
    candidate = [a.copy() for a in reference]
    candidate[0][1, 0] = np.nan
    verdict = compare_values(reference, candidate, function="linalg.svd")
    assert not verdict.passed
    assert verdict.kind == "nan"


@pytest.mark.parametrize(("dtype", "huge"), [(np.float64, 1.7e308), (np.float32, 3e38)])
def test_a_candidate_with_huge_vectors_fails_on_its_own_values(dtype: Any, huge: float) -> None:
    # Moving such vectors overflows: the candidate is compared as it came, as a value error.
    reference = _svd_of([3.0, 3.0, 1.0], 33, dtype)
    candidate = [np.full_like(reference[0], huge), reference[1], reference[2]]
    verdict = compare_values(reference, candidate, function="linalg.svd")
    assert verdict.kind == "value"
    assert verdict.first is not None
    assert float.fromhex(verdict.first.candidate.split()[0]) == float(dtype(huge))


def test_svd_vectors_are_grouped_at_their_own_precision() -> None:
    # float32 vectors beside float64 singular values: values 1e-3 apart are near-equal at
    # the vectors' precision (float32's eps ** (1/3) is about 5e-3), not at float64's.
    u, s, vh = _svd_of([4.0, 4.0 * (1 - 1e-3), 2.0, 1.0], 34)
    reference = [u, s.astype(np.float64), vh]
    turned = _moved([u, s, vh], [0, 1], _turn(0.7))
    candidate = [turned[0], reference[1], turned[2]]
    assert compare_values(reference, candidate, function="linalg.svd").passed


def test_a_lone_vector_orthogonal_to_the_references_is_left_as_the_candidate_gave_it() -> None:
    # Its overlap is exactly 0: no sign is closer than another, and a wrong vector is
    # reported with the candidate's own values, not negated ones.
    values = np.array([1.0, 2.0], np.float32)
    reference = np.eye(2, dtype=np.float32)
    swapped = reference[:, ::-1].copy()
    _, vectors = align_to_reference("linalg.eigh", [values, reference], [values, swapped])
    assert np.array_equal(vectors, swapped)
    assert not np.signbit(vectors).any()


def test_a_singular_pair_takes_the_sign_closest_for_both_vectors_together() -> None:
    # The left vector mostly agrees (overlap 0.8), the right one is negated exactly (-1):
    # together they are closer negated, so both are negated (the left one alone would not be).
    s = np.array([2.0, 1.0])
    u_ref, vh_ref = np.eye(2), np.eye(2)
    u_cand = np.array([[0.8, -0.6], [0.6, 0.8]])
    vh_cand = np.array([[-1.0, 0.0], [0.0, 1.0]])
    u, _, vh = align_to_reference("linalg.svd", [u_ref, s, vh_ref], [u_cand, s.copy(), vh_cand])
    assert np.array_equal(u[:, 0], [-0.8, -0.6])
    assert np.array_equal(vh[0], [1.0, 0.0])
    assert np.array_equal(u[:, 1], u_cand[:, 1])  # the second pair already agrees


# Zero singular values: vectors the input does not determine, judged by what it does.


def _rank_deficient(seed: int, m: int, n: int, rank: int, dtype: Any) -> Any:
    """An ``m x n`` matrix of rank ``rank`` (singular values 1 to 4, the rest zero)."""
    rng = np.random.default_rng(seed)
    left = np.linalg.qr(rng.standard_normal((m, m)))[0][:, :rank]
    right = np.linalg.qr(rng.standard_normal((n, n)))[0][:, :rank]
    return ((left * rng.uniform(1.0, 4.0, rank)) @ right.T).astype(dtype)


def _null_basis(x: Any, side: str) -> Any:
    """An orthonormal basis (float64) of the whole null space of ``x`` (``x^T`` for "left")."""
    u, s, vh = np.linalg.svd(x.astype(np.float64), full_matrices=True)
    rank = int(np.sum(s > 1e-3 * s.max()))
    return u[:, rank:] if side == "left" else vh[rank:, :].T


def _with_null_columns(svd: list[Any], side: str, columns: Any) -> list[Any]:
    """The reduced SVD with its last null columns of ``side`` replaced by ``columns``."""
    u, s, vh = (a.copy() for a in svd)
    count = columns.shape[1]
    if side == "left":
        u[:, -count:] = columns
    else:
        vh[-count:, :] = columns.T
    return [u, s, vh]


_DEFICIENT = {
    "seed": st.integers(0, 2**31 - 1),
    "small": st.integers(2, 4),
    "extra": st.integers(1, 3),
    "lost": st.integers(1, 2),
    "dtype": st.sampled_from([np.float32, np.float64]),
    "wide": st.booleans(),
}


def _reduced_case(seed: int, small: int, extra: int, lost: int, dtype: Any, wide: bool) -> Any:
    """A rank-deficient matrix whose reduced SVD returns only part of a null space."""
    m, n = (small, small + extra) if wide else (small + extra, small)
    rank = max(1, small - lost)
    x = _rank_deficient(seed, m, n, rank, dtype)
    side = "right" if wide else "left"
    returned = small - rank  # null columns in the reduced SVD; the null space is wider
    return x, side, returned, list(np.linalg.svd(x, full_matrices=False))


@settings(max_examples=60, deadline=None)
@given(**_DEFICIENT)
def test_any_basis_of_a_wider_null_space_passes_where_returned_columns_cannot_hold_it(
    seed: int, small: int, extra: int, lost: int, dtype: Any, wide: bool
) -> None:
    x, side, returned, reference = _reduced_case(seed, small, extra, lost, dtype, wide)
    basis = _null_basis(x, side)  # extra + returned directions; returned columns only
    turn = np.linalg.qr(np.random.default_rng(seed + 1).standard_normal(basis.shape[1:] * 2))[0]
    chosen = (basis @ turn[:, :returned]).astype(dtype)
    candidate = _with_null_columns(reference, side, chosen)
    verdict = compare_values(reference, candidate, function="linalg.svd")
    assert verdict.passed, str(verdict)
    assert "not determined by the input" in verdict.bound.provenance
    # The columns returned hold another part of the null space: no rotation of them (what
    # the alignment did before) reaches the candidate's choice.
    ref_null = reference[0][:, -returned:] if side == "left" else reference[2][-returned:].T
    outside = chosen - ref_null @ (ref_null.T @ chosen)
    if float(np.linalg.norm(outside)) > 0.1:
        rotated = align_to_reference("linalg.svd", reference, candidate)
        assert not all(np.array_equal(r, c) for r, c in zip(rotated, candidate, strict=True))


@settings(max_examples=60, deadline=None)
@given(**_DEFICIENT, share=st.floats(0.05, 1.0), how=st.sampled_from(["mixed", "scaled"]))
def test_a_vector_outside_the_null_space_or_not_unit_fails(
    seed: int,
    small: int,
    extra: int,
    lost: int,
    dtype: Any,
    wide: bool,
    share: float,
    how: str,
) -> None:
    x, side, returned, reference = _reduced_case(seed, small, extra, lost, dtype, wide)
    chosen = _null_basis(x, side)[:, :returned].copy()
    if how == "mixed":  # a part of a determined vector mixed in, then made unit again
        determined = reference[0][:, 0] if side == "left" else reference[2][0]
        chosen[:, 0] += share * determined
        chosen[:, 0] /= np.linalg.norm(chosen[:, 0])
    else:  # in the null space, but not a unit vector
        chosen[:, 0] *= 1.0 + share
    candidate = _with_null_columns(reference, side, chosen.astype(dtype))
    verdict = compare_values(reference, candidate, function="linalg.svd")
    assert not verdict.passed, str(verdict)
    assert verdict.kind == "value"


def test_a_small_singular_value_above_the_threshold_keeps_its_vectors_determined() -> None:
    # Singular values 4 and 0.05: above float32's eps ** (1/3) of the largest, each
    # vector is determined, and its left vector negated alone is wrong.
    reference = _svd_of([4.0, 0.05], 40)
    turned = _moved(reference, [1], np.array([[-1.0]]), np.array([[1.0]]))
    verdict = compare_values(reference, turned, function="linalg.svd")
    assert not verdict.passed
    assert "not determined" not in verdict.bound.provenance


def test_bfloat16_null_space_vectors_are_judged_by_what_is_determined() -> None:
    x = _rank_deficient(41, 3, 5, 2, np.float32)
    reference = [_bfloat16(a) for a in np.linalg.svd(x, full_matrices=False)]
    basis = _null_basis(x, "right")
    other = _bfloat16((basis @ np.array([0.6, 0.8, 0.0]))[:, None])
    candidate = _with_null_columns(reference, "right", other)
    tagged = [(a, "bfloat16") for a in reference]
    aligned, note = align_and_explain("linalg.svd", tagged, [(a, "bfloat16") for a in candidate])
    # The right vector chosen otherwise, and the left one of the same zero value (the
    # candidate kept the reference's): both are judged by what is determined.
    assert note is not None
    assert note.startswith("2 singular vectors of zero singular values")
    assert all(np.array_equal(a[0], r[0]) for a, r in zip(aligned, tagged, strict=True))
