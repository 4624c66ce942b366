"""Each op: validation limits and messages, deterministic inputs, and the reference against naive formulas."""

from __future__ import annotations

import numpy as np
import pytest

from diffcheck import ConfigError
from diffcheck.adapters import resolve
from diffcheck.differ import compare_outputs, diff
from diffcheck.inputs import offset_seed, random_vec
from diffcheck.ops import OPS, get_op
from diffcheck.ops.lifecycle import OUTPUT_SENTINEL

U64 = 2**64 - 1
I32 = 2**31 - 1


def reference(op_name: str, seed: int = 42, **params: float) -> np.ndarray:
    op = get_op(op_name)
    p = op.params(**params)
    return resolve("numpy").execute(op, p, op.inputs(p, seed), "f32", role="reference").output


def test_random_vec_is_deterministic_ranged_and_seed_sensitive() -> None:
    a = random_vec(1000, -2.0, 2.0, 7)
    assert a.dtype == np.float32
    assert np.array_equal(a.view(np.uint32), random_vec(1000, -2.0, 2.0, 7).view(np.uint32))
    assert not np.array_equal(a, random_vec(1000, -2.0, 2.0, 8))
    assert a.min() >= -2.0
    assert a.max() <= 2.0
    assert offset_seed(U64, 1) == 0


@pytest.mark.parametrize(
    ("op_name", "params", "message"),
    [
        ("rms-norm", {"tokens": 0}, "RMSNorm tokens and dim must be nonzero"),
        ("rms-norm", {"dim": 0}, "RMSNorm tokens and dim must be nonzero"),
        ("rms-norm", {"eps": float("nan")}, "RMSNorm epsilon must be finite and positive"),
        ("rms-norm", {"eps": -0.0}, "RMSNorm epsilon must be finite and positive"),
        ("rms-norm", {"eps": 0.0}, "RMSNorm epsilon must be finite and positive"),
        ("rms-norm", {"tokens": U64, "dim": 2}, "RMSNorm tokens * dim overflows usize"),
        ("rms-norm", {"tokens": 2**62, "dim": 2}, "RMSNorm f32 buffer byte size overflows usize"),
        (
            "rms-norm",
            {"tokens": 2**60, "dim": 2},
            "RMSNorm f32 buffer exceeds the host allocation address range",
        ),
        (
            "rms-norm",
            {"tokens": 1, "dim": I32 - 1023 + 1},
            "RMSNorm shape exceeds the kernels' signed 32-bit indexing range",
        ),
        (
            "rms-norm",
            {"tokens": 2**16, "dim": 2**15},
            "RMSNorm shape exceeds the kernels' signed 32-bit indexing range",
        ),
        ("gemm", {"m": 0}, "GEMM m, n and k must be nonzero"),
        ("gemm", {"k": 0}, "GEMM m, n and k must be nonzero"),
        ("gemm", {"k": U64}, "GEMM A element count overflows usize"),
        ("gemm", {"m": 1, "k": 2**62}, "GEMM A f32 byte size overflows usize"),
        ("gemm", {"m": 1, "k": 2**31}, "GEMM A exceeds host or signed kernel indexing range"),
        (
            "gemm",
            {"m": 1, "n": 2**31, "k": 1},
            "GEMM B exceeds host or signed kernel indexing range",
        ),
        (
            "gemm",
            {"m": 2**16, "n": 2**15, "k": 1},
            "GEMM output exceeds host or signed kernel indexing range",
        ),
        ("gemm", {"m": 1, "n": 1, "k": I32}, "GEMM k tile exceeds signed kernel indexing range"),
        ("gemm", {"m": I32, "n": 1, "k": 1}, "GEMM m tile exceeds signed kernel indexing range"),
        ("silu-mul", {"tokens": 0}, "SiLU Mul tokens and intermediate must be nonzero"),
        ("silu-mul", {"intermediate": 0}, "SiLU Mul tokens and intermediate must be nonzero"),
        ("silu-mul", {"intermediate": U64}, "SiLU Mul output element count overflows usize"),
        (
            "silu-mul",
            {"tokens": 1, "intermediate": 2**63},
            "SiLU Mul gate/up element count overflows usize",
        ),
        (
            "silu-mul",
            {"tokens": 1, "intermediate": 2**62},
            "SiLU Mul f32 input byte size overflows usize",
        ),
        (
            "silu-mul",
            {"tokens": 1, "intermediate": 2**30},
            "SiLU Mul input exceeds host or signed kernel indexing range",
        ),
        ("context-lifecycle", {"intermediate": 2**63}, "context GEMM width overflow"),
        ("context-lifecycle", {"tokens": 0}, "GEMM m, n and k must be nonzero"),
        ("context-lifecycle", {"intermediate": 0}, "GEMM m, n and k must be nonzero"),
        ("context-lifecycle", {"k": 0}, "GEMM m, n and k must be nonzero"),
    ],
)
def test_invalid_shapes_are_rejected_before_allocation(
    op_name: str, params: dict[str, float], message: str
) -> None:
    op = get_op(op_name)
    with pytest.raises(ConfigError) as raised:
        op.validate(op.params(**params))
    assert str(raised.value) == message


def test_largest_accepted_rms_norm_row_is_the_contract_limit() -> None:
    op = get_op("rms-norm")
    assert op.validate(op.params(tokens=1, dim=I32 - 1023)) == I32 - 1023


@pytest.mark.parametrize(
    ("op_name", "params", "shape"),
    [
        ("rms-norm", {}, (4, 128)),
        ("rms-norm", {"tokens": 3, "dim": 33}, (3, 33)),
        ("gemm", {}, (64, 32)),
        ("gemm", {"m": 64, "n": 33, "k": 35}, (64, 33)),
        ("gemm", {"m": 1, "n": 3, "k": 5}, (1, 3)),
        ("silu-mul", {}, (4, 256)),
        ("silu-mul", {"tokens": 3, "intermediate": 257}, (3, 257)),
        ("context-lifecycle", {}, (4, 99)),
        ("metal-context", {"tokens": 1, "intermediate": 1, "k": 1}, (4, 1)),
    ],
)
def test_output_shape_and_element_count_agree(
    op_name: str, params: dict[str, int], shape: tuple[int, int]
) -> None:
    op = get_op(op_name)
    p = op.params(**params)
    assert op.output_shape(p) == shape
    assert op.validate(p) == shape[0] * shape[1]
    assert reference(op_name, **params).size == shape[0] * shape[1]


def test_rms_norm_reference_matches_the_naive_formula() -> None:
    op = get_op("rms-norm")
    p = op.params(tokens=3, dim=33, eps=1e-5)
    inputs = op.inputs(p, 9)
    x = inputs["x"].reshape(3, 33).astype(np.float64)
    naive = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + np.float32(1e-5)) * inputs["w"]
    assert compare_outputs(
        naive.astype(np.float32), reference("rms-norm", 9, tokens=3, dim=33, eps=1e-5), 1e-7
    ).passed


def test_gemm_reference_matches_a_float64_triple_loop() -> None:
    op = get_op("gemm")
    p = op.params(m=5, n=3, k=7)
    inputs = op.inputs(p, 7)
    a, b = inputs["a"].reshape(5, 7), inputs["b"].reshape(3, 7)
    naive = np.array(
        [
            [sum(float(a[i, t]) * float(b[j, t]) for t in range(7)) for j in range(3)]
            for i in range(5)
        ]
    )
    assert compare_outputs(
        naive.astype(np.float32), reference("gemm", 7, m=5, n=3, k=7), 1e-7
    ).passed
    assert (
        compare_outputs(np.zeros(15, np.float32), reference("gemm", 7, m=5, n=3, k=7), 1e-7).status
        == "failed"
    )


def test_silu_mul_reference_matches_the_formula_and_rejects_gate_times_up() -> None:
    op = get_op("silu-mul")
    p = op.params(tokens=3, intermediate=257)
    gate_up = op.inputs(p, 7)["gate_up"].reshape(3, 514).astype(np.float64)
    gate, up = gate_up[:, :257], gate_up[:, 257:]
    expected = reference("silu-mul", 7, tokens=3, intermediate=257)
    assert compare_outputs(
        (gate / (1 + np.exp(-gate)) * up).astype(np.float32), expected, 1e-7
    ).passed
    assert compare_outputs((gate * up).astype(np.float32), expected, 1e-7).status == "failed"


def test_lifecycle_reference_is_four_independent_seeded_chains() -> None:
    op = get_op("context-lifecycle")
    p = op.params()
    out = reference("context-lifecycle").reshape(4, 99)
    for phase in range(4):
        single = get_op("gemm")
        gp = single.params(m=3, n=66, k=35)
        a = random_vec(3 * 35, -0.5, 0.5, offset_seed(42, 2 * phase))
        b = random_vec(66 * 35, -0.5, 0.5, offset_seed(42, 2 * phase + 1))
        product = (
            resolve("numpy").execute(single, gp, {"a": a, "b": b}, "f32", role="reference").output
        )
        rows = product.reshape(3, 66).astype(np.float64)
        expected = rows[:, :33] / (1 + np.exp(-rows[:, :33])) * rows[:, 33:]
        assert compare_outputs(expected.astype(np.float32).reshape(-1), out[phase], 1e-7).passed
    assert not np.array_equal(out[0], out[1])
    segments = op.segments(p)
    sentinel = out.copy()
    sentinel[2] = OUTPUT_SENTINEL
    failing = diff(out, sentinel, max_nmse=1e-7, segments=segments).first_failing_segment
    assert failing is not None
    assert failing.segment.label == "IndependentContext"
    repeated = out.copy()
    repeated[3] = out[0]
    verdict = diff(out, repeated, max_nmse=1e-7, segments=segments)
    assert [s.status for s in verdict.segments] == ["passed", "passed", "passed", "failed"]


def test_every_op_has_unique_names_and_documented_options() -> None:
    names = [op.name for op in OPS.values()] + [a for op in OPS.values() for a in op.aliases]
    assert len(names) == len(set(names))
    assert get_op("metal-context") is get_op("context-lifecycle")
    for op in OPS.values():
        for name, field in op.params_model.model_fields.items():
            assert field.description, f"{op.name} --{name} has no description"
