"""The report document: schema version 3 (written), versions 2 and 1 (still read).

Field for field the reference tool's evidence document, plus ``reference_backend`` (the
reference is selectable), ``segments`` (every segment's own verdict, for localization) and
``environment`` (what was found on the machine). Outputs are stored exactly, so NaN
payloads, -0.0 and infinities survive and a reader can re-derive every metric: v1 as a list
of float32 bit patterns (:class:`OutputBits`, the reference tool's layout), v2 as the base64
of the little-endian float32 bytes with their count and SHA-256 (:class:`OutputArray`, about
9x smaller). v2 differs from v1 only there. v3 adds ``computed_by`` (:class:`ComputedBy`):
the library that actually computed each side, read off the arrays each returned, and the
independence probe's two sums. A new incompatible layout is a new model with a new number,
never a reused one.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    FieldSerializationInfo,
    PrivateAttr,
    field_serializer,
)

from .._numbers import U64_MAX
from ..config import AnyCheckConfig
from ..differ import Metrics
from ._fields import (
    BOUND,
    CLAIMED,
    DERIVED,
    U32,
    JsonFloat,
    Phase,
    Status,
    Strict,
    Version1,
    Version2,
    Version3,
    Version4,
    json_pair,
)
from .computed_by import ComputedBy, ComputedByV4, LibraryRecord, ProbeRecord, ProbeRecordV4
from .floor_record import FloorRecord
from .line import Where, document_line

__all__ = [
    "BOUND",
    "CLAIMED",
    "DERIVED",
    "MODELS",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "CheckResult",
    "CheckResultV2",
    "CheckResultV3",
    "CheckResultV4",
    "ComputedBy",
    "ComputedByV4",
    "Environment",
    "JsonFloat",
    "LibraryRecord",
    "MetricsRecord",
    "OutputArray",
    "OutputBits",
    "PrecisionRecord",
    "ProbeRecord",
    "ProbeRecordV4",
    "ReportDocument",
    "ReportDocumentV2",
    "ReportDocumentV3",
    "ReportDocumentV4",
    "SegmentRecord",
    "Status",
    "Version1",
    "Version2",
    "Version3",
    "Version4",
]

#: The schema version new reports are written with.
SCHEMA_VERSION: Literal[4] = 4
#: Every schema version this diffcheck reads (replay, upgrade, sweep --resume).
READABLE_VERSIONS: tuple[int, ...] = (1, 2, 3, 4)


class PrecisionRecord(Strict):
    """Storage dtypes on each side and what executed the candidate.

    As ``configured_precision`` the storages follow from ``config.precision`` (derived); as
    ``executed_precision`` they are what the candidate reported (bound: the verdict fails an
    execution whose storage is not the configured one, and the stored candidate output must
    be representable in the output storage). The entrypoint is a label (claimed).
    """

    reference_storage: str = Field(
        description=DERIVED + "Storage of the reference computation: f32 (replay recomputes "
        "the reference and takes its storage)."
    )
    backend_input_storage: str = Field(
        description=DERIVED + "Storage of the candidate's inputs; configured: config.precision. "
        "Executed: bound (a storage other than the configured one fails the check)."
    )
    backend_output_storage: str = Field(
        description=DERIVED + "Storage of the candidate's output before widening to f32; "
        "configured: config.precision. Executed: bound (it must be the configured storage and "
        "every stored candidate value must be representable in it)."
    )
    kernel_entrypoint: str = Field(
        description=CLAIMED + "The kernel or definition that executed the op."
    )


class MetricsRecord(Strict):
    """What the comparator measured; re-derivable from the stored bits."""

    element_count: int = Field(ge=0, description=DERIVED + "Elements compared.")
    nmse: JsonFloat = Field(
        description=DERIVED
        + "mean((ref-act)^2)/mean(ref^2), or the absolute MSE when uses_absolute_mse."
    )
    max_abs: JsonFloat = Field(description=DERIVED + "Largest |ref-act|.")
    reference_mse: JsonFloat = Field(description=DERIVED + "mean(ref^2) in float64.")
    uses_absolute_mse: bool = Field(
        description=DERIVED + "True when reference_mse < 1e-30 and NMSE is the absolute MSE."
    )
    max_abs_index: int = Field(
        ge=0,
        description=DERIVED
        + "Flat index of the first largest |ref-act| (within the compared range).",
    )
    max_ulp: int = Field(
        ge=0, description=DERIVED + "Largest float32 ULP distance between paired elements."
    )

    @classmethod
    def of(cls, metrics: Metrics | None) -> MetricsRecord | None:
        if metrics is None:
            return None
        return cls(**metrics.__dict__)


class OutputBits(Strict):
    """An output as exact IEEE-754 float32 bit patterns (row-major, flattened)."""

    f32_bits: list[U32] = Field(
        description=BOUND + "uint32 bit patterns, one per element; the count must be the "
        "config's element count."
    )


class OutputArray(Strict):
    """An output as the exact little-endian bytes of its float32 values (schema v2).

    A reader checks ``nbytes`` against ``element_count``, the base64 length against
    ``nbytes`` and the bytes against ``sha256`` before it uses any of them.
    """

    dtype: Literal["float32"] = Field(description=BOUND + "Element type of the stored bytes.")
    element_count: int = Field(
        ge=0, description=BOUND + "Elements stored (row-major, flattened); checked against nbytes."
    )
    nbytes: int = Field(
        ge=0, description=BOUND + "Bytes stored: 4 per element; checked against the bytes."
    )
    sha256: str = Field(
        pattern="^[0-9a-f]{64}$",
        description=BOUND + "SHA-256 of the bytes, lower-case hex; checked against the bytes.",
    )
    base64: str = Field(description=BOUND + "The bytes, standard base64 with padding.")

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


class SegmentRecord(Strict):
    """One segment's own verdict."""

    name: str = Field(description=DERIVED + "Segment (phase) wire name, from the op.")
    start: int = Field(ge=0, description=DERIVED + "First flat index of the segment.")
    stop: int = Field(ge=0, description=DERIVED + "One past the last flat index.")
    status: Literal["passed", "failed"] = Field(description=DERIVED + "The segment's own verdict.")
    reason: str | None = Field(default=None, description=DERIVED + "Why it failed; null if passed.")
    metrics: MetricsRecord | None = Field(
        default=None, description=DERIVED + "The segment's metrics, when it was measured."
    )


_REFERENCE = (
    "Derived: replay regenerates the inputs from config with the op's generator and "
    "recomputes the reference with reference_backend; these bits must equal the "
    "recomputation (bit-exact, or within 1 float32 ULP per element where the reference "
    "accumulates in float64 through BLAS)."
)
_ACTUAL = (
    "Bound: the candidate's output; its size and digest are checked, every value must be "
    "representable in the executed output storage, the verdict is re-derived from it, and "
    "`replay --rerun` re-runs the candidate to see whether these bits reproduce."
)


class CheckResult(Strict):
    """The required check's result (the reference tool's RequiredReport, generalized)."""

    schema_version: Version1 = Field(
        default=1, description=DERIVED + "The document's schema version."
    )
    op: str = Field(
        description=DERIVED
        + "Report op name (rms_norm, gemm, fused_silu_mul, context_lifecycle), from config.op."
    )
    backend: str = Field(
        description=DERIVED + "The required candidate backend, from config.require_backend."
    )
    seed: int = Field(ge=0, le=U64_MAX, description=DERIVED + "The input seed, from config.seed.")
    tolerance: JsonFloat | None = Field(
        description=DERIVED + "The NMSE tolerance (config.max_nmse), or null if it was not finite."
    )
    tolerance_f64_bits: int = Field(
        ge=0, le=U64_MAX, description=DERIVED + "Raw bits of the tolerance as submitted."
    )
    status: Status = Field(
        description=DERIVED + "passed, failed or not_run; re-derived from the outputs."
    )
    reason: str | None = Field(description=DERIVED + "Why it did not pass; null only when passed.")
    reference: OutputBits | None = Field(description=_REFERENCE)
    actual: OutputBits | None = Field(description=_ACTUAL)
    metrics: MetricsRecord | None = Field(
        description=DERIVED + "Aggregate metrics; kept on a numerical failure."
    )


class Environment(Strict):
    """Where the check ran and what the probes found: provenance, never evidence."""

    diffcheck_version: str = Field(description=CLAIMED + "diffcheck version that ran the check.")
    python: str = Field(description=CLAIMED + "Python version that ran the check.")
    platform: str = Field(description=CLAIMED + "The machine's platform string.")
    reference_detail: str = Field(
        default="", description=CLAIMED + "What the reference backend's probe found."
    )
    candidate_detail: str = Field(
        default="", description=CLAIMED + "What the candidate backend's probe found."
    )


def _absent(value: object) -> bool:
    return value is None


class ReportDocument(Strict):
    """A complete or incomplete evidence record of one check."""

    schema_version: Version1 = Field(
        default=1, description=BOUND + "Schema version; selects the model the file is read with."
    )
    config: AnyCheckConfig = Field(
        description=BOUND + "The check's definition (op, params, precision, seed, tolerance, "
        "candidate): replay regenerates the inputs and recomputes the reference from it, and "
        "every derived field follows from it."
    )
    reference_backend: str = Field(
        description=BOUND + "The backend whose output is the reference: it must resolve here "
        "and recompute the stored reference bits (another backend that computes the same "
        "bits is the same reference); when it is the candidate's own backend the report is "
        "a self-test, which never counts as a pass."
    )
    output_shape: Annotated[tuple[int, int], BeforeValidator(json_pair)] = Field(
        description=DERIVED + "The op's output shape for the config's params."
    )
    expected_output_elements: int = Field(
        ge=1, description=DERIVED + "Elements the output must have, from the config's params."
    )
    configured_precision: PrecisionRecord = Field(
        description=DERIVED + "Storages that config.precision implies (the entrypoint is claimed)."
    )
    executed_precision: PrecisionRecord | None = Field(
        description=BOUND + "What the candidate reported it executed; set only when the "
        "candidate returned output."
    )
    execution_path: str = Field(description=CLAIMED + "What the candidate says it executed.")
    coverage: str = Field(
        description=DERIVED + "What a pass covers, from the op, how the lifecycle ran and "
        "whether the pair is a self-test."
    )
    submission_phases: list[Phase] | None = Field(
        default=None,
        exclude_if=_absent,
        description=DERIVED + "The lifecycle's phases in order; omitted for other ops.",
    )
    submission_metrics: list[MetricsRecord] | None = Field(
        default=None,
        exclude_if=_absent,
        description=DERIVED + "Per-phase metrics, present only when every phase passed.",
    )
    segments: list[SegmentRecord] | None = Field(
        default=None,
        exclude_if=_absent,
        description=DERIVED + "Every segment's own verdict, when segments were judged.",
    )
    environment: Environment = Field(description=CLAIMED + "Where the check ran.")
    started_at: str = Field(description=CLAIMED + "When the check started (ISO 8601, UTC).")
    completed: bool = Field(
        description=BOUND + "False while the check runs; an incomplete record is not evidence."
    )
    finished_at: str | None = Field(description=CLAIMED + "When the check finished.")
    execution_elapsed_ms: JsonFloat | None = Field(
        description=CLAIMED
        + "Probe, reference, candidate, comparison and binding; not a kernel benchmark."
    )
    result: CheckResult | None = Field(
        description=DERIVED + "The check's result; null while the check runs."
    )

    #: Where the document was written or read (not a field: never stored or compared).
    _where: Where = PrivateAttr(default_factory=Where)

    def __repr__(self) -> str:
        """One line (:mod:`diffcheck.report.line`): a REPL shows what ran and how it came out."""
        return f"<{type(self).__name__} {document_line(self)}>"

    def __str__(self) -> str:
        return document_line(self)

    def __bool__(self) -> bool:
        """True only for a passed check that is not a self-test (``assert diffcheck.run(...)``).

        A failed, not_run or incomplete report is false, and so is a self-test: a backend
        compared with itself is a test of the machinery, never a pass of the backend. The
        pair decides, as replay does; the coverage sentence is a second sign.
        """
        from .bounds import is_self_test

        if not (self.completed and self.result is not None and self.result.status == "passed"):
            return False
        paired, _ = is_self_test(self.result.backend, self.reference_backend)
        return not paired and "SELF-TEST:" not in self.coverage and not self.one_library

    @property
    def one_library(self) -> bool:
        """Whether both sides' arrays came from one library (``computed_by``, v3): a pair
        that is not independent, which counts like a self-test, never as a pass."""
        computed_by: ComputedBy | None = getattr(self, "computed_by", None)
        return computed_by is not None and computed_by.one_library

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

    schema_version: Version2 = Field(  # type: ignore[assignment]
        default=2, description=DERIVED + "The document's schema version."
    )
    reference: OutputArray | None = Field(description=_REFERENCE)  # type: ignore[assignment]
    actual: OutputArray | None = Field(description=_ACTUAL)  # type: ignore[assignment]


class ReportDocumentV2(ReportDocument):
    """A complete or incomplete evidence record of one check, schema v2 (the written one)."""

    schema_version: Version2 = Field(  # type: ignore[assignment]
        default=2, description=BOUND + "Schema version; selects the model the file is read with."
    )
    result: CheckResultV2 | None = Field(
        description=DERIVED + "The check's result; null while the check runs."
    )


class CheckResultV3(CheckResultV2):
    """The result of a schema v3 report (as v2; the version moves with the document)."""

    schema_version: Version3 = Field(  # type: ignore[assignment]
        default=3, description=DERIVED + "The document's schema version."
    )


class ReportDocumentV3(ReportDocumentV2):
    """A complete or incomplete evidence record of one check, schema v3 (the written one):
    v2 and which library computed each side (``computed_by``)."""

    schema_version: Version3 = Field(  # type: ignore[assignment]
        default=3, description=BOUND + "Schema version; selects the model the file is read with."
    )
    result: CheckResultV3 | None = Field(
        description=DERIVED + "The check's result; null while the check runs."
    )
    computed_by: ComputedBy | None = Field(
        default=None,
        description=CLAIMED + "Which library computed each side (read off the arrays each "
        "returned) and the independence probe; null until both sides ran to an output (and "
        "in a report upgraded from v2, which never recorded it: replay says so). Both "
        "sides from one module counts like a self-test, never a pass. Replay binds the "
        "reference's module to its recomputation, and under --rerun the candidate's.",
    )


class CheckResultV4(CheckResultV3):
    """The result of a schema v4 report: v3 and the precision floor (``floor``)."""

    schema_version: Version4 = Field(  # type: ignore[assignment]
        default=4, description=DERIVED + "The document's schema version."
    )
    floor: FloorRecord | None = Field(
        default=None,
        description=DERIVED + "The precision floor (docs/precision-floor.md): the candidate's "
        "NMSE against the float64 truth beside what an honest implementation at "
        "config.precision errs by, the derived tolerance and, on a failure, the twins. Null "
        "when the outputs were not compared (nothing ran, or a count differs), and in a "
        "report upgraded from v3, which replay then judges without a floor and says so.",
    )


class ReportDocumentV4(ReportDocumentV3):
    """A complete or incomplete evidence record of one check, schema v4 (the written one):
    v3 and the precision floor (``result.floor``)."""

    schema_version: Version4 = Field(  # type: ignore[assignment]
        default=4, description=BOUND + "Schema version; selects the model the file is read with."
    )
    result: CheckResultV4 | None = Field(
        description=DERIVED + "The check's result; null while the check runs."
    )
    computed_by: ComputedByV4 | None = Field(
        default=None,
        description=CLAIMED + "Which library computed each side (read off the arrays each "
        "returned) and the independence probes (a sum, exp and a matmul); null until both "
        "sides ran to an output (and in a report upgraded from v2, which never recorded it: "
        "replay says so). Both sides from one module counts like a self-test, never a pass. "
        "Replay binds the reference's module and probes to its recomputation, and under "
        "--rerun the candidate's.",
    )


#: The model of each readable schema version.
MODELS: dict[int, type[ReportDocument]] = {
    1: ReportDocument,
    2: ReportDocumentV2,
    3: ReportDocumentV3,
    4: ReportDocumentV4,
}
