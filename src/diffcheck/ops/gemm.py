"""``gemm``: C[m, n] = A[m, k] · B[n, k]ᵀ, all row-major."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from .._numbers import U64_MAX
from ..inputs import offset_seed, random_vec
from ._base import HostInputs, Op, OpParams
from ._limits import check_gemm

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["Gemm", "GemmParams"]


class GemmParams(OpParams):
    m: int = Field(64, ge=0, le=U64_MAX, description="Rows of A and C.")
    n: int = Field(32, ge=0, le=U64_MAX, description="Rows of B; columns of C.")
    k: int = Field(32, ge=0, le=U64_MAX, description="The reduced dimension.")


class Gemm(Op[GemmParams]):
    name = "gemm"
    report_name = "gemm"
    execution_path = "gemm(a[m, k], b[n, k]) = a @ b.T"
    params_model: ClassVar[type[OpParams]] = GemmParams
    # The reference tool's CPU GEMM accumulates in f64 and rounds once to f32.
    wide_reference_accumulation = True

    def validate(self, params: GemmParams) -> int:
        return check_gemm(params.m, params.n, params.k)

    def output_shape(self, params: GemmParams) -> tuple[int, int]:
        return (params.m, params.n)

    def inputs(self, params: GemmParams, seed: int) -> HostInputs:
        return {
            "a": random_vec(params.m * params.k, -1.0, 1.0, seed),
            "b": random_vec(params.n * params.k, -1.0, 1.0, offset_seed(seed, 1)),
        }

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: GemmParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["a"].dtype
        a = xp.reshape(xp.astype(arrays["a"], accumulate), (params.m, params.k))
        b = xp.reshape(xp.astype(arrays["b"], accumulate), (params.n, params.k))
        return xp.astype(xp.matmul(a, xp.matrix_transpose(b)), storage)

    def raw_launch(self, params: GemmParams, limit: int) -> RawLaunch:
        from ..launch import Filled, Input, RawLaunch, plan_gemm

        p = params
        launch = plan_gemm(p.m, p.n, p.k, limit=limit)
        return RawLaunch.kernel(launch, Input("a"), Input("b"), Filled(p.m * p.n))

    def fuzz_space(self) -> OpSpace:
        """m, n and k, each over the tails of the GEMM tiles (and GEMV's when m == 1)."""
        from ..launch import GEMM_TILE_K, GEMM_TILE_M, GEMM_TILE_N, GEMV_LANES, GEMV_ROWS
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            # m == 1 takes the GEMV kernel (GEMV_ROWS outputs per workgroup, GEMV_LANES over k).
            (
                Dim("m", (GEMM_TILE_M,)),
                Dim("n", (GEMM_TILE_N, GEMV_ROWS)),
                Dim("k", (GEMM_TILE_K, GEMV_LANES)),
            ),
            lambda p: p["m"] * p["k"] + p["n"] * p["k"] + p["m"] * p["n"],
        )
