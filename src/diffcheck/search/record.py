"""Between findings and bundles: a finding as bundle data, a bundle's call as an example."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._installed import installed_version
from ..values.call import Outcome
from ..values.compare import host_value
from .bundle import (
    BUNDLE_KIND,
    BUNDLE_VERSION,
    BackendIdentity,
    BlameData,
    BoundData,
    Bundle,
    Call,
    FindingData,
    Output,
    decode_array,
    decode_value,
    encode_array,
    encode_value,
)
from .recipes import Example
from .runner import Finding

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = ["backend_identity", "bundle_of", "example_of", "outputs_of"]


def backend_identity(adapter: Adapter) -> BackendIdentity:
    """The adapter's name, library, library version and device (``unknown`` when unknown)."""
    library, device = adapter.identity()
    found = _distribution_version(library.split(".")[0].replace("_", "-"))
    return BackendIdentity(backend=adapter.spec, library=library, version=found, device=device)


def _distribution_version(name: str) -> str:
    """The installed version of distribution ``name``, or ``unknown`` (read once while the
    import path is unchanged: a search records both sides' identity in each bundle)."""
    return installed_version(name) or "unknown"


def _output(outcome: Outcome) -> Output:
    if outcome.missing is not None:
        return Output(missing=outcome.missing)
    if outcome.raised is not None:
        return Output(raised=outcome.raised)
    value = outcome.value
    tagged = isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)
    several = isinstance(value, tuple) and not tagged
    arrays = []
    for item in value if several else (value,):
        array, dtype = host_value(item)
        arrays.append(encode_array(array, stored_as=dtype if dtype != array.dtype.name else None))
    return Output(arrays=arrays, several=several)


def bundle_of(finding: Finding, reference: Adapter, candidate: Adapter) -> Bundle:
    """The replayable record of ``finding``."""
    verdict, example = finding.verdict, finding.example
    blame = verdict.blame
    bound = verdict.bound
    return Bundle(
        kind=BUNDLE_KIND,
        bundle_version=BUNDLE_VERSION,
        function=finding.function,
        finding=FindingData(
            kind=finding.kind,
            dtype=finding.dtype,
            reason=verdict.reason or "",
            blame=None
            if blame is None
            else BlameData(side=blame.side, evidence=blame.evidence, why=blame.why),
        ),
        bound=BoundData(
            kind=bound.kind,
            ulps=bound.ulps,
            nmse=bound.nmse,
            atol=bound.atol,
            provenance=bound.provenance,
        ),
        call=Call(
            args=[encode_value(a) for a in example.args],
            positional=[encode_value(p) for p in example.positional],
            kwargs={k: encode_value(v) for k, v in example.kwargs.items()},
            dtypes=dict(example.dtypes),
            sequence=example.sequence,
        ),
        reference=backend_identity(reference),
        candidate=backend_identity(candidate),
        outputs={"reference": _output(finding.reference), "candidate": _output(finding.candidate)},
    )


def example_of(bundle: Bundle) -> Example:
    """The bundle's call as an example (every array checked against its size and digest)."""
    call = bundle.call
    return Example(
        tuple(decode_value(v, where=f"argument {i}") for i, v in enumerate(call.args)),
        {k: decode_value(v, where=f"keyword {k}") for k, v in call.kwargs.items()},
        tuple(decode_value(v, where=f"positional {i}") for i, v in enumerate(call.positional)),
        dict(call.dtypes),
        call.sequence,
    )


def outputs_of(output: Output) -> list[Any]:
    """The stored arrays of one side (empty when it was missing or raised)."""
    return [decode_array(a, where="output") for a in output.arrays or []]
