"""The report document: schema version 2 (written) and version 1 (still read).

Field for field the reference tool's evidence document, plus ``reference_backend`` (the
reference is selectable), ``segments`` (every segment's own verdict, for localization) and
``environment`` (what was found on the machine). Outputs are stored exactly, so NaN
payloads, -0.0 and infinities survive and a reader can re-derive every metric: v1 as a list
of float32 bit patterns (:class:`OutputBits`, the reference tool's layout), v2 as the base64
of the little-endian float32 bytes with their count and SHA-256 (:class:`OutputArray`, about
9x smaller). v2 differs from v1 only there. A new incompatible layout is a new model with a
new number, never a reused one.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FieldSerializationInfo,
    field_serializer,
    model_serializer,
)

from .._numbers import U64_MAX
from ..config import AnyCheckConfig
from ..differ import Metrics

__all__ = [
    "MODELS",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "CheckResult",
    "CheckResultV2",
    "Environment",
    "MetricsRecord",
    "OutputArray",
    "OutputBits",
    "PrecisionRecord",
    "ReportDocument",
    "ReportDocumentV2",
    "SegmentRecord",
    "Status",
]

#: The schema version new reports are written with.
SCHEMA_VERSION: Literal[2] = 2
#: Every schema version this diffcheck reads (replay, upgrade, sweep --resume).
READABLE_VERSIONS: tuple[int, ...] = (1, 2)

Status = Literal["passed", "failed", "not_run"]
Phase = Literal["initial", "reused_context", "independent_context", "drop_flush"]
U32 = Annotated[int, Field(ge=0, le=2**32 - 1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="strings")


class PrecisionRecord(_Strict):
    """Storage dtypes on each side and what executed the candidate."""

    reference_storage: str = Field(description="Storage of the reference computation (f32).")
    backend_input_storage: str = Field(description="Storage of the candidate's inputs.")
    backend_output_storage: str = Field(
        description="Storage of the candidate's output before widening to f32."
    )
    kernel_entrypoint: str = Field(description="The kernel or definition that executed the op.")


class MetricsRecord(_Strict):
    """What the comparator measured; re-derivable from the stored bits."""

    element_count: int = Field(ge=0, description="Elements compared.")
    nmse: float = Field(
        description="mean((ref-act)^2)/mean(ref^2), or the absolute MSE when uses_absolute_mse."
    )
    max_abs: float = Field(description="Largest |ref-act|.")
    reference_mse: float = Field(description="mean(ref^2) in float64.")
    uses_absolute_mse: bool = Field(
        description="True when reference_mse < 1e-30 and NMSE is the absolute MSE."
    )
    max_abs_index: int = Field(
        ge=0, description="Flat index of the first largest |ref-act| (within the compared range)."
    )
    max_ulp: int = Field(ge=0, description="Largest float32 ULP distance between paired elements.")

    @classmethod
    def of(cls, metrics: Metrics | None) -> MetricsRecord | None:
        if metrics is None:
            return None
        return cls(**metrics.__dict__)


class OutputBits(_Strict):
    """An output as exact IEEE-754 float32 bit patterns (row-major, flattened)."""

    f32_bits: list[U32] = Field(description="uint32 bit patterns, one per element.")


class OutputArray(_Strict):
    """An output as the exact little-endian bytes of its float32 values (schema v2).

    A reader checks ``nbytes`` against ``element_count``, the base64 length against
    ``nbytes`` and the bytes against ``sha256`` before it uses any of them.
    """

    dtype: Literal["float32"] = Field(description="Element type of the stored bytes.")
    element_count: int = Field(ge=0, description="Elements stored (row-major, flattened).")
    nbytes: int = Field(ge=0, description="Bytes stored: 4 per element.")
    sha256: str = Field(
        pattern="^[0-9a-f]{64}$", description="SHA-256 of the bytes, lower-case hex."
    )
    base64: str = Field(description="The bytes, standard base64 with padding.")

    @field_serializer("base64", when_used="json")
    def _spliced(self, value: str, info: FieldSerializationInfo) -> str:
        # While a report is written, the (large) text is left out of the serialized JSON and
        # written from its own buffer instead: see ReportDocument.to_json_parts.
        splice = info.context.get(_SPLICE) if isinstance(info.context, dict) else None
        if splice is None:
            return value
        marker: str = splice["marker"]
        splice["values"].append(value)
        return marker


_SPLICE = "diffcheck.splice"


class SegmentRecord(_Strict):
    """One segment's own verdict."""

    name: str = Field(description="Segment (phase) wire name.")
    start: int = Field(ge=0, description="First flat index of the segment.")
    stop: int = Field(ge=0, description="One past the last flat index.")
    status: Literal["passed", "failed"]
    reason: str | None = None
    metrics: MetricsRecord | None = None


class CheckResult(_Strict):
    """The required check's result (the reference tool's RequiredReport, generalized)."""

    schema_version: Literal[1] = 1
    op: str = Field(
        description="Report op name (rms_norm, gemm, fused_silu_mul, context_lifecycle)."
    )
    backend: str = Field(description="The required candidate backend.")
    seed: int = Field(ge=0, le=U64_MAX)
    tolerance: float | None = Field(description="The NMSE tolerance, or null if it was not finite.")
    tolerance_f64_bits: int = Field(
        ge=0, le=U64_MAX, description="Raw bits of the tolerance as submitted."
    )
    status: Status
    reason: str | None = Field(description="Null only when passed.")
    reference: OutputBits | None
    actual: OutputBits | None
    metrics: MetricsRecord | None = Field(
        description="Aggregate metrics; kept on a numerical failure."
    )


class Environment(_Strict):
    """Where the check ran and what the probes found."""

    diffcheck_version: str
    python: str
    platform: str
    reference_detail: str = ""
    candidate_detail: str = ""


_OMITTED_WHEN_NULL = ("submission_phases", "submission_metrics", "segments")


class ReportDocument(_Strict):
    """A complete or incomplete evidence record of one check."""

    schema_version: Literal[1] = 1
    config: AnyCheckConfig
    reference_backend: str = Field(description="The backend whose output is the reference.")
    output_shape: tuple[int, int]
    expected_output_elements: int = Field(ge=1)
    configured_precision: PrecisionRecord
    executed_precision: PrecisionRecord | None = Field(
        description="Set only when the candidate returned output."
    )
    execution_path: str
    coverage: str
    submission_phases: list[Phase] | None = Field(
        default=None, description="The lifecycle's phases in order; omitted for other ops."
    )
    submission_metrics: list[MetricsRecord] | None = Field(
        default=None, description="Per-phase metrics, present only when every phase passed."
    )
    segments: list[SegmentRecord] | None = Field(
        default=None, description="Every segment's own verdict, when segments were judged."
    )
    environment: Environment
    started_at: str
    completed: bool
    finished_at: str | None
    execution_elapsed_ms: float | None = Field(
        description="Probe, reference, candidate, comparison and binding; not a kernel benchmark."
    )
    result: CheckResult | None

    def __bool__(self) -> bool:
        """True only for a passed check that is not a self-test (``assert diffcheck.run(...)``).

        A failed, not_run or incomplete report is false, and so is a self-test: a backend
        compared with itself is a test of the machinery, never a pass of the backend.
        """
        passed = self.result is not None and self.result.status == "passed"
        return passed and "SELF-TEST:" not in self.coverage

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in _OMITTED_WHEN_NULL:
            if data.get(key) is None:
                data.pop(key, None)
        return data

    def to_json(self) -> bytes:
        """Pretty JSON (2-space indent) with a trailing newline, as the reference tool writes."""
        return b"".join(self.to_json_parts())

    def to_json_parts(self) -> list[bytes]:
        """:meth:`to_json` as pieces whose concatenation it is, for a writer to write in turn.

        The outputs' base64 texts (all but a few bytes of a large report) are not copied
        into one document: the JSON is serialized with a random marker in their place and
        each marker replaced by the text's own ASCII bytes (base64 needs no JSON escaping).
        """
        marker = f"dc-splice-{secrets.token_hex(16)}"
        splice: dict[str, Any] = {"marker": marker, "values": []}
        skeleton: bytes = self.__pydantic_serializer__.to_json(
            self, indent=2, context={_SPLICE: splice}
        )
        quoted = f'"{marker}"'.encode()
        pieces = skeleton.split(quoted)
        values: list[str] = splice["values"]
        if len(pieces) != len(values) + 1:  # the marker is random: this cannot happen
            raise ValueError("report serialization lost track of its output texts")
        parts = [pieces[0]]
        for value, piece in zip(values, pieces[1:], strict=True):
            parts += [b'"', value.encode("ascii"), b'"', piece]
        parts.append(b"\n")
        return parts


# v2 changes only how outputs are stored; the overriding fields keep their places.
class CheckResultV2(CheckResult):
    """The result of a schema v2 report: outputs as :class:`OutputArray`."""

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    reference: OutputArray | None  # type: ignore[assignment]
    actual: OutputArray | None  # type: ignore[assignment]


class ReportDocumentV2(ReportDocument):
    """A complete or incomplete evidence record of one check, schema v2 (the written one)."""

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    result: CheckResultV2 | None


#: The model of each readable schema version.
MODELS: dict[int, type[ReportDocument]] = {1: ReportDocument, 2: ReportDocumentV2}
