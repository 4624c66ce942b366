"""Decompositions whose outputs are unique only up to a choice: put the candidate's in the reference's.

``linalg.svd``, ``linalg.eigh`` and ``linalg.qr`` return vectors the standard does not fix:
each singular vector pair or eigenvector may be negated (multiplied by a unit phase, for
complex ones), the vectors of a repeated value may be any orthonormal basis of their
subspace, and QR's ``Q`` columns and ``R`` rows may be negated together. Two correct
libraries differ there (NumPy and MLX give opposite signs for some singular vectors of
the same float32 matrix), so an elementwise comparison of those outputs fails on right
answers.

:func:`align_to_reference` re-expresses the candidate's outputs in the reference's choice
before they are compared: within each group of (near-)equal values it applies the unitary
``R`` closest to mapping the candidate's vectors onto the reference's (the polar factor of
their overlap, Procrustes), which for a lone value is its sign or phase. That freedom is
exactly what the decomposition leaves open, so a wrong vector stays wrong: a vector from
another value's subspace, a singular vector pair whose left and right signs disagree (one
``R`` moves both), a ``Q`` column negated without its ``R`` row. Values are grouped when
they lie within ``eps ** (1/3)`` of the largest in magnitude: closer than that, their
vectors are not determined to the precision the comparison asks of them.

A singular value at most ``eps ** (1/3)`` times the largest is a zero to the precision, and
its vectors are not determined by the input at all: with ``full_matrices=False`` a wide
matrix's right vectors (a tall one's left vectors) of a zero value are any unit vectors of
a null space wider than the columns returned, so no rotation of the columns returned maps
one library's choice onto another's. Such vectors, and ``full_matrices``' extra ones, are
judged by what is determined: each is a unit vector orthogonal to every other vector of
its side (within ``sqrt(eps)``), and ``A v`` (``A^H u`` for a left vector), with ``A``
rebuilt from the reference's ``U S Vh``, is no longer than the zero threshold itself (plus
``sqrt(eps)`` of the largest value). Vectors that pass are replaced by the reference's, so
the comparison reads only the determined values, and :func:`align_and_explain` says how
many were judged so; vectors that fail are only turned within their columns, as the others,
for the comparison to report.

A real lone vector is only negated, which is exact; a rotated group, and a complex phase,
are rounded back into the candidate's dtype (half an ULP per element). bfloat16 values
(carried as float32) are only negated, never rotated. Anything that does not have the
decomposition's shape and dtype is handed back unchanged, for the comparison to report, and
so is a candidate whose alignment would not be finite (a wrong one, with values so large
that moving them overflows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["GAUGED", "align_and_explain", "align_to_reference"]

#: The standard's functions whose outputs are fixed only up to signs, phases or rotations.
GAUGED = frozenset(["linalg.svd", "linalg.eigh", "linalg.qr"])

_Array = npt.NDArray[Any]


def align_to_reference(
    function: str | None, reference: Sequence[Any], candidate: Sequence[Any]
) -> list[Any]:
    """The candidate's outputs of ``function``, in the reference's choice of vectors.

    ``reference`` and ``candidate`` are host outputs: NumPy arrays, or ``(float32 array,
    "bfloat16")`` pairs. For a function outside :data:`GAUGED`, or outputs that are not
    the decomposition's, the candidate's come back as they are.
    """
    return align_and_explain(function, reference, candidate)[0]


def align_and_explain(
    function: str | None, reference: Sequence[Any], candidate: Sequence[Any]
) -> tuple[list[Any], str | None]:
    """:func:`align_to_reference`, and a note when null-space vectors were judged apart.

    Returns
    -------
    aligned, note
        The aligned outputs, and None, or one sentence saying how many singular vectors
        of zero singular values were judged by their determined properties (unit,
        orthogonal, ``A v`` within the zero threshold) instead of by their components.
    """
    name = (function or "").removeprefix("xp.")
    one = _ALIGNERS.get(name)
    if one is None or len(reference) != len(candidate):
        return list(candidate), None
    judged: list[int] = []
    aligned = _align(one, name, reference, candidate, judged)
    if aligned is None:
        return list(candidate), None
    if not judged:
        return aligned, None
    count = sum(judged)
    return aligned, (
        f"{count} singular {'vector' if count == 1 else 'vectors'} of zero singular values "
        "(at most eps ** (1/3) of the largest) not determined by the input: judged as unit, "
        "orthogonal to the others and A v within that threshold, not by their components"
    )


def _align(
    one: _One, name: str, reference: Sequence[Any], candidate: Sequence[Any], judged: list[int]
) -> list[Any] | None:
    """The aligned outputs, or None where they are handed back as they came."""
    refs = [_plain(v) for v in reference]
    cands = [_plain(v) for v in candidate]
    if any(r is None for r in refs) or any(c is None for c in cands):
        return None
    ref_arrays = [r[0] for r in refs if r is not None]
    cand_arrays = [c[0] for c in cands if c is not None]
    tagged = any(c[1] is not None for c in cands if c is not None)
    if not _compatible(ref_arrays, cand_arrays) or not _shapes_ok(name, ref_arrays):
        return None
    # bfloat16 values are carried as float32: their grouping takes bfloat16's epsilon.
    eps = 2.0**-8 if tagged else float(np.finfo(ref_arrays[0].dtype).eps)
    with np.errstate(all="ignore"):
        rule = _Rule(eps, rotate=not tagged, judged=judged)
        aligned = _batched(ref_arrays, cand_arrays, rule, one)
        if aligned is None:
            return None
        values = [n.astype(c.dtype, copy=False) for c, n in zip(cand_arrays, aligned, strict=True)]
    if not all(bool(np.isfinite(v).all()) for v in values):
        # A wrong candidate's huge values overflowed on the way: it is reported as it came.
        judged.clear()
        return None
    tags = [c[1] for c in cands if c is not None]
    return [v if t is None else (v, t) for v, t in zip(values, tags, strict=True)]


@dataclass(frozen=True)
class _Rule:
    """How a group is told apart and moved: the storage dtype's epsilon; rotations allowed.

    ``judged`` collects, per matrix, how many null-space vectors were judged by their
    determined properties (:func:`_null_space_holds`) and given the reference's values.
    """

    eps: float
    rotate: bool
    judged: list[int] = field(default_factory=list)


def _plain(value: Any) -> tuple[_Array, str | None] | None:
    """``(array, tag)`` of a host output; None for anything that is not a float array."""
    tag = None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        value, tag = value
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fc":
        return None
    return value, tag


def _compatible(refs: list[_Array], cands: list[_Array]) -> bool:
    """Same shapes and dtypes on both sides, every element finite."""
    return all(
        r.shape == c.shape
        and r.dtype == c.dtype
        and bool(np.isfinite(r).all())
        and bool(np.isfinite(c).all())
        for r, c in zip(refs, cands, strict=True)
    )


def _groups(values: _Array, rule: _Rule, scale: float) -> list[list[int]]:
    """Indices of ``values`` (sorted either way) split where neighbours are clearly apart."""
    if values.size == 0:
        return []
    tolerance = rule.eps ** (1 / 3) * (scale or 1.0)
    groups = [[0]]
    for k in range(1, values.size):
        if abs(float(values[k]) - float(values[k - 1])) <= tolerance:
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def _polar(overlap: _Array) -> _Array:
    """The unitary factor of ``overlap``: the rotation closest to it (Procrustes)."""
    left, _, right = np.linalg.svd(overlap)
    return np.asarray(left @ right)


def _rotation(overlaps: Sequence[_Array], size: int, rule: _Rule) -> _Array | None:
    """The group's rotation, or None when a bfloat16 group would need more than a sign."""
    if size > 1 and not rule.rotate:
        return None
    total = sum(overlaps[1:], overlaps[0])
    if size == 1 and not np.iscomplexobj(total):
        return np.array([[-1.0 if float(total[0, 0]) < 0 else 1.0]])
    return _polar(total)


_One = Callable[[list[_Array], list[_Array], _Rule], list[_Array]]


def _batched(
    refs: list[_Array], cands: list[_Array], rule: _Rule, one: _One
) -> list[_Array] | None:
    """Apply ``one`` to every matrix of a stack, in float64 or complex128."""
    stack = _stack_shape(refs)
    if stack is None:
        return None
    wide = [c.astype(np.complex128 if c.dtype.kind == "c" else np.float64) for c in cands]
    for index in np.ndindex(*stack):
        wide_refs = [r[index].astype(w.dtype) for r, w in zip(refs, wide, strict=True)]
        mine = [w[index] for w in wide]  # views: each matrix is written back in place
        for target, new in zip(mine, one(wide_refs, [m.copy() for m in mine], rule), strict=True):
            target[...] = new
    return wide


def _stack_shape(refs: list[_Array]) -> tuple[int, ...] | None:
    """The leading (stack) shape the outputs share; None when they have no matrix in them."""
    matrix = max(refs, key=lambda r: r.ndim)
    if matrix.ndim < 2:
        return None
    stack = matrix.shape[:-2]
    if any(r.shape[: len(stack)] != stack for r in refs):
        return None
    return tuple(stack)


def _svd_one(refs: list[_Array], cands: list[_Array], rule: _Rule) -> list[_Array]:
    u_r, s_r, vh_r = refs
    u_c, s_c, vh_c = cands
    v_r, v_c = vh_r.conj().T, vh_c.conj().T.copy()
    k = s_r.shape[-1]
    scale = float(np.max(np.abs(s_r))) if s_r.size else 0.0
    null = rule.eps ** (1 / 3) * (scale or 1.0)
    nonzero = [i for i in range(k) if abs(float(s_r[i])) > null]
    for group in _groups(s_r[nonzero], rule, scale):
        columns = [nonzero[g] for g in group]
        # One rotation moves a left and a right vector together: their product is fixed.
        overlaps = [
            u_c[:, columns].conj().T @ u_r[:, columns],
            v_c[:, columns].conj().T @ v_r[:, columns],
        ]
        rotation = _rotation(overlaps, len(columns), rule)
        if rotation is not None:
            u_c[:, columns] = u_c[:, columns] @ rotation
            v_c[:, columns] = v_c[:, columns] @ rotation
    # Zero singular values and full_matrices' extra vectors: each side's own null space.
    zero = [i for i in range(k) if i not in nonzero]
    matrix = (u_r[:, :k] * s_r[:k]) @ vh_r[:k, :]  # A, rebuilt from the reference's U S Vh
    slack = rule.eps**0.5
    for vectors_c, vectors_r, a in ((u_c, u_r, matrix.conj().T), (v_c, v_r, matrix)):
        columns = zero + list(range(k, vectors_c.shape[1]))
        if not columns:
            continue
        if _null_space_holds(a, vectors_c, columns, null + slack * (scale or 1.0), slack):
            # Any such vectors are right: the comparison reads the determined values only.
            vectors_c[:, columns] = vectors_r[:, columns]
            rule.judged.append(len(columns))
            continue
        overlap = vectors_c[:, columns].conj().T @ vectors_r[:, columns]
        rotation = _rotation([overlap], len(columns), rule)
        if rotation is not None:
            vectors_c[:, columns] = vectors_c[:, columns] @ rotation
    return [u_c, s_c, v_c.conj().T]


def _null_space_holds(
    a: _Array, vectors: _Array, columns: list[int], threshold: float, slack: float
) -> bool:
    """Whether ``vectors[:, columns]`` are unit, orthogonal to every column, and ``a v`` small.

    ``a`` maps the side's vectors to what must vanish (``A`` for right vectors, ``A^H``
    for left ones); each column's ``|a v|`` must be at most ``threshold``.
    """
    chosen = vectors[:, columns]
    gram = vectors.conj().T @ chosen  # every column against the chosen ones
    gram[columns, range(len(columns))] -= 1.0  # a unit vector's own product is 1
    if not bool(np.all(np.abs(gram) <= slack)):
        return False
    lengths = np.sqrt(np.sum(np.abs(a @ chosen) ** 2, axis=0))
    return bool(np.all(lengths <= threshold))


def _eigh_one(refs: list[_Array], cands: list[_Array], rule: _Rule) -> list[_Array]:
    values_r, vectors_r = refs
    values_c, vectors_c = cands
    scale = float(np.max(np.abs(values_r))) if values_r.size else 0.0
    for group in _groups(values_r, rule, scale):
        overlap = vectors_c[:, group].conj().T @ vectors_r[:, group]
        rotation = _rotation([overlap], len(group), rule)
        if rotation is not None:
            vectors_c[:, group] = vectors_c[:, group] @ rotation
    return [values_c, vectors_c]


def _qr_one(refs: list[_Array], cands: list[_Array], rule: _Rule) -> list[_Array]:
    q_r, _ = refs
    q_c, r_c = cands
    determined = min(r_c.shape)  # Q's columns past R's rank-many rows: a null space basis
    for column in range(determined):
        overlap = q_c[:, [column]].conj().T @ q_r[:, [column]]
        rotation = _rotation([overlap], 1, rule)
        assert rotation is not None  # a sign or a phase: always allowed
        q_c[:, [column]] = q_c[:, [column]] @ rotation
        r_c[[column], :] = rotation.conj().T @ r_c[[column], :]
    extra = list(range(determined, q_c.shape[1]))
    if extra:
        overlap = q_c[:, extra].conj().T @ q_r[:, extra]
        rotation = _rotation([overlap], len(extra), rule)
        if rotation is not None:
            q_c[:, extra] = q_c[:, extra] @ rotation
    return [q_c, r_c]


def _shapes_ok(name: str, refs: list[_Array]) -> bool:
    if name == "linalg.svd":
        return len(refs) == 3 and refs[0].ndim >= 2 and refs[1].ndim == refs[0].ndim - 1
    if name == "linalg.eigh":
        return len(refs) == 2 and refs[1].ndim >= 2 and refs[0].ndim == refs[1].ndim - 1
    return len(refs) == 2 and refs[0].ndim >= 2 and refs[0].ndim == refs[1].ndim


#: Each decomposition's one-matrix alignment, looked up (and its shapes checked) per call.
_ALIGNERS: dict[str, _One] = {
    "linalg.svd": _svd_one,
    "linalg.eigh": _eigh_one,
    "linalg.qr": _qr_one,
}
