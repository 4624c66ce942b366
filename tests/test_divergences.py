"""Known divergences: which checks a declared divergence matches, and when."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters import KnownDivergence, failure_of, matching_divergence
from diffcheck.adapters.divergences import CEILING_MULTIPLE, Failure
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.precision import PRECISIONS


def divergence(**overrides: Any) -> KnownDivergence:
    fields: dict[str, Any] = {
        "ops": ("gemm", "context-lifecycle"),
        "precisions": ("f32",),
        "devices": ("gpu",),
        "reason": "gemm runs in reduced precision on the GPU",
        "upstream": "https://example.org/issues/1",
        "max_nmse": 1.4e-6,
        "measured_nmse": 1.4e-7,
        "bound_source": "10x the worst NMSE observed upstream",
        "twin": "tf32 operands",
    }
    return KnownDivergence(**(fields | overrides))


#: What a report's precision floor says of a TF32 candidate: the TF32 twin models it.
TF32 = ("tf32 operands",)


@pytest.mark.parametrize(
    ("device", "op", "precision", "expected"),
    [
        ("gpu", "gemm", "f32", True),
        ("gpu", "context-lifecycle", "f32", True),
        ("gpu", "gemm", "f16", False),
        ("gpu", "silu-mul", "f32", False),
        ("cpu", "gemm", "f32", False),
        # The plain name's device is the backend's choice: listed devices never match it.
        (None, "gemm", "f32", False),
    ],
)
def test_matches_needs_the_op_the_precision_and_a_listed_device(
    device: str | None, op: str, precision: str, expected: bool
) -> None:
    assert divergence().matches(device, op, precision) is expected


def test_no_devices_means_every_device_and_the_plain_name() -> None:
    anywhere = divergence(devices=())
    assert all(anywhere.matches(d, "gemm", "f32") for d in ("cpu", "gpu", None))
    assert not anywhere.matches(None, "rms-norm", "f32")


def test_active_is_asked_at_every_match() -> None:
    state = {"on": True}
    toggled = divergence(active=lambda: state["on"])
    assert toggled.is_active()
    assert toggled.matches("gpu", "gemm", "f32")
    state["on"] = False
    assert not toggled.is_active()
    assert not toggled.matches("gpu", "gemm", "f32")
    assert divergence().is_active()  # no callable: always active


def test_matching_divergence_is_the_first_active_match() -> None:
    off = divergence(active=lambda: False, reason="switched off")
    on = divergence(reason="the one that applies")
    assert matching_divergence([off, on], "gpu", "gemm", "f32", failure=None) is on
    assert matching_divergence([off, on], "cpu", "gemm", "f32", failure=None) is None
    assert matching_divergence([], "gpu", "gemm", "f32", failure=None) is None


def test_sequences_become_tuples_and_the_value_is_frozen() -> None:
    made = divergence(ops=["gemm"], precisions=["f32", "f16"], devices=["gpu"])
    assert (made.ops, made.precisions, made.devices) == (("gemm",), ("f32", "f16"), ("gpu",))
    with pytest.raises(AttributeError):
        made.reason = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"ops": "gemm"}, "ops='gemm', but it must be a tuple of names, not a string"),
        ({"devices": "gpu"}, "devices='gpu', but it must be a tuple of names"),
        ({"ops": ()}, "needs at least one op and one precision"),
        ({"precisions": ()}, "needs at least one op and one precision"),
        ({"precisions": ("f64",)}, r"precisions \['f64'\], but each must be one of f32, f16, bf16"),
        ({"reason": ""}, "reason='', but it must be one non-empty line"),
        ({"reason": "two\nlines"}, "reason='two\\\\nlines', but it must be one non-empty line"),
        ({"upstream": " "}, "upstream=' ', but it must be one non-empty line"),
        ({"bound_source": ""}, "bound_source='', but it must be one non-empty line"),
        ({"max_nmse": 0.0}, "max_nmse=0.0, but it must be a finite number > 0"),
        ({"max_nmse": -1e-7}, "max_nmse=-1e-07, but it must be a finite number > 0"),
        ({"max_nmse": float("inf")}, "max_nmse=inf, but it must be a finite number > 0"),
        ({"max_nmse": float("nan")}, "max_nmse=nan, but it must be a finite number > 0"),
        ({"max_nmse": "1e-6"}, "max_nmse='1e-6', but it must be a finite number > 0"),
        ({"max_nmse": True}, "max_nmse=True, but it must be a finite number > 0"),
    ],
)
def test_a_malformed_declaration_is_refused(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        divergence(**overrides)


def test_adapters_declare_none_by_default() -> None:
    assert NumpyAdapter().known_divergences() == ()


def test_the_ceiling_and_the_source_are_required() -> None:
    fields = {
        "ops": ("gemm",),
        "precisions": ("f32",),
        "reason": "why",
        "upstream": "where",
    }
    with pytest.raises(TypeError, match="max_nmse"):
        KnownDivergence(**fields)  # type: ignore[call-arg]
    made = KnownDivergence(
        **fields, max_nmse=1.4e-6, measured_nmse=1.4e-7, bound_source="10x upstream"
    )  # type: ignore[arg-type]
    assert made.bound == (
        "no model twin (excuses nothing), NMSE <= 1.4e-06 (measured 1.4e-07: 10x upstream)"
    )


MEASURED = "NMSE 0.00000014 is not below tolerance 0.0000001; max_abs=0.0003"


@pytest.mark.parametrize(
    ("reason", "nmse", "segments", "kind", "excused"),
    [
        # What the divergence explains: a measured NMSE over the tolerance, under the ceiling.
        (MEASURED, 1.4e-7, [], "nmse", True),
        (
            "DropFlush: NMSE 0.00000014 is not below tolerance 0.0000001; max_abs=0.01",
            9e-8,
            [1.4e-7],
            "nmse",
            True,
        ),
        # The example: the 13.0 sentinel left in drop_flush measures ~2.8e3.
        (
            "NMSE 700.2 is not below tolerance 0.0000001; max_abs=12.9; DropFlush: NMSE 2800.5 "
            "is not below tolerance 0.0000001; max_abs=12.9",
            700.2,
            [2800.5],
            "nmse",
            False,
        ),
        # Just over the ceiling.
        ("NMSE 0.0000015 is not below tolerance 0.0000001; max_abs=0.1", 1.5e-6, [], "nmse", False),
        # Never the kind it explains, whatever the NMSE.
        ("required backend execution failed: RuntimeError: device lost", None, [], "other", False),
        ("required backend contains a non-finite value at 3", None, [], "other", False),
        ("output length mismatch: reference=8 actual=7", None, [], "other", False),
        (
            "NMSE 0.00000001 is below; reference output has 7 elements; configured shape "
            "requires 8",
            1e-8,
            [],
            "other",
            False,
        ),
        (
            MEASURED + "; executed precision differs from the configured f16: the candidate "
            "stored inputs as f32 and its output as f32",
            1.4e-7,
            [],
            "other",
            False,
        ),
        ("worker timed out after 60 s", None, [], "other", False),
        # A passing NMSE with an NMSE-looking reason is not an NMSE failure.
        (MEASURED, 5e-8, [], "other", False),
        (MEASURED, 1.4e-7, [None], "other", False),
        (MEASURED, float("nan"), [], "other", False),
    ],
)
def test_a_divergence_excuses_only_a_measured_nmse_within_its_ceiling(
    reason: str, nmse: float | None, segments: list[float | None], kind: str, excused: bool
) -> None:
    failure = failure_of(reason, nmse, 1e-7, segments, TF32)
    assert failure.kind == kind
    declared = divergence()
    assert declared.explains(failure) is excused
    found = matching_divergence([declared], "gpu", "gemm", "f32", failure=failure)
    assert (found is declared) is excused


def test_a_failure_is_never_matched_off_the_listed_cases() -> None:
    failure = failure_of(MEASURED, 1.4e-7, 1e-7)
    assert matching_divergence([divergence()], "cpu", "gemm", "f32", failure=failure) is None
    assert matching_divergence([divergence()], "gpu", "rms-norm", "f32", failure=failure) is None


_TEXT = st.one_of(
    st.text(max_size=12), st.sampled_from(["gemm", "f32", "gpu", "why", "x\ny", "a\u2028b"])
)
_NAMES = st.one_of(
    _TEXT,
    st.lists(_TEXT, max_size=3),
    st.tuples(_TEXT),
    st.just(()),
    st.integers(),
    st.none(),
    st.lists(st.sampled_from([*list(PRECISIONS), "f64", ""]), max_size=3),
)
_BOUNDS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-5, max_value=5),
    st.booleans(),
    st.text(max_size=5),
    st.none(),
)
#: How many declarations the property below tries (the report states it).
DECLARATION_CASES = 300


@settings(max_examples=DECLARATION_CASES, deadline=None, database=None, derandomize=True)
@given(
    ops=_NAMES,
    precisions=_NAMES,
    devices=_NAMES,
    reason=_TEXT,
    upstream=_TEXT,
    max_nmse=_BOUNDS,
    measured_nmse=_BOUNDS,
    bound_source=_TEXT,
)
def test_any_declaration_is_valid_or_a_one_line_value_error(**fields: Any) -> None:
    try:
        made = KnownDivergence(**fields)
    except ValueError as error:
        message = str(error)
    else:
        message = ""
    if message:
        assert len(message.splitlines()) == 1, message
        return
    assert made.ops
    assert made.precisions
    assert set(made.precisions) <= set(PRECISIONS)
    assert all(isinstance(n, str) and n for n in made.ops + made.devices)
    assert math.isfinite(made.max_nmse)
    assert made.max_nmse > 0
    assert made.measured_nmse > 0
    assert made.max_nmse <= CEILING_MULTIPLE * made.measured_nmse
    for text in (made.reason, made.upstream, made.bound_source):
        assert text.strip()
        assert len(text.splitlines()) == 1
    # A valid declaration never excuses what is not a measured NMSE under its ceiling.
    assert not made.explains(failure_of("device lost", None, 1e-7))
    assert not made.explains(failure_of(MEASURED, made.max_nmse * 2 + 1, 1e-7))


def test_a_ceiling_far_above_what_was_measured_is_refused() -> None:
    """A ceiling of 1.0 resting on 1e-9 measured would excuse a 1e-4 error: refused."""
    with pytest.raises(ValueError, match="more than 10x measured_nmse"):
        divergence(max_nmse=1.0, measured_nmse=1e-9)
    with pytest.raises(ValueError, match="more than 10x"):
        divergence(max_nmse=1.4e-6 * 1.0001, measured_nmse=1.4e-7)
    at_limit = divergence(max_nmse=1.4e-6, measured_nmse=1.4e-7)
    assert at_limit.explains(failure_of(MEASURED, 1.4e-6, 1e-7, (), TF32))
    assert not at_limit.explains(failure_of(MEASURED, 1e-4, 1e-7, (), TF32))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    measured=st.floats(min_value=1e-30, max_value=1.0),
    headroom=st.floats(min_value=0.01, max_value=1000.0),
    error=st.floats(min_value=1e-7, max_value=1e6),
)
def test_no_declaration_excuses_more_than_the_multiple_of_its_measurement(
    measured: float, headroom: float, error: float
) -> None:
    try:
        made = divergence(max_nmse=measured * headroom, measured_nmse=measured)
    except ValueError:
        assert headroom > CEILING_MULTIPLE
        return
    excused = made.explains(failure_of(MEASURED, error, 1e-7, (), TF32))
    assert excused == (error <= made.max_nmse)
    if excused:
        assert error <= CEILING_MULTIPLE * measured * (1 + 1e-9)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"ops": 5}, "ops=5, but it must be a tuple of names"),
        ({"ops": ("gemm", 3)}, "ops=('gemm', 3), but each name must be a non-empty string"),
        ({"ops": ()}, "a known divergence needs at least one op and one precision"),
        (
            {"max_nmse": 0},
            "max_nmse=0, but it must be a finite number > 0: the largest NMSE this divergence "
            "excuses",
        ),
        (
            {"measured_nmse": -1.0},
            "measured_nmse=-1.0, but it must be a finite number > 0: the worst NMSE measured "
            "for this divergence",
        ),
        (
            {"max_nmse": 1.0, "measured_nmse": 1e-9},
            "max_nmse=1.0 is more than 10x measured_nmse=1e-09; a ceiling may add at most that "
            "headroom to what was measured (measure the divergence again, or lower it)",
        ),
        ({"active": 5}, "active=5, but it must be a callable or None"),
    ],
)
def test_a_bad_declaration_says_which_field_and_why(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        divergence(**fields)


def test_a_ceiling_of_exactly_the_multiple_is_allowed() -> None:
    ceiling = CEILING_MULTIPLE * 1.0 * (1 + 1e-9)  # the multiple and its rounding allowance
    assert divergence(max_nmse=ceiling, measured_nmse=1.0).max_nmse == ceiling


@pytest.mark.parametrize(
    ("reason", "nmse", "segments", "worst"),
    [
        ("shape mismatch: (2,) vs (3,)", 0.5, [], 0.5),  # not an NMSE clause
        (MEASURED, 0.5, [None], 0.5),  # a segment not measured
        (MEASURED, 0.5, [float("inf")], 0.5),
        (MEASURED, float("inf"), [], None),  # an infinite aggregate is not a measurement
        (None, None, [], None),
    ],
)
def test_an_other_failure_keeps_the_finite_nmse_it_measured(
    reason: str | None, nmse: float | None, segments: list[float | None], worst: float | None
) -> None:
    assert failure_of(reason, nmse, 1e-7, segments) == Failure("other", worst)


@pytest.mark.parametrize("models", [(), ("float16 storage",), ("float32",)])
def test_a_failure_its_twin_does_not_model_is_never_excused(models: tuple[str, ...]) -> None:
    # The ceiling alone would excuse it; the TF32 model does not reproduce the error.
    failure = failure_of(MEASURED, 1.4e-7, 1e-7, (), models)
    assert failure.kind == "nmse"
    assert not divergence().explains(failure)
    assert matching_divergence([divergence()], "gpu", "gemm", "f32", failure=failure) is None


def test_a_declaration_without_a_twin_documents_and_excuses_nothing() -> None:
    bare = divergence(twin=None)
    assert not bare.explains(failure_of(MEASURED, 1.4e-7, 1e-7, (), TF32))
    assert bare.bound.startswith("no model twin (excuses nothing)")


def test_a_twin_is_one_of_the_floors_twins() -> None:
    with pytest.raises(ValueError, match="twin='tf32', but it must be one of float32, "):
        divergence(twin="tf32")


def test_a_one_percent_error_under_a_loose_tf32_declaration_is_not_known() -> None:
    """A plugin declaring max_nmse=1.0 (measured 0.5) under a TF32 model: a candidate 1%
    off is measured, its floor runs the twins, and TF32 does not model it."""
    pytest.importorskip("torch")
    import dataclasses

    from diffcheck.adapters import resolve
    from diffcheck.config import make_check
    from diffcheck.runner import run_check

    torch_cpu = resolve("torch:cpu")

    class OnePercentOff(type(torch_cpu)):  # type: ignore[misc]
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            run = super().execute(*args, **kwargs)
            return dataclasses.replace(run, output=run.output * np.float32(1.01))

    loose = divergence(ops=("gemm",), devices=(), max_nmse=1.0, measured_nmse=0.5)
    result = run_check(
        make_check("torch:cpu", "gemm", seed=7), candidate=OnePercentOff("torch", "cpu")
    ).result
    assert result is not None
    assert result.status == "failed"
    failure = failure_of(
        result.reason, result.metrics.nmse, result.tolerance, (), result.floor.models
    )
    assert failure.kind == "nmse"
    assert failure.nmse <= loose.max_nmse  # the figure alone would have excused it
    assert "tf32 operands" not in result.floor.models
    assert matching_divergence([loose], None, "gemm", "f32", failure=failure) is None


@pytest.mark.parametrize("call", [1, 2])
def test_tf32_at_one_matmul_of_an_attention_is_known_by_a_tf32_declaration(call: int) -> None:
    """MLX on CUDA runs one of a small attention's two matmuls on TF32 tensor cores: the
    twin of that call alone models it, so a TF32 declaration explains it (and one naming
    bfloat16 operands does not; float16 operands round values of this size as TF32 does)."""
    pytest.importorskip("torch")
    from diffcheck.config import make_check
    from diffcheck.runner import run_check
    from floor.downgrades import DowngradedTorch

    check = make_check(
        "torch:cpu", "attention", seed=7, tokens=4, kv_len=8, heads=4, kv_heads=2, head_dim=16
    )
    result = run_check(check, candidate=DowngradedTorch(f"tf32-call-{call}")).result
    assert result is not None
    assert result.status == "failed"
    failure = failure_of(
        result.reason, result.metrics.nmse, result.tolerance, (), result.floor.models
    )
    tf32 = divergence(ops=("attention",), devices=())
    assert matching_divergence([tf32], None, "attention", "f32", failure=failure) is tf32
    brain = divergence(ops=("attention",), devices=(), twin="bfloat16 operands")
    assert matching_divergence([brain], None, "attention", "f32", failure=failure) is None
