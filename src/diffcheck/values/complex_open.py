"""Complex products and quotients whose special values the standard leaves to the library.

``multiply`` and ``divide`` (2022.12 on): when a component of an operand is NaN or
infinite, "the result is implementation dependent" (only all-NaN operands fix ``NaN + NaN
j``), and "special case behavior is unlikely to be consistent across implementations".
With finite operands the textbook formula is a "should", not a "must": where the true
result overflows, underflows or is an exact zero, the NaN, infinities and zero signs are
the formula's own (textbook ``(a+bj)(c+dj)`` gives ``inf - inf = NaN`` for a product whose
true components both overflow). ``square`` is ``x * x`` and ``reciprocal`` is ``1.0 / x``
("must be handled as if"), ``prod`` and ``cumulative_prod`` are successive ``multiply``;
``pow``'s complex special cases "should" follow ``exp(x2*log(x1))`` and "conforming
implementations are allowed to treat [them] more carefully".

So where two complex results differ only in such an element's NaN, infinity or zero sign,
neither side is wrong. Every other element is still judged by the value model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .elements import element_args, reduced_terms
from .oracle import true_complex

__all__ = ["open_complex_elements"]

_ARITHMETIC = frozenset(["multiply", "divide", "square", "reciprocal"])
_PRODUCTS = frozenset(["prod", "cumulative_prod"])


def _special_differences(
    ref: npt.NDArray[Any], cand: npt.NDArray[Any]
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """Per flat element and component (real, imag): differs in NaN, infinity or zero sign."""
    masks = []
    for r, c in ((ref.real, cand.real), (ref.imag, cand.imag)):
        r, c = r.reshape(-1), c.reshape(-1)
        nan = np.isnan(r) != np.isnan(c)
        inf = (np.isinf(r) | np.isinf(c)) & ~np.isnan(r) & ~np.isnan(c) & (r != c)
        zero = (r == 0) & (c == 0) & (np.signbit(r) != np.signbit(c))
        masks.append(nan | inf | zero)
    return masks[0], masks[1]


def _components(values: Sequence[Any]) -> list[float]:
    parts: list[float] = []
    for value in values:
        z = complex(value)
        parts += [z.real, z.imag]
    return parts


def _beyond_ordinary(truth: Any, differing: Sequence[bool], dtype: np.dtype[Any]) -> bool:
    """Whether each differing true component is zero, subnormal or past the largest value."""
    finfo = np.finfo(np.float32 if dtype == np.complex64 else np.float64)
    for component, differs in zip((truth.real, truth.imag), differing, strict=True):
        size = abs(float(component))
        if differs and 0 < size <= float(finfo.max) and size >= float(finfo.tiny):
            return False
    return True


def _is_open(
    name: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    index: tuple[int, ...],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    differing: Sequence[bool],
) -> bool:
    if name in _PRODUCTS:
        terms = reduced_terms(name, args, kwargs, index)
        return terms is not None and not all(math.isfinite(p) for p in _components(terms))
    operands = element_args(args, index, shape)
    if operands is None:
        return False
    if name == "reciprocal":
        operands = [1.0, *operands]
    parts = _components(operands)
    if not all(math.isfinite(p) for p in parts):
        return not all(math.isnan(p) for p in parts)  # all NaN: NaN + NaN j is required
    if name == "pow":
        return complex(operands[0]) == 0  # exp(x2*log(0)): a special case
    if name not in _ARITHMETIC:
        return False
    function = "divide" if name == "reciprocal" else name
    truth = true_complex(function, [complex(v) for v in operands])
    # No finite truth: a division by zero, whose complex infinity has no components.
    return truth is None or _beyond_ordinary(truth, differing, dtype)


def open_complex_elements(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
) -> tuple[npt.NDArray[Any], str] | None:
    """The candidate with its open elements set to the reference's, and why; None if none.

    An element is open when its components differ only in NaN, infinity or the sign of
    zero and the standard leaves that element's special values to the library (see the
    module's text). The caller compares again: what is left is still a finding.
    """
    name = function.removeprefix("xp.")
    if name not in _ARITHMETIC | _PRODUCTS | {"pow"}:
        return None
    ref, cand = np.asarray(reference), np.asarray(candidate)
    if ref.dtype.kind != "c" or cand.dtype != ref.dtype or ref.shape != cand.shape:
        return None
    shape = tuple(int(n) for n in ref.shape)
    patched = cand.copy().reshape(-1)
    opened = 0
    real, imag = _special_differences(ref, cand)
    for flat in np.flatnonzero(real | imag):
        index = tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()
        parts = (bool(real[flat]), bool(imag[flat]))
        if _is_open(name, args, kwargs, index, shape, ref.dtype, parts):
            patched[flat] = ref.reshape(-1)[flat]
            opened += 1
    if not opened:
        return None
    why = (
        f"{name} of complex values: the standard leaves the NaN, infinity and zero sign of "
        f"{opened} element(s) to the library (special cases of complex multiply and divide "
        "are implementation dependent; with finite operands the textbook formula is a "
        "'should', and here the true result is zero, underflows or overflows)"
    )
    return patched.reshape(shape), why
