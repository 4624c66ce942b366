"""softmax, layer-norm, rope, attention and add-rms-norm: naive float64 formulas, limits, faults.

Each reference is checked against a loop written from the op's definition (not the
Array-API code), and each op has an injected fault of the kind its kernels get wrong (a
misaligned causal mask, a missing bias, the other RoPE layout, one head reading the wrong KV
head, a residual stream that was never added) that must fail, by the right segment.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from diffcheck import ConfigError
from diffcheck.adapters import Execution, resolve
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.config import make_check
from diffcheck.differ import compare_outputs
from diffcheck.ops import HostInputs, Op, OpParams, get_op
from diffcheck.report.replay import replay
from diffcheck.runner import bind, execute_check, run_check

U64 = 2**64 - 1
F64 = npt.NDArray[np.float64]


def reference(op_name: str, seed: int = 42, **params: Any) -> npt.NDArray[np.float32]:
    op = get_op(op_name)
    p = op.params(**params)
    return resolve("numpy").execute(op, p, op.inputs(p, seed), "f32", role="reference").output


def wide(inputs: HostInputs, name: str, *shape: int) -> F64:
    return inputs[name].astype(np.float64).reshape(shape)


# -- naive float64 formulas, one element at a time where the definition is per element ------


def naive_softmax(x: F64, temperature: float, causal: bool, top_left: bool = False) -> F64:
    tokens, dim = x.shape
    out = np.zeros_like(x)
    for i in range(tokens):
        last = (i if top_left else dim - tokens + i) if causal else dim - 1
        logits = x[i, : last + 1] / temperature
        weights = np.exp(logits - logits.max())
        out[i, : last + 1] = weights / weights.sum()
    return out


def naive_rope(x: F64, layout: str, offset: int, base: float) -> F64:
    tokens, heads, head_dim = x.shape
    out = x.copy()
    for t in range(tokens):
        for i in range(head_dim // 2):
            theta = (offset + t) * base ** (-2.0 * i / head_dim)
            j, k = (i, i + head_dim // 2) if layout == "half" else (2 * i, 2 * i + 1)
            a, b = x[t, :, j], x[t, :, k]
            out[t, :, j] = a * math.cos(theta) - b * math.sin(theta)
            out[t, :, k] = a * math.sin(theta) + b * math.cos(theta)
    return out.reshape(tokens, heads * head_dim)


def naive_attention(q: F64, k: F64, v: F64, causal: bool, kv_of: Callable[[int], int]) -> F64:
    tokens, heads, head_dim = q.shape
    kv_len = k.shape[0]
    out = np.zeros((heads, tokens, head_dim))
    for h in range(heads):
        g = kv_of(h)
        for t in range(tokens):
            seen = kv_len - tokens + t + 1 if causal else kv_len
            scores = k[:seen, g, :] @ q[t, h, :] / math.sqrt(head_dim)
            weights = np.exp(scores - scores.max())
            out[h, t] = (weights / weights.sum()) @ v[:seen, g, :]
    return out.reshape(heads, tokens * head_dim)


def naive_layer_norm(x: F64, weight: F64, bias: F64 | None, eps: float) -> F64:
    mean = x.mean(axis=1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    out = (x - mean) / np.sqrt(variance + eps) * weight
    return out if bias is None else out + bias


def naive_add_rms_norm(x: F64, residual: F64, weight: F64, eps: float) -> F64:
    h = x + residual
    normed = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + eps) * weight
    return np.stack([h.reshape(-1), normed.reshape(-1)])


def naive(op_name: str, params: OpParams, inputs: HostInputs, **fault: Any) -> F64:
    """The op from its written definition; ``fault`` bends one part of it."""
    p = params.model_dump()
    if op_name == "softmax":
        x = wide(inputs, "x", p["tokens"], p["dim"])
        temperature = float(np.float32(p["temperature"]))
        return naive_softmax(x, temperature, p["causal"], fault.get("top_left", False))
    if op_name == "layer-norm":
        x = wide(inputs, "x", p["tokens"], p["dim"])
        bias = None if fault.get("no_bias") else inputs["bias"].astype(np.float64)
        eps = float(np.float32(p["eps"]))
        return naive_layer_norm(x, inputs["weight"].astype(np.float64), bias, eps)
    if op_name == "rope":
        x = wide(inputs, "x", p["tokens"], p["heads"], p["head_dim"])
        layout = fault.get("layout", p["layout"])
        return naive_rope(x, layout, p["offset"], float(np.float32(p["base"])))
    if op_name == "attention":
        q = wide(inputs, "q", p["tokens"], p["heads"], p["head_dim"])
        k = wide(inputs, "k", p["kv_len"], p["kv_heads"], p["head_dim"])
        v = wide(inputs, "v", p["kv_len"], p["kv_heads"], p["head_dim"])
        group = p["heads"] // p["kv_heads"]
        kv_of = fault.get("kv_of", lambda h: h // group)
        return naive_attention(q, k, v, p["causal"], kv_of)
    assert op_name == "add-rms-norm"
    x = wide(inputs, "x", p["tokens"], p["dim"])
    residual = wide(inputs, "residual", p["tokens"], p["dim"])
    if fault.get("residual_not_added"):
        out = naive_add_rms_norm(x, residual, inputs["weight"].astype(np.float64), p["eps"])
        out[0] = x.reshape(-1)  # the stream written back without the add
        return out
    eps = float(np.float32(p["eps"]))
    return naive_add_rms_norm(x, residual, inputs["weight"].astype(np.float64), eps)


CASES = [
    ("softmax", {}),
    ("softmax", {"tokens": 3, "dim": 33, "causal": True, "temperature": 0.5}),
    ("softmax", {"tokens": 5, "dim": 5, "causal": True}),
    ("layer-norm", {}),
    ("layer-norm", {"tokens": 3, "dim": 33, "eps": 1e-3}),
    ("rope", {}),
    ("rope", {"tokens": 3, "heads": 3, "head_dim": 6, "layout": "interleaved", "offset": 100}),
    ("rope", {"tokens": 2, "head_dim": 2, "base": 500000.0}),
    ("attention", {}),
    ("attention", {"tokens": 5, "kv_len": 3, "heads": 6, "kv_heads": 3, "causal": False}),
    ("attention", {"tokens": 3, "kv_len": 7, "heads": 3, "kv_heads": 1, "head_dim": 5}),
    ("add-rms-norm", {}),
    ("add-rms-norm", {"tokens": 3, "dim": 33}),
]


@pytest.mark.parametrize(("op_name", "params"), CASES)
def test_reference_matches_the_naive_definition(op_name: str, params: dict[str, Any]) -> None:
    op = get_op(op_name)
    p = op.params(**params)
    expected = naive(op_name, p, op.inputs(p, 7))
    assert expected.shape == op.output_shape(p)
    actual = reference(op_name, 7, **params)
    assert actual.size == op.validate(p)
    verdict = compare_outputs(expected.astype(np.float32).reshape(-1), actual, 1e-12)
    assert verdict.passed, verdict.reason


def test_causal_softmax_masks_with_exact_zeros_and_rows_sum_to_one() -> None:
    out = reference("softmax", tokens=3, dim=5, causal=True).reshape(3, 5)
    # Row i sees columns j <= 5 - 3 + i: 3, 4 and 5 columns.
    assert [int(np.count_nonzero(row)) for row in out] == [3, 4, 5]
    assert np.all(out[0, 3:] == 0.0)
    assert np.all(out[1, 4:] == 0.0)
    assert np.allclose(out.sum(axis=1), 1.0, atol=1e-6)


def test_inputs_are_seeded_and_distinct() -> None:
    op = get_op("attention")
    p = op.params()
    first, again, other = op.inputs(p, 3), op.inputs(p, 3), op.inputs(p, 4)
    for name in ("q", "k", "v"):
        assert np.array_equal(first[name], again[name])
        assert not np.array_equal(first[name], other[name])
    assert not np.array_equal(first["k"], first["v"])
    ln = get_op("layer-norm").inputs(get_op("layer-norm").params(), 0)
    assert ln["bias"].min() >= -0.5
    assert ln["bias"].max() < 0.5
    assert ln["weight"].min() >= 0.5
    assert ln["weight"].max() < 1.5


@pytest.mark.parametrize(
    ("op_name", "params", "message"),
    [
        ("softmax", {"dim": 0}, "Softmax tokens and dim must be nonzero"),
        ("softmax", {"tokens": U64, "dim": 2}, "Softmax tokens * dim overflows usize"),
        (
            "softmax",
            {"tokens": 2**16, "dim": 2**15},
            "Softmax shape exceeds the kernels' signed 32-bit indexing range",
        ),
        ("softmax", {"temperature": 0.0}, "Softmax temperature must be a finite f32 positive"),
        ("softmax", {"temperature": 1e39}, "Softmax temperature must be a finite f32 positive"),
        ("softmax", {"tokens": 5, "dim": 4, "causal": True}, "Softmax causal mask needs tokens"),
        ("layer-norm", {"tokens": 0}, "LayerNorm tokens and dim must be nonzero"),
        ("layer-norm", {"eps": float("nan")}, "LayerNorm epsilon must be a finite f32 positive"),
        ("rope", {"head_dim": 0}, "RoPE tokens, heads and head_dim must be nonzero"),
        ("rope", {"head_dim": 63}, "RoPE head_dim must be even, not 63"),
        ("rope", {"offset": 2**32 - 2, "tokens": 3}, "RoPE positions offset"),
        ("rope", {"base": 1.0}, "RoPE base must be a finite f32 greater than 1"),
        ("rope", {"tokens": 2**20, "heads": 2**6, "head_dim": 2**6}, "RoPE shape exceeds"),
        ("attention", {"kv_heads": 0}, "Attention tokens, kv_len, heads, kv_heads and head_dim"),
        ("attention", {"heads": 4, "kv_heads": 3}, "Attention kv_heads must divide heads"),
        ("attention", {"tokens": 9, "kv_len": 8}, "Attention causal mask needs tokens <= kv_len"),
        (
            "attention",
            {"tokens": 2**16, "kv_len": 2**16, "heads": 1, "kv_heads": 1, "head_dim": 1},
            "Attention scores shape exceeds",
        ),
        ("add-rms-norm", {"dim": 0}, "AddRMSNorm tokens and dim must be nonzero"),
        (
            "add-rms-norm",
            {"tokens": 2**15, "dim": 2**15},
            "AddRMSNorm output shape exceeds the kernels' signed 32-bit indexing range",
        ),
    ],
)
def test_invalid_params_give_one_line_errors(
    op_name: str, params: dict[str, Any], message: str
) -> None:
    op = get_op(op_name)
    with pytest.raises(ConfigError) as raised:
        op.validate(op.params(**params))
    text = str(raised.value)
    assert text.startswith(message)
    assert "\n" not in text


def test_non_causal_ops_accept_more_queries_than_keys() -> None:
    attention = get_op("attention")
    assert attention.validate(attention.params(tokens=9, kv_len=8, causal=False)) == 9 * 4 * 32
    softmax = get_op("softmax")
    assert softmax.validate(softmax.params(tokens=5, dim=4)) == 20


# -- fault injection: each op's typical kernel bug fails, and the right segment says so ------


class Faulty(NumpyAdapter):
    """NumPy's adapter whose candidate output is the naive definition with one fault."""

    name = "faulty"

    def __init__(self, **fault: Any) -> None:
        super().__init__(None)
        self.fault = fault

    def execute(
        self, op: Op[Any], params: OpParams, inputs: HostInputs, precision: Any, **_: Any
    ) -> Execution:
        out = naive(op.name, params, inputs, **self.fault).astype(np.float32).reshape(-1)
        return Execution(out, "f32", "f32", "faulty", "faulty")


def _replays_but_for_its_name(document: Any) -> None:
    """Replay re-derives the faulty candidate's verdict; the one disagreement is that the
    report names mlx:cpu, which computes through a namespace, while its candidate returned
    host values (a relabelled report, as these tests make it, is refused)."""
    assert replay(document).disagreements == [
        "computed_by.candidate: null, but mlx:cpu computes through a namespace and returns "
        "its arrays: which library computed it was removed"
    ]


def _judge(op_name: str, fault: dict[str, Any], **params: Any) -> Any:
    check = make_check("mlx:cpu", op_name, seed=5, **params)
    outcome = execute_check(check, candidate=Faulty(**fault))
    return bind(outcome, check), check


@pytest.mark.parametrize(
    ("op_name", "params"),
    [("softmax", {"causal": True}), ("rope", {"layout": "interleaved"}), ("attention", {})],
)
def test_the_naive_candidate_itself_passes(op_name: str, params: dict[str, Any]) -> None:
    # The fault tests below are meaningful only if the unbent naive candidate passes.
    verdict, _ = _judge(op_name, {}, **params)
    assert verdict.status == "passed", verdict.reason


def test_a_top_left_causal_mask_fails() -> None:
    # The classic misalignment: row i sees j <= i instead of j <= dim - tokens + i.
    verdict, _ = _judge("softmax", {"top_left": True}, tokens=4, dim=8, causal=True)
    assert verdict.status == "failed"
    assert "is not below tolerance" in verdict.reason
    # With tokens == dim both alignments agree, so the same fault passes there: the mask,
    # not the fault wrapper, is what fails above.
    verdict, _ = _judge("softmax", {"top_left": True}, tokens=8, dim=8, causal=True)
    assert verdict.status == "passed", verdict.reason


def test_layer_norm_without_bias_fails() -> None:
    verdict, _ = _judge("layer-norm", {"no_bias": True})
    assert verdict.status == "failed"


def test_rope_in_the_other_layout_fails() -> None:
    verdict, _ = _judge("rope", {"layout": "interleaved"}, layout="half")
    assert verdict.status == "failed"
    verdict, _ = _judge("rope", {"layout": "half"}, layout="interleaved")
    assert verdict.status == "failed"


def test_one_head_reading_the_wrong_kv_head_is_named() -> None:
    # heads 4, kv_heads 2: head 1 should read KV head 0 but reads KV head 1.
    verdict, check = _judge("attention", {"kv_of": lambda h: 1 if h == 1 else h // 2})
    assert verdict.status == "failed"
    assert [s.segment.name for s in verdict.segments if s.status == "failed"] == ["head1"]
    assert "head1" in verdict.reason
    document = run_check(check, candidate=Faulty(kv_of=lambda h: 1 if h == 1 else h // 2))
    assert document.result is not None
    assert document.result.status == "failed"
    assert [s.name for s in document.segments or [] if s.status == "failed"] == ["head1"]
    _replays_but_for_its_name(document)


def test_a_residual_stream_that_was_not_added_fails_only_its_segment() -> None:
    verdict, check = _judge("add-rms-norm", {"residual_not_added": True})
    assert verdict.status == "failed"
    assert {s.segment.name: s.status for s in verdict.segments} == {
        "residual": "failed",
        "normed": "passed",
    }
    document = run_check(check, candidate=Faulty(residual_not_added=True))
    _replays_but_for_its_name(document)


@pytest.mark.parametrize(("op_name", "params"), CASES[::2])
def test_mlx_cpu_passes_at_every_precision(op_name: str, params: dict[str, Any]) -> None:
    pytest.importorskip("mlx.core", reason="mlx is not installed")
    for precision in ("f32", "f16", "bf16"):
        check = make_check("mlx:cpu", op_name, precision=precision, **params)
        document = run_check(check)
        assert document.result is not None
        assert document.result.status == "passed", (precision, document.result.reason)
        assert replay(document).agrees


def test_cli_options_parse_by_field_type(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from diffcheck.cli import main

    softmax, rope = get_op("softmax"), get_op("rope")
    assert softmax.parse_option("causal", "true") is True
    assert softmax.parse_option("causal", "False") is False
    assert softmax.parse_option("causal", "1") is None
    assert softmax.parse_option("temperature", "0.1") == float(np.float32(0.1))
    assert softmax.parse_option("tokens", "-1") is None
    assert rope.parse_option("layout", "interleaved") == "interleaved"
    base = ["run", "--require-backend", "mlx:cpu", "--op", "softmax"]
    assert main([*base, "--causal", "yes", "--report", str(tmp_path / "a.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == 'diffcheck: invalid value for --causal: "yes"; it must be true or false'
    rope_args = ["run", "--require-backend", "mlx:cpu", "--op", "rope", "--layout", "diagonal"]
    assert main([*rope_args, "--report", str(tmp_path / "b.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("diffcheck: invalid value for --layout: Input should be 'half' or")
    assert not list(tmp_path.iterdir())
