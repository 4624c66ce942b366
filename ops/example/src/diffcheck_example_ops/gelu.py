"""``gelu``: out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation.

Everything an op needs, in one module of a third-party package: the params model, validation
with one-line messages, seeded inputs, the Array-API definition, the output shape, named
segments, default tolerances per precision and a fuzz space, plus a hand-written GPU kernel
of its own (``kernels/gelu.wgsl`` for the ``wgpu`` backend, ``kernels/gelu.metal`` for
``metal``) and the launch that runs it (:meth:`Gelu.raw_launch`). Nothing in diffcheck
changes to add it; the entry point in ``pyproject.toml`` registers it.

Heavy dependencies (none here) belong inside methods, never at module level: diffcheck
imports this module when it first looks up an op.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar, Final

from pydantic import Field

from diffcheck.differ import Segment
from diffcheck.errors import ConfigError
from diffcheck.inputs import offset_seed, random_vec
from diffcheck.launch import Kernel, KernelSource, register_kernel
from diffcheck.ops import HostInputs, Op, OpParams
from diffcheck.precision import PrecisionName

if TYPE_CHECKING:
    from diffcheck.launch import RawLaunch
    from diffcheck.ops.space import OpSpace

__all__ = ["GELU_KERNEL", "THREADS", "Gelu", "GeluParams"]

_I32_MAX = 2**31 - 1
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

#: Threads per workgroup of the kernel (one output element each); both sources declare it.
THREADS: Final = 256


def _source(filename: str) -> str:
    return resources.files(__package__).joinpath("kernels", filename).read_text(encoding="utf-8")


#: The kernel, registered under a name of its own: its sources (read once, at import) travel
#: with it, so the wgpu and metal adapters compile them without knowing this package.
GELU_KERNEL: Final = register_kernel(
    Kernel(
        "example_gelu_tanh",
        {"THREADS": THREADS},
        {
            "wgsl": KernelSource("gelu_f32", _source("gelu.wgsl")),
            "msl": KernelSource("gelu_f32", _source("gelu.metal")),
        },
    )
)


class GeluParams(OpParams):
    tokens: int = Field(4, ge=0, le=2**64 - 1, description="Rows.")
    dim: int = Field(256, ge=0, le=2**64 - 1, description="Columns; the first half is `gate`.")


class Gelu(Op[GeluParams]):
    """GELU of two inputs, judged as two segments.

    ``gate`` is drawn in [-4, 4) (where the curve bends) and ``up`` in [-8, 8) (where the
    tanh saturates), each tokens·dim/2 values; the output is every ``gate`` result, then
    every ``up`` result, viewed as [tokens, dim]. A kernel right on one range and wrong on the
    other fails by the named segment.
    """

    name = "gelu"
    report_name = "gelu_tanh"
    execution_path = "gelu_tanh(x[tokens, dim]) elementwise"
    params_model: ClassVar[type[OpParams]] = GeluParams
    wide_reference_accumulation = True
    # The buckets serve: the curve is smooth and the inputs are O(1). Spelled out to show
    # where an op that needs its own tolerance says so.
    tolerances: ClassVar[Mapping[PrecisionName, float]] = {"f16": 1e-6, "bf16": 1e-4}

    def validate(self, params: GeluParams) -> int:
        if params.tokens == 0 or params.dim == 0:
            raise ConfigError("GELU tokens and dim must be nonzero")
        if params.dim % 2:
            raise ConfigError(f"GELU dim must be even (two halves), not {params.dim}")
        elements = params.tokens * params.dim
        if elements > _I32_MAX:
            raise ConfigError("GELU shape exceeds the kernels' signed 32-bit indexing range")
        return elements

    def output_shape(self, params: GeluParams) -> tuple[int, int]:
        return (params.tokens, params.dim)

    def segments(self, params: GeluParams) -> list[Segment]:
        half = params.tokens * params.dim // 2
        return [Segment("gate", 0, half), Segment("up", half, 2 * half)]

    def inputs(self, params: GeluParams, seed: int) -> HostInputs:
        half = params.tokens * params.dim // 2
        return {
            "gate": random_vec(half, -4.0, 4.0, seed),
            "up": random_vec(half, -8.0, 8.0, offset_seed(seed, 1)),
        }

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: GeluParams, *, accumulate: Any
    ) -> Any:
        storage = arrays["gate"].dtype
        halves = [xp.astype(arrays[name], accumulate) for name in ("gate", "up")]
        out = [
            0.5 * x * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))) for x in halves
        ]
        shape = (params.tokens, params.dim)
        return xp.astype(xp.reshape(xp.stack(out, axis=0), shape), storage)

    def raw_launch(self, params: GeluParams, limit: int) -> RawLaunch:
        """One thread per output element: ``(half_count, total, groups)``, gate, up, out."""
        from diffcheck.launch import Filled, Input, Launch, RawLaunch, split_grid

        total = params.tokens * params.dim
        groups = -(-total // THREADS)
        words = (total // 2, total, groups)
        launch = Launch(GELU_KERNEL, groups, (THREADS, 1), split_grid(groups, limit), words)
        return RawLaunch.kernel(launch, Input("gate"), Input("up"), Filled(total))

    def fuzz_space(self) -> OpSpace:
        """Rows and even widths (odd draws rounded up, and costed so), 256-wide tails."""
        from diffcheck.ops.space import Dim, OpSpace

        def even(values: dict[str, Any]) -> dict[str, Any]:
            values["dim"] += values["dim"] % 2
            return values

        return OpSpace(
            self.name,
            (Dim("tokens"), Dim("dim", (256,))),
            lambda p: 2 * p["tokens"] * (p["dim"] + p["dim"] % 2),
            fix=even,
        )
