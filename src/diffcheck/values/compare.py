"""Faithful comparison of two host results: dtype, then shape, then values.

Both sides keep their dtype: bool and integers are compared exactly, floats (and complex
numbers, componentwise) by NaN placement, infinities with their sign, signed zeros where
the policy asks for them, then the error bound. Every failure is localized to its first and
worst element, with both exact values and their ULP distance in the output's dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from .bounds import bound_for, is_elementwise
from .defaults import common_view
from .dtypes import BOOL, COMPLEX, FLOATING, INTEGER, dtype_name
from .gauge import align_and_explain
from .model import Bound, FailureKind, Location, ValueVerdict
from .ulp import EPSILON, exact_ulp, ulp_distance, value_text

__all__ = ["compare_values", "failed_call", "host_value"]

#: ``candidate_expected_dtype`` not given: the candidate is held to ``expected_dtype``.
_SAME_RULE: Any = object()


def host_value(value: Any) -> tuple[npt.NDArray[Any], str]:
    """A host array for one result and its dtype name (``bfloat16`` kept by name).

    A ``(array, "bfloat16")`` pair passes through: bfloat16 values travel widened to float32
    (exactly) with their true dtype beside them, since NumPy cannot hold them.
    """
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        array = np.asarray(value[0])
        return array, value[1]
    array = np.asarray(value)
    return array, dtype_name(array.dtype)


#: The dtype names of the Array API standard, the ones the value model compares.
_STANDARD = frozenset([BOOL, *INTEGER, *FLOATING])


def _standard_reference(value: Any) -> tuple[npt.NDArray[Any], str]:
    """:func:`host_value` of a reference result, refused outside the standard's dtypes.

    The value model compares the Array API's dtypes (bool, the integers, float16 to
    float64 with bfloat16, complex64 and complex128). A reference of any other dtype
    (strings, objects, dates, NumPy's float128 or complex256) has no such model: comparing it
    would end in a conversion error, or a cast that drops bits, far from the cause, so it is
    refused here. A candidate of such a dtype beside a standard reference is a dtype
    failure, as any other dtype is.
    """
    array, name = host_value(value)
    if name not in _STANDARD:
        raise ConfigError(
            f"the reference's result has dtype {array.dtype}, which is not an Array API "
            "dtype (bool, integer, real or complex floating): the value model compares "
            "only those"
        )
    return array, name


def failed_call(kind: FailureKind, reason: str, bound: Bound | None = None) -> ValueVerdict:
    """A verdict for a call that produced no comparable output (``missing``, ``raises``)."""
    chosen = bound or Bound("exact", None, None, "no output to compare")
    return ValueVerdict("failed", kind, reason, chosen, None, None)


def _location(
    index: int,
    shape: tuple[int, ...],
    ref: npt.NDArray[Any],
    cand: npt.NDArray[Any],
    dtype: str,
    output: int,
) -> Location:
    r = ref.reshape(-1)[index]
    c = cand.reshape(-1)[index]
    position = tuple(int(i) for i in np.unravel_index(index, shape)) if shape else ()
    ulp: int | None = None
    if dtype in COMPLEX:
        part = "float32" if dtype == "complex64" else "float64"
        parts = [
            exact_ulp(float(r.real), float(c.real), part),
            exact_ulp(float(r.imag), float(c.imag), part),
        ]
        ulp = None if None in parts else max(p for p in parts if p is not None)
    elif dtype in EPSILON:
        ulp = exact_ulp(float(r), float(c), dtype)
    return Location(position, value_text(r, dtype), value_text(c, dtype), ulp, output)


def _components(array: npt.NDArray[Any], dtype: str) -> tuple[npt.NDArray[Any], ...]:
    if dtype in COMPLEX:
        return (array.real.reshape(-1), array.imag.reshape(-1))
    return (array.reshape(-1),)


def _float_masks(
    ref: npt.NDArray[Any], cand: npt.NDArray[Any], dtype: str, signed_zero: bool
) -> dict[FailureKind, npt.NDArray[np.bool_]]:
    """Per failure kind, which flat elements fail it (before the error bound)."""
    size = ref.size
    nan = np.zeros(size, bool)
    inf = np.zeros(size, bool)
    zero = np.zeros(size, bool)
    for r, c in zip(_components(ref, dtype), _components(cand, dtype), strict=True):
        nan |= np.isnan(r) != np.isnan(c)
        either_inf = (np.isinf(r) | np.isinf(c)) & ~np.isnan(r) & ~np.isnan(c)
        inf |= either_inf & (r != c)
        if signed_zero:
            zero |= (r == 0) & (c == 0) & (np.signbit(r) != np.signbit(c))
    return {"nan": nan, "inf": inf, "signed-zero": zero}


def _bound_mask(
    ref: npt.NDArray[Any], cand: npt.NDArray[Any], dtype: str, bound: Bound
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64], str | None]:
    """Elements beyond the bound, every element's ULP distance, and an NMSE reason."""
    real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    size = ref.size
    distance = np.zeros(size)
    finite = np.ones(size, bool)  # every component finite on both sides (NMSE uses these)
    differs = np.zeros(size, bool)  # some component finite on both sides and not equal
    for r, c in zip(_components(ref, dtype), _components(cand, dtype), strict=True):
        ok = np.isfinite(r) & np.isfinite(c)
        finite &= ok
        part = np.where(ok, ulp_distance(r, c, real), 0.0)
        distance = np.maximum(distance, part)
        differs |= part > 0
    if bound.kind == "exact":
        return differs, distance, None
    if bound.kind in ("ulp", "reduction"):
        ulps = float(bound.ulps or 0.0)
        beyond = distance > ulps  # only components finite on both sides have a distance
        wide = np.complex128 if dtype in COMPLEX else np.float64
        if bound.atol is not None:
            error = np.abs(ref.reshape(-1).astype(wide) - cand.reshape(-1).astype(wide))
            beyond &= ~(error <= bound.atol)
        if dtype in COMPLEX and ulps > 0 and beyond.any():
            # A complex result is accurate relative to its magnitude: a component much
            # smaller than |z| may be off by many of its own ULPs and still be within
            # ``ulps`` ULP of |z| (componentwise ULPs alone would fail correct results).
            r64, c64 = ref.reshape(-1).astype(wide), cand.reshape(-1).astype(wide)
            worst = np.maximum(np.abs(r64.real - c64.real), np.abs(r64.imag - c64.imag))
            beyond &= ~(worst <= ulps * EPSILON[real] * np.abs(r64))
        return beyond, distance, None
    wide = np.complex128 if dtype in COMPLEX else np.float64
    r = ref.reshape(-1)[finite].astype(wide)
    c = cand.reshape(-1)[finite].astype(wide)
    # Sums of squared magnitudes, taken in float64 for every dtype: a real result sums its
    # squares in one order, whatever dtype it was widened to (a complex vdot sums in another).
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: an infinite sum
        magnitude, error = np.abs(r), np.abs(r - c)
        signal = float(np.dot(magnitude, magnitude))
        noise = float(np.dot(error, error))
    nmse = noise / signal if signal > 0 else (0.0 if noise == 0 else float("inf"))
    if nmse < float(bound.nmse or 0.0):
        return np.zeros(size, bool), distance, None
    # Every differing element takes part in a failed NMSE; the worst is the furthest off.
    return differs, distance, f"NMSE {nmse:.3g} is not below {bound.nmse:g}"


def _compare_one(
    ref: npt.NDArray[Any],
    cand: npt.NDArray[Any],
    dtype: str,
    bound: Bound,
    signed_zero: bool,
    output: int,
) -> ValueVerdict:
    shape = tuple(int(n) for n in ref.shape)
    if dtype == BOOL or dtype in INTEGER or dtype not in (*EPSILON, *COMPLEX):
        wrong = ref.reshape(-1) != cand.reshape(-1)
        if not wrong.any():
            return ValueVerdict("passed", None, None, bound, None, None, dtype)
        first = int(np.argmax(wrong))
        gap = np.abs(ref.reshape(-1).astype(np.float64) - cand.reshape(-1).astype(np.float64))
        worst = int(np.argmax(np.where(wrong, gap, -1.0)))
        count = int(wrong.sum())
        loc = _location(first, shape, ref, cand, dtype, output)
        return ValueVerdict(
            "failed",
            "value",
            f"{count} of {ref.size} {dtype} elements differ (exact "
            f"equality required); first at {list(loc.index)}: reference {loc.reference}, "
            f"candidate {loc.candidate}",
            bound,
            loc,
            _location(worst, shape, ref, cand, dtype, output),
            dtype,
            count,
        )
    masks = _float_masks(ref, cand, dtype, signed_zero)
    beyond, distance, nmse_reason = _bound_mask(ref, cand, dtype, bound)
    masks["value"] = beyond & ~masks["nan"] & ~masks["inf"]
    measured = int(distance.max()) if distance.size else None
    for kind in ("nan", "inf", "signed-zero", "value"):
        mask = masks[kind]
        if not mask.any():
            continue
        first = int(np.argmax(mask))
        worst = int(np.argmax(np.where(mask, distance, -1.0))) if kind == "value" else first
        loc = _location(first, shape, ref, cand, dtype, output)
        worst_loc = _location(worst, shape, ref, cand, dtype, output)
        count = int(mask.sum())
        what = {
            "nan": "NaN placement differs",
            "inf": "infinities differ",
            "signed-zero": "the sign of zero differs",
            "value": nmse_reason or f"beyond the bound ({bound})",
        }[kind]
        reason = (
            f"{what} in {count} of {ref.size} {dtype} elements; first at {list(loc.index)}: "
            f"reference {loc.reference}, candidate {loc.candidate}"
        )
        if kind == "value":
            reason += f"; worst {worst_loc.ulp} ULP at {list(worst_loc.index)}"
        return ValueVerdict(
            "failed",
            kind,
            reason,
            bound,
            loc,
            worst_loc,
            dtype,
            count,
            measured,
        )
    return ValueVerdict("passed", None, None, bound, None, None, dtype, 0, measured)


def compare_values(
    reference: Any,
    candidate: Any,
    *,
    function: str | None = None,
    bound: Bound | None = None,
    expected_dtype: str | Sequence[str | None] | None = None,
    signed_zero: bool | None = None,
    reduced: int = 1,
    candidate_expected_dtype: str | Sequence[str | None] | object | None = _SAME_RULE,
) -> ValueVerdict:
    """Compare two host results faithfully: dtype, then shape, then values.

    Parameters
    ----------
    reference, candidate
        Host results: NumPy arrays or scalars in their own dtype, a ``(float32 array,
        "bfloat16")`` pair for bfloat16 values, or a tuple/list of those for functions
        with several outputs (each compared in turn).
    function
        The standard's function name; it chooses the bound and the signed-zero policy.
    bound
        The error bound; by default :func:`~diffcheck.values.bound_for` of ``function`` and
        the reference's dtype.
    expected_dtype
        The dtype the standard requires (see
        :func:`~diffcheck.values.expected_result_dtype`); a result of another dtype fails
        even when both sides agree. None checks only that the two sides agree. For several
        outputs, one dtype per output (see
        :func:`~diffcheck.values.dtypes.expected_result_dtypes`).
    candidate_expected_dtype
        The dtype the standard requires of the candidate, when its declared default dtypes
        differ from the reference's (:mod:`diffcheck.values.defaults`); by default the
        same as ``expected_dtype``. Two sides that each return their own required dtype
        conform, and their values are compared in a dtype holding both.
    signed_zero
        Whether ``-0.0`` and ``+0.0`` must match. By default they must, except for
        functions whose zeros' signs the standard leaves open (reductions, decompositions).
    reduced
        For reductions: how many terms each output element sums (chooses the bound).

    Returns
    -------
    ValueVerdict
        ``passed``, or ``failed`` with its kind, a one-line reason, the bound and the first
        and worst elements.
    """
    if isinstance(reference, list | tuple) and not _is_tagged(reference):
        note = None
        if isinstance(candidate, list | tuple) and not _is_tagged(candidate):
            # A decomposition's vectors in the reference's signs and bases (values.gauge).
            candidate, note = align_and_explain(function, reference, candidate)
        verdict = _compare_many(
            reference,
            candidate,
            function,
            bound,
            (expected_dtype, candidate_expected_dtype),
            signed_zero,
            reduced,
        )
        if note is None:
            return verdict
        # Vectors the input does not determine were judged apart: the bound's words say so.
        said = replace(verdict.bound, provenance=f"{verdict.bound.provenance}; {note}")
        return replace(verdict, bound=said)
    ref, ref_dtype = _standard_reference(reference)
    cand, cand_dtype = host_value(candidate)
    chosen = bound or bound_for(function, ref_dtype, reduced=reduced)
    return _compare_single(
        ref,
        ref_dtype,
        cand,
        cand_dtype,
        function,
        chosen,
        _nth(expected_dtype, 0),
        signed_zero,
        0,
        _nth(candidate_expected_dtype, 0),
    )


def _nth(expected: Any, output: int) -> Any:
    """Output ``output``'s required dtype from one dtype for all or a sequence (or the sentinel)."""
    if expected is _SAME_RULE or expected is None or isinstance(expected, str):
        return expected
    return expected[output] if output < len(expected) else None


def _is_tagged(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)


def _compare_single(
    ref: npt.NDArray[Any],
    ref_dtype: str,
    cand: npt.NDArray[Any],
    cand_dtype: str,
    function: str | None,
    bound: Bound,
    expected_dtype: str | None,
    signed_zero: bool | None,
    output: int,
    candidate_expected: str | object | None = _SAME_RULE,
) -> ValueVerdict:
    label = f"output {output} " if output else ""
    wanted_cand: str | None = (
        expected_dtype
        if candidate_expected is _SAME_RULE
        else str(candidate_expected or "") or None
    )
    own_defaults = ref_dtype == expected_dtype and cand_dtype == wanted_cand
    if ref_dtype != cand_dtype and own_defaults:
        # Each side follows its own declared default (int64 and int32): both conform, so
        # the values are compared in a dtype that holds both.
        common = common_view(ref, ref_dtype, cand, cand_dtype)
        if common is None:
            return _dtype_failure(label, ref_dtype, cand_dtype, expected_dtype, wanted_cand, bound)
        ref, cand = common
        narrowed = dtype_name(ref.dtype)
        if narrowed != ref_dtype:  # floats rounded to the candidate's narrower default
            if bound.kind != "reduction":  # a reduction's bound came from its terms
                bound = bound_for(function, narrowed)
            ref_dtype = narrowed
    elif ref_dtype != cand_dtype or (
        (expected_dtype is not None and ref_dtype != expected_dtype)
        or (wanted_cand is not None and cand_dtype != wanted_cand)
    ):
        return _dtype_failure(label, ref_dtype, cand_dtype, expected_dtype, wanted_cand, bound)
    if ref.shape != cand.shape:
        return ValueVerdict(
            "failed",
            "shape",
            f"{label}shape differs: reference {tuple(ref.shape)}, candidate {tuple(cand.shape)}",
            bound,
            None,
            None,
            ref_dtype,
        )
    policy = _signed_zero_policy(function) if signed_zero is None else signed_zero
    return _compare_one(ref, cand, ref_dtype, bound, policy, output)


def _dtype_failure(
    label: str,
    ref_dtype: str,
    cand_dtype: str,
    wanted_ref: str | None,
    wanted_cand: str | None,
    bound: Bound,
) -> ValueVerdict:
    if wanted_ref == wanted_cand:
        rule = f"the standard requires {wanted_ref}" if wanted_ref else ""
    else:  # the sides declare different defaults: each is held to its own
        rule = (
            f"the standard requires {wanted_ref or 'no fixed dtype'} of the reference and "
            f"{wanted_cand or 'no fixed dtype'} of the candidate (each side's declared defaults)"
        )
    if ref_dtype == cand_dtype:
        text = f"{label}both sides return {ref_dtype}, but {rule}"
    else:
        text = f"{label}dtype differs: reference {ref_dtype}, candidate {cand_dtype}"
        text += f"; {rule}" if rule else ""
    return ValueVerdict("failed", "dtype", text, bound, None, None, ref_dtype)


_ZERO_ORDER_OPEN = frozenset(
    ["max", "min", "maximum", "minimum", "cumulative_max", "cumulative_min"]
)


def _signed_zero_policy(function: str | None) -> bool:
    """Signed zeros must match unless the standard leaves them open for ``function``.

    ``max``, ``min``, ``maximum``, ``minimum`` (and the cumulative ones): "the order of
    signed zeros is unspecified and thus implementation-defined [...] libraries may choose
    to return either value" (2023.12 on).
    """
    if function is not None and function.removeprefix("xp.") in _ZERO_ORDER_OPEN:
        return False
    if function is None or is_elementwise(function):
        return True
    from .bounds import REDUCTIONS

    name = function.removeprefix("xp.")
    return not (name in REDUCTIONS or name.startswith(("linalg.", "fft.")))


def _compare_many(
    reference: Sequence[Any],
    candidate: Any,
    function: str | None,
    bound: Bound | None,
    expected: tuple[Any, Any],
    signed_zero: bool | None,
    reduced: int,
) -> ValueVerdict:
    fallback = bound or Bound("exact", None, None, "several outputs")
    if not isinstance(candidate, list | tuple) or _is_tagged(candidate):
        return ValueVerdict(
            "failed",
            "shape",
            f"reference returns {len(reference)} outputs, candidate returns one array",
            fallback,
            None,
            None,
        )
    if len(candidate) != len(reference):
        return ValueVerdict(
            "failed",
            "shape",
            f"reference returns {len(reference)} outputs, candidate {len(candidate)}",
            fallback,
            None,
            None,
        )
    last: ValueVerdict | None = None
    dtypes: list[str] = []
    for output, (r_value, c_value) in enumerate(zip(reference, candidate, strict=True)):
        ref, ref_dtype = _standard_reference(r_value)
        cand, cand_dtype = host_value(c_value)
        chosen = bound or bound_for(function, ref_dtype, reduced=reduced)
        verdict = _compare_single(
            ref,
            ref_dtype,
            cand,
            cand_dtype,
            function,
            chosen,
            _nth(expected[0], output),
            signed_zero,
            output,
            _nth(expected[1], output),
        )
        if not verdict.passed:
            return verdict
        last = verdict
        dtypes.append(ref_dtype)
    if last is None:
        return ValueVerdict("passed", None, None, fallback, None, None)
    # Several outputs: their dtypes in order; the bound and ULPs are those of the last one.
    return replace(last, dtype=", ".join(dtypes)) if len(reference) > 1 else last
