"""The in-order honest twin runs only where the pairwise floor alone fails the candidate.

A larger floor can only pass more, so taking the in-order twin lazily gives every verdict
the always-both rule gives (the generated cases below compare the two), at one host run less
for a pass. The report's floor lists the orders it was taken over; replay runs those and a
pass that needed the in-order floor does not replay with it edited away.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters.array_api import ArrayApiAdapter
from diffcheck.config import make_check
from diffcheck.floor import judge_floor, op_floor
from diffcheck.floor.twins import run_in_order_twin, twin_named
from diffcheck.report import replay
from diffcheck.runner import run_check
from forgery import document


def _in_order_candidate(op: str, **params: Any) -> tuple[Any, Any, np.ndarray]:
    check = make_check("torch:cpu", op, seed=1, **params)
    inputs = check.op.inputs(check.params, check.seed)
    flat = run_in_order_twin(check.op, check.params, inputs, "f32").astype(np.float32)
    return check, inputs, flat


@pytest.mark.parametrize("op", ["rms-norm", "softmax", "layer-norm"])
def test_a_candidate_summing_in_order_passes_by_the_in_order_floor(op: str) -> None:
    check, inputs, flat = _in_order_candidate(op, tokens=4, dim=65536)
    lazy = op_floor(check.op, check.params, inputs, "f32", flat)
    assert lazy.passed
    assert lazy.honest_orders == ("pairwise", "in order")
    pairwise = op_floor(check.op, check.params, inputs, "f32", flat, in_order=False)
    assert not pairwise.passed  # so the in-order twin was needed, and ran
    assert pairwise.honest_orders == ("pairwise",)


def test_a_pass_within_the_pairwise_floor_never_runs_the_in_order_twin() -> None:
    rng = np.random.default_rng(0)
    truth = rng.standard_normal(1000)
    honest = (truth * (1 + 1e-7 * rng.standard_normal(1000))).astype(np.float32)

    def in_order() -> np.ndarray:
        raise AssertionError("the in-order twin ran for a candidate the pairwise floor passes")

    floor = judge_floor(truth, honest, honest, "f32", in_order=in_order)
    assert floor.passed
    assert floor.honest_orders == ("pairwise",)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    pairwise_noise=st.floats(1e-9, 1e-6),
    in_order_noise=st.floats(1e-9, 1e-5),
    candidate_noise=st.floats(1e-9, 1e-4),
)
def test_the_lazy_rule_gives_the_always_both_verdict(
    seed: int, pairwise_noise: float, in_order_noise: float, candidate_noise: float
) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(512)
    segments = (("head", 0, 100), ("tail", 100, 512))

    def noisy(size: float) -> np.ndarray:
        return truth * (1 + size * rng.standard_normal(512))

    honest, ordered, candidate = (
        noisy(pairwise_noise),
        noisy(in_order_noise),
        noisy(candidate_noise),
    )
    lazy = judge_floor(truth, honest, candidate, "f32", segments=segments, in_order=lambda: ordered)
    both = judge_floor(
        truth,
        honest,
        candidate,
        "f32",
        segments=segments,
        in_order=lambda: ordered,
        run_in_order=True,
    )
    assert lazy.passed == both.passed
    if not lazy.passed:
        assert lazy == both  # a failure is judged over both orders, as always


class _InOrderTorch(ArrayApiAdapter):
    """torch on the CPU whose sums and means add in order: honest, and past 100x the
    pairwise floor at 65536 terms a row."""

    def __init__(self) -> None:
        super().__init__("torch", "cpu")

    def namespace(self) -> Any:
        base = super().namespace()

        class InOrder:
            def __getattr__(self, name: str) -> Any:
                return getattr(base, name)

            def sum(self, x: Any, /, *, axis: Any = None, keepdims: bool = False, **kw: Any) -> Any:
                import torch

                # NumPy's cumsum adds one term at a time in float32 (torch's keeps a double).
                wide = np.cumsum(x.numpy(), axis=-1 if axis is None else axis, dtype=np.float32)
                last = torch.from_numpy(np.ascontiguousarray(wide[..., -1:]))
                return last if keepdims else last[..., 0]

            def mean(self, x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
                return self.sum(x, axis=axis, keepdims=keepdims) / x.shape[-1]

        return InOrder()


def test_a_pass_that_needed_the_in_order_floor_does_not_replay_without_it(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "in-order.json"
    check = make_check("torch:cpu", "rms-norm", tokens=2, dim=65536, seed=1)
    run_check(check, path, candidate=_InOrderTorch())
    data = json.loads(path.read_text())
    assert data["result"]["status"] == "passed", data["result"]["reason"]
    assert data["result"]["floor"]["honest_orders"] == ["pairwise", "in order"]
    assert replay(document(data)).agrees
    data["result"]["floor"]["honest_orders"] = ["pairwise"]
    problems = replay(document(data)).disagreements
    assert any("status: stored passed, derived failed" in p for p in problems), problems


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), share=st.floats(1e-6, 1.0))
def test_a_twin_models_a_candidate_near_its_rounding_pattern_and_not_another_of_its_size(
    seed: int, share: float
) -> None:
    """A candidate within 1% of a twin's error (NMSE) reproduces the twin's rounding, as a
    TF32 tensor core that accumulates its own way does; an unrelated error of the same size
    does not, however large the twin's error."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(4096)
    honest = truth * (1 + 1e-8 * rng.standard_normal(4096))
    twin_error = 3e-4 * rng.standard_normal(4096) * np.abs(truth)
    twin = truth + twin_error
    near = twin + np.sqrt(share) * 3e-4 * rng.standard_normal(4096) * np.abs(truth)
    unrelated = truth + 3e-4 * rng.standard_normal(4096) * np.abs(truth)
    outputs = [(twin_named("tf32 operands"), (twin,))]
    for candidate, models in ((near, share < 0.5e-2), (unrelated, False)):
        floor = judge_floor(truth, honest, candidate, "f32", downgraded=lambda: outputs)
        assert not floor.passed
        if share < 0.5e-2 or share > 2e-2 or candidate is unrelated:  # clear of the line
            assert ("tf32 operands" in floor.models) == models, (share, floor.twins)
