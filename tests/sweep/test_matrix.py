"""Matrix parsing, validation and expansion."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import write_matrix

from diffcheck.errors import ConfigError
from diffcheck.ops import OPS
from diffcheck.sweep.matrix import load_matrix, parse_matrix
from diffcheck.sweep.plan import plan_matrix, shape_label

ROOT = Path(__file__).resolve().parents[2]

BASE = """
schema_version = 1
[defaults]
precisions = ["f32", "f16", "bf16"]
seeds = [1, 2]
[[pairs]]
candidate = "array_api_strict"
precisions = ["f32"]
[[pairs]]
reference = "numpy"
candidate = "torch:cpu"
[ops.gemm]
shapes = [{ m = 64, n = 33, k = 35 }, { m = 1, n = 3, k = 5, seeds = [7] }]
"""


def _plan(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = write_matrix(tmp_path, text)
    return plan_matrix(load_matrix(path), source=f"matrix {path}")


def test_expansion_is_the_cross_product_minus_skipped_precisions(tmp_path: Path) -> None:
    plan = _plan(tmp_path, BASE)
    # array_api_strict: f32 only -> 1 precision x (2 seeds + 1 seed); torch: 3 x 3.
    assert len(plan.checks) == 3 + 9
    ids = [c.id for c in plan.checks]
    assert ids[:3] == [
        "numpy-vs-array_api_strict/gemm/gemm-64x33x35-f32-s1",
        "numpy-vs-array_api_strict/gemm/gemm-64x33x35-f32-s2",
        "numpy-vs-array_api_strict/gemm/gemm-1x3x5-f32-s7",
    ]
    assert "numpy-vs-torch-cpu/gemm/gemm-1x3x5-bf16-s7" in ids
    assert len(set(ids)) == len(ids)
    first = plan.checks[0].check
    assert (first.require_backend, first.reference, first.seed) == ("array_api_strict", "numpy", 1)
    assert first.params.model_dump() == {"m": 64, "n": 33, "k": 35}


def test_tolerance_precedence_shape_op_pair_defaults_bucket(tmp_path: Path) -> None:
    text = """
schema_version = 1
[defaults]
precisions = ["f32", "f16", "bf16"]
tolerances = { f16 = 3e-6 }
[[pairs]]
candidate = "torch"
tolerances = { bf16 = 2e-4 }
[ops.gemm]
max_nmse = 5e-7
shapes = [{ m = 2 }]
[ops.silu-mul]
shapes = [{ tokens = 2 }, { tokens = 3, max_nmse = 9e-9 }]
"""
    plan = _plan(tmp_path, text)
    tolerance = {(c.op, c.shape, c.check.precision): c.check.max_nmse for c in plan.checks}
    assert tolerance[("gemm", "2x32x32", "bf16")] == 5e-7  # op layer beats pair and defaults
    assert tolerance[("silu-mul", "2x256", "bf16")] == 2e-4  # pair layer
    assert tolerance[("silu-mul", "2x256", "f16")] == 3e-6  # defaults layer
    assert tolerance[("silu-mul", "2x256", "f32")] == 1e-7  # precision bucket
    assert tolerance[("silu-mul", "3x256", "f16")] == 9e-9  # shape override


def test_aliases_and_labels(tmp_path: Path) -> None:
    text = """
schema_version = 1
[[pairs]]
candidate = "array_api_strict"
[ops.metal-context]
shapes = [{ tokens = 1 }]
[ops.rms-norm]
shapes = [{ tokens = 3, dim = 33, eps = 1e-5, seeds = [9] }]
"""
    ids = [c.id for c in _plan(tmp_path, text).checks]
    assert ids == [
        "numpy-vs-array_api_strict/rms-norm/rms-norm-3x33-eps1e-05-f32-s9",
        "numpy-vs-array_api_strict/context-lifecycle/context-lifecycle-1x33x35-f32-s42",
    ]
    assert shape_label({"tokens": 3, "dim": 33, "eps": 1e-6}) == "3x33-eps1e-06"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "[[pairs]]\ncandidate='torch'\n[ops.gemm]\nshapes=[{m=1}]",
            "schema_version: Field required",
        ),
        (
            "schema_version=1\n[[pairs]]\ncandidate='torch'\n[ops.sofmax]\nshapes=[{m=1}]",
            "unknown op 'sofmax'; known ops: rms-norm, gemm, silu-mul, context-lifecycle, softmax, layer-norm, rope, attention, add-rms-norm",
        ),
        (
            "schema_version=1\n[[pairs]]\ncandidate='torch'\n[ops.gemm]\nshapes=[{mm=1}]",
            "ops.gemm.shapes.0.mm: Extra inputs are not permitted",
        ),
        (
            "schema_version=1\n[[pairs]]\ncandidate='torch'\nmax_nmse=1e-7\ntolerances={f32=1e-7}\n"
            "[ops.gemm]\nshapes=[{m=1}]",
            "pairs.0: set either max_nmse or tolerances, not both",
        ),
        (
            "schema_version=1\n[defaults]\nmax_nmse=-1.0\n[[pairs]]\ncandidate='torch'\n"
            "[ops.gemm]\nshapes=[{m=1}]",
            "defaults.max_nmse: Input should be greater than 0",
        ),
        ("schema_version=1\n[[pairs]]\ncandidate='torch'\n[ops]\n", "ops: list at least one op"),
        ("schema_version = [", "not valid TOML"),
        (
            "schema_version=1\n[[pairs]]\ncandidate='torch'\n[defaults]\nprecisions=['f64']\n"
            "[ops.gemm]\nshapes=[{m=1}]",
            "defaults.precisions.0: Input should be 'f32', 'f16' or 'bf16'",
        ),
    ],
)
def test_a_bad_matrix_is_one_line_naming_the_key(tmp_path: Path, body: str, message: str) -> None:
    path = write_matrix(tmp_path, body)
    with pytest.raises(ConfigError) as raised:
        load_matrix(path)
    text = str(raised.value)
    assert text.startswith(f"matrix {path}: ")
    assert message in text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        (
            "{ m = 0 }",
            "ops.gemm.shapes[0] (numpy -> torch, f32, seed 42): GEMM m, n and k must be nonzero",
        ),
        (
            "{ m = 4294967296, n = 4294967296 }",
            "GEMM A exceeds host or signed kernel indexing range",
        ),
    ],
)
def test_every_expanded_check_is_validated_with_make_check(
    tmp_path: Path, shape: str, message: str
) -> None:
    text = f"schema_version=1\n[[pairs]]\ncandidate='torch'\n[ops.gemm]\nshapes=[{shape}]\n"
    with pytest.raises(ConfigError, match="GEMM") as raised:
        _plan(tmp_path, text)
    assert message in str(raised.value)


def test_reference_problems_and_duplicates_are_matrix_errors(tmp_path: Path) -> None:
    same = "schema_version=1\n[[pairs]]\nreference='torch'\ncandidate='torch'\n[ops.gemm]\nshapes=[{m=1}]"
    with pytest.raises(ConfigError, match="a backend cannot vouch for itself"):
        _plan(tmp_path, same)
    bad_reference = "schema_version=1\n[[pairs]]\nreference='nope'\ncandidate='torch'\n[ops.gemm]\nshapes=[{m=1}]"
    with pytest.raises(ConfigError, match='unsupported reference backend "nope"'):
        _plan(tmp_path, bad_reference)
    repeated = (
        "schema_version=1\n[[pairs]]\ncandidate='torch'\n[ops.gemm]\nshapes=[{m=1},{m=1,n=32}]"
    )
    with pytest.raises(
        ConfigError, match=r"ops.gemm.shapes\[1\] repeats check numpy-vs-torch/gemm"
    ):
        _plan(tmp_path, repeated)
    nothing = (
        "schema_version=1\n[[pairs]]\ncandidate='torch'\nprecisions=['f16']\n"
        "[ops.gemm]\nshapes=[{m=1}]"
    )
    with pytest.raises(ConfigError, match="expands to no checks"):
        _plan(tmp_path, nothing)


def test_a_candidate_without_an_adapter_is_planned_not_rejected(tmp_path: Path) -> None:
    text = (
        "schema_version=1\n[[pairs]]\ncandidate='no_such_backend:gpu'\n[ops.gemm]\nshapes=[{m=1}]"
    )
    plan = _plan(tmp_path, text)
    (planned,) = plan.checks
    assert planned.pair.unresolved is not None
    assert 'unsupported required backend "no_such_backend:gpu"' in planned.pair.unresolved
    assert planned.check.require_backend == "no_such_backend:gpu"
    assert planned.id == "numpy-vs-no_such_backend-gpu/gemm/gemm-1x32x32-f32-s42"
    # Its op parameters are still validated.
    bad = text.replace("m=1", "m=0")
    with pytest.raises(ConfigError, match="GEMM m, n and k must be nonzero"):
        _plan(tmp_path, bad)


def test_the_default_matrix_covers_every_op_backend_and_ci_sample() -> None:
    plan = plan_matrix(load_matrix(ROOT / "matrices" / "default.toml"))
    candidates = {p.candidate: p for p in plan.pairs}
    assert set(candidates) == {"mlx:cpu", "wgpu", "mlx:gpu", "metal"}
    assert not any(p.required for p in plan.pairs)
    ids = {c.id for c in plan.checks}
    for sample in (
        "numpy-vs-mlx-cpu/rms-norm/rms-norm-4x128-eps1e-06-bf16-s42",
        "numpy-vs-mlx-cpu/rms-norm/rms-norm-3x33-eps1e-05-f16-s9",
        "numpy-vs-wgpu/gemm/gemm-64x32x32-f32-s42",
        "numpy-vs-wgpu/gemm/gemm-64x33x35-f32-s7",
        "numpy-vs-metal/gemm/gemm-1x3x5-f32-s42",
        "numpy-vs-mlx-gpu/silu-mul/silu-mul-4x256-f32-s42",
        "numpy-vs-mlx-gpu/silu-mul/silu-mul-3x257-bf16-s7",
        "numpy-vs-wgpu/context-lifecycle/context-lifecycle-3x33x35-f32-s42",
        "numpy-vs-wgpu/context-lifecycle/context-lifecycle-1x33x35-f32-s42",
    ):
        assert sample in ids, sample
    assert not any("wgpu" in i and ("-f16-" in i or "-bf16-" in i) for i in ids)
    assert not any("metal" in i and "-f32-" not in i for i in ids)
    # Every first-party op (the plugin example's op is not in the default matrix).
    assert [name for name, _ in load_matrix(ROOT / "matrices" / "default.toml").op_entries()] == [
        name for name in OPS if OPS[name].__module__.startswith("diffcheck.")
    ]
    # Flags and text choices make distinct checks, with tolerances from the op's defaults.
    assert "numpy-vs-mlx-cpu/softmax/softmax-3x33-causal-temperature0.5-f16-s7" in ids
    assert "numpy-vs-mlx-cpu/rope/rope-3x3x34x4093-layoutinterleaved-base10000.0-f32-s42" in ids
    softmax = {
        c.check.precision: c.check.max_nmse for c in plan.checks if c.check.op.name == "softmax"
    }
    assert softmax == {"f32": 1e-7, "f16": 4e-6, "bf16": 4e-4}


def test_parse_matrix_accepts_a_decoded_document() -> None:
    matrix = parse_matrix(
        {"schema_version": 1, "pairs": [{"candidate": "torch"}], "ops": {"gemm": {"shapes": [{}]}}}
    )
    (pair,) = matrix.pairs
    assert (pair.reference, pair.required, pair.precisions) == ("numpy", False, None)
    assert matrix.defaults.seeds == [42]


def test_an_unknown_device_is_planned_not_run_with_the_known_devices(tmp_path: Path) -> None:
    text = "schema_version=1\n[[pairs]]\ncandidate='numpy:tpu'\nreference='array_api_strict'\n[ops.gemm]\nshapes=[{m=1}]"
    (planned,) = _plan(tmp_path, text).checks
    assert (
        planned.pair.unresolved
        == 'unsupported required backend "numpy:tpu"; did you mean "numpy:cpu"? known devices: numpy:cpu'
    )
