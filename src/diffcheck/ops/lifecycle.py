"""``context-lifecycle`` (alias ``metal-context``): compute -> copy -> compute under four submissions.

Each segment is a dependent chain: GEMM (m = tokens, n = 2·intermediate, k) into ``product``,
a buffer-to-buffer copy of ``product`` into ``copied``, then SiLU-mul from ``copied`` into
``output``. The four segments run under the submission phases of :mod:`diffcheck.programs`
on backends with command contexts; the reference (and any plain Array-API backend) computes
them as four independent chains. Each phase is judged on its own.

A candidate without command contexts runs four independent chains too, and its report says
so: its segments are named ``chain0``..``chain3`` (the same ranges as the phases), its
coverage is :data:`CHAIN_COVERAGE`, and it has no ``submission_phases`` (a reader finds the
segment names with ``segments(params, independent_chains=True)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from pydantic import Field

from .._numbers import I64_MAX, U64_MAX
from ..differ import Segment
from ..inputs import offset_seed, random_vec
from ..launch.raw import UNWRITTEN
from ._base import HostInputs, Op, OpParams
from ._limits import check_gemm, check_silu_mul, checked_mul, require
from .silu_mul import silu_mul

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = [
    "CHAIN_COVERAGE",
    "CHAIN_LABELS",
    "CHAIN_NAMES",
    "COPIED_SENTINEL",
    "OUTPUT_SENTINEL",
    "PHASES",
    "PHASE_LABELS",
    "PRODUCT_SENTINEL",
    "ContextLifecycle",
    "ContextLifecycleParams",
]

PHASES: Final = ("initial", "reused_context", "independent_context", "drop_flush")
PHASE_LABELS: Final = ("Initial", "ReusedContext", "IndependentContext", "DropFlush")
#: The segments of a lifecycle run as four independent chains (no command contexts).
CHAIN_NAMES: Final = ("chain0", "chain1", "chain2", "chain3")
CHAIN_LABELS: Final = ("Chain0", "Chain1", "Chain2", "Chain3")
CHAIN_COVERAGE: Final = (
    "Four independent gemm -> copy -> silu-mul chains computed through the backend's array "
    "namespace, each from its phase's seeded inputs. No command contexts: no submission, "
    "context reuse, independent context or release without a wait was exercised. Excludes "
    "other kernels, production dispatch and performance."
)

# Distinct finite fills, so a skipped compute or copy step is a numerical failure, not zeros.
PRODUCT_SENTINEL: Final = 11.0
COPIED_SENTINEL: Final = -7.0
OUTPUT_SENTINEL: Final = UNWRITTEN


class ContextLifecycleParams(OpParams):
    tokens: int = Field(3, ge=0, le=U64_MAX, description="GEMM m and SiLU rows.")
    intermediate: int = Field(
        33, ge=0, le=U64_MAX, description="SiLU width; the GEMM n is twice this."
    )
    k: int = Field(35, ge=0, le=U64_MAX, description="GEMM reduced dimension.")


class ContextLifecycle(Op[ContextLifecycleParams]):
    name = "context-lifecycle"
    aliases = ("metal-context",)
    report_name = "context_lifecycle"
    execution_path = (
        "CommandContext compute/copy/compute (gemm -> copy -> silu_mul) under 4 submission phases"
    )
    coverage = (
        "Compute/copy/compute command sequences: initial, reused-context and independent-context "
        "submissions and data read after a context is released without an explicit wait. Release "
        "exposes no driver status. Excludes other kernels, production dispatch and performance."
    )
    params_model: ClassVar[type[OpParams]] = ContextLifecycleParams
    wide_reference_accumulation = True
    segment_names = PHASES
    segment_labels = PHASE_LABELS

    def segments(
        self, params: ContextLifecycleParams, *, independent_chains: bool = False
    ) -> list[Segment]:
        """The four phases' ranges, named after the phases, or ``chain0``..``chain3``.

        Parameters
        ----------
        params
            The lifecycle's parameters.
        independent_chains
            True when the candidate ran four independent chains instead of submission phases.
        """
        phases = super().segments(params)
        if not independent_chains:
            return phases
        return [
            Segment(name, s.start, s.stop, label)
            for s, name, label in zip(phases, CHAIN_NAMES, CHAIN_LABELS, strict=True)
        ]

    def segment_len(self, params: ContextLifecycleParams) -> int:
        """Elements of one phase's output (tokens·intermediate), after validation."""
        self.validate(params)
        return params.tokens * params.intermediate

    def validate(self, params: ContextLifecycleParams) -> int:
        tokens, intermediate = params.tokens, params.intermediate
        width = checked_mul(intermediate, 2, "context GEMM width overflow")
        check_gemm(tokens, width, params.k)
        segment = check_silu_mul(tokens, intermediate)
        elements = checked_mul(segment, 4, "context output element count overflow")
        size = checked_mul(elements, 4, "context output byte size overflow")
        require(size <= I64_MAX, "context output exceeds host indexing range")
        return elements

    def output_shape(self, params: ContextLifecycleParams) -> tuple[int, int]:
        return (len(PHASES), params.tokens * params.intermediate)

    def inputs(self, params: ContextLifecycleParams, seed: int) -> HostInputs:
        arrays: HostInputs = {}
        for phase in range(len(PHASES)):
            phase_seed = offset_seed(seed, 2 * phase)
            arrays[f"a{phase}"] = random_vec(params.tokens * params.k, -0.5, 0.5, phase_seed)
            arrays[f"b{phase}"] = random_vec(
                2 * params.intermediate * params.k, -0.5, 0.5, offset_seed(phase_seed, 1)
            )
        return arrays

    def compute(
        self, xp: Any, arrays: dict[str, Any], params: ContextLifecycleParams, *, accumulate: Any
    ) -> Any:
        tokens, width, k = params.tokens, 2 * params.intermediate, params.k
        outputs = []
        for phase in range(len(PHASES)):
            storage = arrays[f"a{phase}"].dtype
            a = xp.reshape(xp.astype(arrays[f"a{phase}"], accumulate), (tokens, k))
            b = xp.reshape(xp.astype(arrays[f"b{phase}"], accumulate), (width, k))
            product = xp.astype(xp.matmul(a, xp.matrix_transpose(b)), storage)
            # The copy step is the identity on values; SiLU-mul reads the copy in float32.
            copied = xp.astype(product, xp.float32)
            out = silu_mul(xp, copied, tokens, params.intermediate)
            outputs.append(xp.reshape(xp.astype(out, storage), (tokens * params.intermediate,)))
        return xp.stack(outputs, axis=0)

    def raw_launch(self, params: ContextLifecycleParams, limit: int) -> RawLaunch:
        """gemm -> copy -> silu-mul per phase, each from its phase's inputs, into sentinel buffers."""
        from ..launch import (
            Chain,
            Copy,
            Dispatch,
            Filled,
            Input,
            RawLaunch,
            plan_gemm,
            plan_silu_mul,
        )

        p = params
        width = 2 * p.intermediate
        gemm = Dispatch(plan_gemm(p.tokens, width, p.k, limit=limit), ("a", "b", "product"))
        copy = Copy("product", "copied", p.tokens * width)
        silu = Dispatch(plan_silu_mul(p.tokens, p.intermediate, limit=limit), ("copied", "output"))
        chains = tuple(
            Chain(
                {
                    "a": Input(f"a{phase}"),
                    "b": Input(f"b{phase}"),
                    "product": Filled(p.tokens * width, PRODUCT_SENTINEL),
                    "copied": Filled(p.tokens * width, COPIED_SENTINEL),
                    "output": Filled(p.tokens * p.intermediate, OUTPUT_SENTINEL),
                },
                (gemm, copy, silu),
                "output",
            )
            for phase in range(len(PHASES))
        )
        return RawLaunch(chains, lifecycle=True)

    def fuzz_space(self) -> OpSpace:
        """Tokens, intermediate width and k over the tails of the GEMM and elementwise tiles."""
        from ..launch import ELEMENTWISE_THREADS, GEMM_TILE_K, GEMM_TILE_M, GEMM_TILE_N
        from .space import Dim, OpSpace

        return OpSpace(
            self.name,
            (
                Dim("tokens", (GEMM_TILE_M,)),
                # The lifecycle's GEMM n is 2·intermediate: its column tile covers half as many.
                Dim("intermediate", (GEMM_TILE_N // 2, ELEMENTWISE_THREADS)),
                Dim("k", (GEMM_TILE_K,)),
            ),
            _lifecycle_size,
        )


def _lifecycle_size(p: Mapping[str, int]) -> int:
    tokens, intermediate, k = p["tokens"], p["intermediate"], p["k"]
    # Four phases, each A[tokens, k] and B[2·intermediate, k] in, [tokens, intermediate] out.
    return 4 * (tokens * k + 2 * intermediate * k + tokens * intermediate)
