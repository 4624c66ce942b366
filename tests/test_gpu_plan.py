"""diffcheck.gpu_plan: kernel choice, grid splitting, parameter blocks and labels (no GPU)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diffcheck import gpu_plan
from diffcheck.adapters import resolve
from diffcheck.differ import diff
from diffcheck.gpu_plan import Grid, Kernel, Launch, split_grid
from diffcheck.ops import Gemm, get_op
from diffcheck.ops.lifecycle import COPIED_SENTINEL, OUTPUT_SENTINEL, PRODUCT_SENTINEL


def _flat_indices(grid: Grid) -> list[int]:
    """The flat workgroup index every kernel computes, for each workgroup of ``grid``."""
    return [
        (z * grid.y + y) * grid.x + x
        for z in range(grid.z)
        for y in range(grid.y)
        for x in range(grid.x)
    ]


@given(workgroups=st.integers(1, 5000), limit=st.integers(1, 40))
def test_split_grid_covers_every_workgroup_once_within_the_limit(
    workgroups: int, limit: int
) -> None:
    if workgroups > limit**3:
        with pytest.raises(ValueError, match="do not fit a grid"):
            split_grid(workgroups, limit)
        return
    grid = split_grid(workgroups, limit)
    assert max(grid.as_tuple()) <= limit
    flat = _flat_indices(grid)
    # The linearization is a bijection onto [0, size), so [0, workgroups) is covered once.
    assert sorted(flat) == list(range(grid.size))
    assert grid.size >= workgroups
    # Surplus workgroups (which return early) stay below one x-by-y layer.
    assert grid.size - workgroups < grid.x * grid.y


def test_split_grid_keeps_small_counts_one_dimensional() -> None:
    assert split_grid(1) == Grid(1, 1, 1)
    assert split_grid(65535) == Grid(65535, 1, 1)
    assert split_grid(65536) == Grid(65535, 2, 1)
    assert split_grid(10, 3) == Grid(3, 3, 2)


@pytest.mark.parametrize(("workgroups", "limit"), [(0, 4), (3, 0), (9, 2)])
def test_split_grid_rejects_what_cannot_be_launched(workgroups: int, limit: int) -> None:
    with pytest.raises(ValueError, match=rf"{workgroups}"):
        split_grid(workgroups, limit)


def test_gemm_uses_gemv_for_one_row_and_tiles_otherwise() -> None:
    gemv = gpu_plan.plan_gemm(1, 3, 5)
    assert (gemv.kernel, gemv.groups, gemv.words) == (gpu_plan.GEMV_KERNEL, 1, (3, 5, 1))
    assert gemv.threads == (gpu_plan.GEMV_LANES, gpu_plan.GEMV_ROWS)

    tiled = gpu_plan.plan_gemm(130, 70, 257)
    # ceil(130 / 64) = 3 tile rows, ceil(70 / 32) = 3 tile columns.
    assert (tiled.kernel, tiled.groups, tiled.words) == (
        gpu_plan.GEMM_KERNEL,
        9,
        (130, 70, 257, 3, 9),
    )
    assert tiled.grid == Grid(9, 1, 1)
    assert gpu_plan.plan_gemm(64, 32, 32).groups == 1


def test_a_small_limit_splits_the_grid_without_changing_the_flat_count() -> None:
    launch = gpu_plan.plan_gemm(130, 70, 257, limit=3)
    assert launch.grid == Grid(3, 3, 1)
    assert launch.groups == 9
    silu = gpu_plan.plan_silu_mul(3, 257, limit=2)
    assert (silu.groups, silu.grid) == (4, Grid(2, 2, 1))


def test_silu_mul_and_rms_norm_parameter_blocks() -> None:
    silu = gpu_plan.plan_silu_mul(3, 257)
    assert silu.words == (3, 257, 771, 4)
    assert silu.threads == (gpu_plan.ELEMENTWISE_THREADS, 1)
    rms = gpu_plan.plan_rms_norm(4, 128, 1e-5)
    assert rms.groups == 4
    tokens, dim, eps_bits = rms.words
    assert (tokens, dim) == (4, 128)
    assert struct.unpack("<f", struct.pack("<I", eps_bits))[0] == pytest.approx(1e-5, rel=1e-7)


def test_params_bytes_are_little_endian_words_padded_to_16_bytes() -> None:
    launch = gpu_plan.plan_gemm(2, 3, 4)
    data = launch.params_bytes()
    assert len(data) == 32
    assert struct.unpack("<8I", data) == (2, 3, 4, 1, 1, 0, 0, 0)
    assert len(gpu_plan.plan_silu_mul(1, 1).params_bytes()) == 16


def test_words_beyond_32_bits_are_refused() -> None:
    with pytest.raises(ValueError, match="unsigned 32-bit"):
        gpu_plan.plan_silu_mul(2**16, 2**16)


#: The Metal adapter's entry points (the contract's names), by kernel name.
METAL_NAMES = {
    "gemm": "gemm_f32_v2",
    "gemv": "gemv_f32",
    "silu_mul": "silu_mul_split_f32",
    "rms_norm": "rms_norm_f32",
}


def _labels(name: str, **values: Any) -> tuple[str, ...]:
    op = get_op(name)
    launch = gpu_plan.raw_launch(op, op.params(**values))
    return gpu_plan.step_names(launch, lambda kernel: METAL_NAMES[kernel.name], "blit")


def test_raw_launches_and_labels_follow_the_contract() -> None:
    one = _labels("context-lifecycle", tokens=1)
    assert gpu_plan.entrypoint_label(one, suffix="(legacy MetalContext)") == (
        "gemv_f32 -> blit -> silu_mul_split_f32 (legacy MetalContext)"
    )
    three = gpu_plan.entrypoint_label(_labels("context-lifecycle"))
    assert three == "gemm_f32_v2 -> blit -> silu_mul_split_f32"
    assert _labels("gemm", m=1, n=3, k=5) == ("gemv_f32",)
    assert _labels("gemm") == ("gemm_f32_v2",)
    assert _labels("rms-norm") == ("rms_norm_f32",)
    assert _labels("silu-mul") == ("silu_mul_split_f32",)


def test_the_lifecycle_launch_is_four_phased_chains_into_sentinels() -> None:
    op = get_op("context-lifecycle")
    launch = gpu_plan.raw_launch(op, op.params())
    assert launch.lifecycle
    assert len(launch.chains) == 4
    for phase, chain in enumerate(launch.chains):
        assert [b.name for b in chain.buffers.values() if isinstance(b, gpu_plan.Input)] == [
            f"a{phase}",
            f"b{phase}",
        ]
        fills = {b.value for b in chain.buffers.values() if isinstance(b, gpu_plan.Filled)}
        assert fills == {PRODUCT_SENTINEL, COPIED_SENTINEL, OUTPUT_SENTINEL}
        assert isinstance(chain.steps[1], gpu_plan.Copy)


class _NoKernels(Gemm):
    def raw_launch(self, params: Any, limit: int) -> None:
        return None


class _Dispatches(Gemm):
    """A gemm whose launch dispatches ``kernel`` instead of the registered one."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def raw_launch(self, params: Any, limit: int) -> gpu_plan.RawLaunch:
        launch = gpu_plan.plan_gemm(params.m, params.n, params.k, limit=limit)
        other = Launch(self.kernel, launch.groups, launch.threads, launch.grid, launch.words)
        a, b = gpu_plan.Input("a"), gpu_plan.Input("b")
        return gpu_plan.RawLaunch.kernel(other, a, b, gpu_plan.Filled(params.m * params.n))


def test_raw_launch_refuses_an_op_without_kernels_or_with_an_unregistered_one() -> None:
    gemm = get_op("gemm")
    with pytest.raises(TypeError, match="no raw-GPU kernels"):
        gpu_plan.raw_launch(_NoKernels(), gemm.params())
    stranger = Kernel("gemm_unregistered_here", {"TILE_M": 64})
    with pytest.raises(ValueError, match="'gemm_unregistered_here', which is not registered"):
        gpu_plan.raw_launch(_Dispatches(stranger), gemm.params())
    impostor = Kernel("gemm", {"TILE_M": 1})  # the built-in name, other constants
    with pytest.raises(ValueError, match="differs from the one registered under that name"):
        gpu_plan.raw_launch(_Dispatches(impostor), gemm.params())


def test_kernel_names_are_one_kernel_each() -> None:
    assert gpu_plan.kernel_named("gemm") is gpu_plan.GEMM_KERNEL
    assert gpu_plan.register_kernel(Kernel("gemm", dict(gpu_plan.GEMM_KERNEL.constants))) is (
        gpu_plan.GEMM_KERNEL
    )
    with pytest.raises(ValueError, match="'gemm' is already registered by a different kernel"):
        gpu_plan.register_kernel(Kernel("gemm", {"TILE_M": 1}))
    with pytest.raises(KeyError, match="no kernel is registered as 'gelu_typo'"):
        gpu_plan.kernel_named("gelu_typo")
    with pytest.raises(ValueError, match="lower-case letters"):
        Kernel("Not A Name")
    with pytest.raises(ValueError, match=r"sources in \['hlsl'\]"):
        Kernel("x", sources={"hlsl": gpu_plan.KernelSource("main", "")})  # type: ignore[dict-item]


def test_a_chain_refuses_an_undeclared_buffer() -> None:
    launch = gpu_plan.plan_silu_mul(1, 4)
    with pytest.raises(ValueError, match=r"uses buffers \['out'\] it does not declare"):
        gpu_plan.Chain({"x": gpu_plan.Input("x")}, (gpu_plan.Dispatch(launch, ("x", "out")),), "x")
    with pytest.raises(ValueError, match="last bound buffer is its output"):
        gpu_plan.RawLaunch.kernel(launch, gpu_plan.Input("x"))


def test_every_builtin_kernel_declares_its_constants() -> None:
    assert {k.name for k in gpu_plan.BUILTIN_KERNELS} == {
        "gemm",
        "gemv",
        "silu_mul",
        "rms_norm",
        "softmax",
        "layer_norm",
        "add_rms_norm",
        "rope",
        "attention",
    }
    assert all(k.constants and not k.sources for k in gpu_plan.BUILTIN_KERNELS)
    gemm = gpu_plan.GEMM_KERNEL.constants
    # The thread block covers the tile: 32 columns, 8 passes of 8 rows.
    assert gemm["THREADS_X"] == gemm["TILE_N"]
    assert gemm["TILE_M"] % gemm["THREADS_Y"] == 0


def test_declared_constants_reads_wgsl_and_msl() -> None:
    wgsl = "const TILE_M: u32 = 64u;\nconst OTHER: u32 = TILE_M / 2u;\n  const THREADS: u32 = 256u;"
    msl = "constant uint TILE_M = 64;\nconstant uint THREADS = 256;"
    assert gpu_plan.declared_constants(wgsl) == {"TILE_M": 64, "THREADS": 256}
    assert gpu_plan.declared_constants(msl) == {"TILE_M": 64, "THREADS": 256}


def test_source_for_prefers_the_kernels_own_source_then_the_shipped_file() -> None:
    read: list[str] = []

    def shipped_text(filename: str) -> str:
        read.append(filename)
        return f"// {filename}"

    shipped = {"silu_mul": ("silu_mul.wgsl", "silu_mul_split_f32")}
    source, origin = gpu_plan.source_for(gpu_plan.SILU_MUL_KERNEL, "wgsl", shipped, shipped_text)
    assert (source.entry, source.text, origin) == (
        "silu_mul_split_f32",
        "// silu_mul.wgsl",
        "silu_mul.wgsl",
    )
    own = Kernel(
        "test_own_gelu",
        sources={"msl": gpu_plan.KernelSource("gelu_f32", "kernel void gelu_f32() {}")},
    )
    source, origin = gpu_plan.source_for(own, "msl", shipped, shipped_text)
    assert source.entry == "gelu_f32"
    assert origin == "test_own_gelu.metal (the 'test_own_gelu' kernel's own MSL source)"
    assert read == ["silu_mul.wgsl"]  # the kernel's own source needs no shipped file
    with pytest.raises(KeyError, match="'test_own_gelu' has no WGSL source: its op gives none"):
        gpu_plan.source_for(own, "wgsl", shipped, shipped_text)


def test_check_kernel_source_refuses_a_drifted_constant() -> None:
    good = "const THREADS: u32 = 256u;"
    silu = gpu_plan.SILU_MUL_KERNEL
    gpu_plan.check_kernel_source(silu, good, origin="silu.wgsl")
    with pytest.raises(
        ValueError,
        match=r"silu.wgsl declares THREADS=128, but the launch plan of kernel 'silu_mul' uses "
        r"THREADS=256",
    ):
        gpu_plan.check_kernel_source(silu, "const THREADS: u32 = 128u;", origin="silu.wgsl")
    with pytest.raises(ValueError, match="THREADS=None"):
        gpu_plan.check_kernel_source(silu, "", origin="silu.wgsl")


class _NumpyContext:
    """Records closures over NumPy buffers; ``submit`` runs them (a CPU command context)."""

    def __init__(self) -> None:
        self.recorded: list[Callable[[], None]] = []

    def gemm(self, a: Any, b: Any, out: Any, m: int, n: int, k: int) -> None:
        def run() -> None:
            out[:] = (a.reshape(m, k) @ b.reshape(n, k).T).reshape(-1)

        self.recorded.append(run)

    def copy(self, src: Any, dst: Any, count: int) -> None:
        self.recorded.append(lambda: dst.__setitem__(slice(0, count), src[:count]))

    def silu_mul(self, src: Any, dst: Any, tokens: int, intermediate: int) -> None:
        def run() -> None:
            rows = src.reshape(tokens, 2 * intermediate)
            gate, up = rows[:, :intermediate], rows[:, intermediate:]
            dst[:] = (gate / (np.float32(1.0) + np.exp(-gate)) * up).reshape(-1)

        self.recorded.append(run)

    def rms_norm(self, x: Any, w: Any, out: Any, tokens: int, dim: int, eps: float) -> None:
        def run() -> None:
            rows = x.reshape(tokens, dim)
            inv = np.float32(1.0) / np.sqrt(
                (rows * rows).sum(axis=1, keepdims=True) / dim + np.float32(eps)
            )
            out[:] = (rows * inv * w).reshape(-1)

        self.recorded.append(run)

    def dispatch(self, launch: Launch, buffers: tuple[Any, ...]) -> None:
        """Run the launch's kernel by name, reading its shape from the parameter words."""
        words = launch.words
        kernel = launch.kernel.name
        if kernel == "gemv":
            self.gemm(*buffers, 1, words[0], words[1])
        elif kernel == "gemm":
            self.gemm(*buffers, *words[:3])
        elif kernel == "silu_mul":
            self.silu_mul(*buffers, words[0], words[1])
        elif kernel == "rms_norm":
            eps = struct.unpack("<f", struct.pack("<I", words[2]))[0]
            self.rms_norm(*buffers, words[0], words[1], eps)
        else:
            raise NotImplementedError(kernel)

    def submit(self) -> None:
        for step in self.recorded:
            step()
        self.recorded.clear()

    def wait(self) -> None:
        pass

    def release(self) -> None:
        self.recorded.clear()


class _NumpyDevice:
    limit = 65535

    def new_context(self) -> _NumpyContext:
        return _NumpyContext()

    def upload(self, host: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return np.array(host, dtype=np.float32)

    def filled(self, count: int, value: float) -> npt.NDArray[np.float32]:
        return np.full(count, value, dtype=np.float32)

    def upload_words(self, words: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
        return np.array(words, dtype=np.uint32)

    def read(self, buffer: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return buffer.copy()


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("gemm", {"m": 64, "n": 33, "k": 35}),
        ("gemm", {"m": 1, "n": 3, "k": 5}),
        ("rms-norm", {"tokens": 3, "dim": 33, "eps": 1e-5}),
        ("silu-mul", {"tokens": 3, "intermediate": 257}),
        ("context-lifecycle", {}),
    ],
)
@pytest.mark.parametrize("lifecycle", [True, False])
def test_run_op_records_each_op_on_a_command_device(
    name: str, values: dict[str, Any], lifecycle: bool
) -> None:
    op = get_op(name)
    params = op.params(**values)
    inputs = op.inputs(params, 7)
    expected = resolve("numpy").execute(op, params, inputs, "f32", role="reference").output
    actual = gpu_plan.run_op(_NumpyDevice(), op, params, inputs, lifecycle=lifecycle)
    verdict = diff(expected, actual, max_nmse=1e-7, segments=op.segments(params) or None)
    assert verdict.passed, verdict.reason


def test_run_op_output_starts_as_a_sentinel() -> None:
    """A context that records nothing leaves the sentinel, so the check fails instead of passing on zeros."""

    class Idle(_NumpyContext):
        def submit(self) -> None:
            self.recorded.clear()

    class IdleDevice(_NumpyDevice):
        def new_context(self) -> Idle:
            return Idle()

    op = get_op("silu-mul")
    params = op.params(tokens=1, intermediate=4)
    output = gpu_plan.run_op(IdleDevice(), op, params, op.inputs(params, 1))
    np.testing.assert_array_equal(output, np.full(4, OUTPUT_SENTINEL, np.float32))


def test_gpu_plan_names_no_op() -> None:
    """No op-type or op-name switch is left: gpu_plan knows ops only through Op.raw_launch."""
    import ast
    import inspect

    from diffcheck import ops
    from diffcheck.gpu_plan import _run

    op_classes = {
        name
        for name, value in vars(ops).items()
        if isinstance(value, type) and issubclass(value, ops.Op) and value is not ops.Op
    }
    op_names = set(ops.OPS)
    tree = ast.parse(inspect.getsource(_run))
    named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    named |= {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    literals = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert op_classes, "the op classes were not found"
    assert not named & op_classes
    assert not literals & op_names
