"""locate on a program with a decomposition: another choice of signs is no wrong call."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest

from diffcheck import locate
from diffcheck.adapters.numpy_ref import NumpyAdapter


class _Linalg:
    def __init__(self, flip: str) -> None:
        self.flip = flip

    def __getattr__(self, name: str) -> Any:
        return getattr(cnp.linalg, name)

    def svd(self, x: Any, /, *, full_matrices: bool = True) -> Any:
        u, s, vh = cnp.linalg.svd(x, full_matrices=full_matrices)
        u, vh = u.copy(), vh.copy()
        u[..., :, 0] *= -1  # the first left vector negated...
        if self.flip == "both":  # ...with its right partner: the same decomposition
            vh[..., 0, :] *= -1
        return u, s, vh


class _Namespace:
    __name__ = "signs_namespace"

    def __init__(self, flip: str) -> None:
        self.linalg = _Linalg(flip)

    def __getattr__(self, name: str) -> Any:
        return getattr(cnp, name)


class _SignsAdapter(NumpyAdapter):
    """NumPy, except that svd's first singular vector has the other sign."""

    name = "signs"
    namespace_label = "signs_namespace"

    def __init__(self, flip: str) -> None:
        super().__init__(None)
        self._namespace = _Namespace(flip)

    @property
    def spec(self) -> str:
        return f"signs[{self.flip}]"

    @property
    def flip(self) -> str:
        return self._namespace.linalg.flip

    def namespace(self) -> Any:
        return self._namespace


def _whitened(xp: Any, x: Any) -> Any:
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    rebuilt = u @ (s[:, None] * vh)  # does not depend on the signs chosen
    return xp.sum(rebuilt * rebuilt, axis=-1)


X = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float64)


def test_other_signs_of_a_singular_vector_pair_are_not_a_wrong_call() -> None:
    result = locate(_whitened, X, candidate=_SignsAdapter("both"))
    svd = next(c for c in result.calls if c.function == "linalg.svd")
    assert svd.status == "ok", str(result)
    assert result.first_wrong is None


def test_a_left_vector_negated_without_its_partner_is_the_wrong_call() -> None:
    result = locate(_whitened, X, candidate=_SignsAdapter("left"))
    assert result.first_wrong is not None, str(result)
    assert result.first_wrong.function == "linalg.svd"
    later = [c for c in result.calls if c.index > result.first_wrong.index]
    assert later, "the program has calls after the decomposition"


@pytest.mark.parametrize("flip", ["both", "left"])
def test_without_alignment_both_would_be_wrong(flip: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mechanism: with the alignment taken away, the right choice fails as well.
    import diffcheck.localize._judge as judge

    monkeypatch.setattr(judge, "align_to_reference", lambda _f, _r, c: list(c))
    monkeypatch.setattr(judge, "align_and_explain", lambda _f, _r, c: (list(c), None))
    result = locate(_whitened, X, candidate=_SignsAdapter(flip))
    assert result.first_wrong is not None
    assert result.first_wrong.function == "linalg.svd"


# A rank-deficient wide matrix: its reduced SVD returns part of a wider null space.


class _NullLinalg(_Linalg):
    """svd whose right vectors of zero singular values are another basis of the null space."""

    def svd(self, x: Any, /, *, full_matrices: bool = True) -> Any:
        u, s, vh = cnp.linalg.svd(x, full_matrices=full_matrices)
        _, _, whole = np.linalg.svd(x, full_matrices=True)
        rank = int(np.sum(s > 1e-6 * s.max()))
        null = whole[rank:]  # every direction A maps to zero, beyond the columns returned
        chosen = (null[0] + null[-1]) / np.sqrt(2.0)  # another unit vector of that space
        if self.flip == "outside":  # a determined vector mixed in: not in the null space
            chosen = (chosen + 0.3 * vh[0]) / np.linalg.norm(chosen + 0.3 * vh[0])
        vh = vh.copy()
        vh[rank] = chosen
        return u, s, vh


class _NullAdapter(_SignsAdapter):
    name = "null"

    def __init__(self, flip: str) -> None:
        super().__init__(flip)
        self._namespace.linalg = _NullLinalg(flip)


def _rank_two(xp: Any, x: Any) -> Any:
    _, s, vh = xp.linalg.svd(x, full_matrices=False)
    return xp.sum(vh * vh, axis=-1) + s


WIDE = (lambda r: r.standard_normal((3, 2)) @ r.standard_normal((2, 5)))(
    np.random.default_rng(3)
).astype(np.float64)


def test_another_vector_of_a_null_space_wider_than_the_columns_returned_is_right() -> None:
    result = locate(_rank_two, WIDE, candidate=_NullAdapter("null"))
    svd = next(c for c in result.calls if c.function == "linalg.svd")
    assert svd.status == "ok", str(result)
    assert result.first_wrong is None, str(result)
    # The verdict says that these vectors were judged by what the input determines.
    assert "not determined by the input" in (svd.local.reason or ""), svd.local


def test_a_vector_outside_the_null_space_is_the_wrong_call() -> None:
    result = locate(_rank_two, WIDE, candidate=_NullAdapter("outside"))
    assert result.first_wrong is not None, str(result)
    assert result.first_wrong.function == "linalg.svd"
