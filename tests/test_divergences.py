"""Known divergences: which checks a declared divergence matches, and when."""

from __future__ import annotations

from typing import Any

import pytest

from diffcheck.adapters import KnownDivergence, matching_divergence
from diffcheck.adapters.numpy_ref import NumpyAdapter


def divergence(**overrides: Any) -> KnownDivergence:
    fields: dict[str, Any] = {
        "ops": ("gemm", "context-lifecycle"),
        "precisions": ("f32",),
        "devices": ("gpu",),
        "reason": "gemm runs in reduced precision on the GPU",
        "upstream": "https://example.org/issues/1",
    }
    return KnownDivergence(**(fields | overrides))


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
    assert matching_divergence([off, on], "gpu", "gemm", "f32") is on
    assert matching_divergence([off, on], "cpu", "gemm", "f32") is None
    assert matching_divergence([], "gpu", "gemm", "f32") is None


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
    ],
)
def test_a_malformed_declaration_is_refused(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        divergence(**overrides)


def test_adapters_declare_none_by_default() -> None:
    assert NumpyAdapter().known_divergences() == ()
