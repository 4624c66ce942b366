"""The runner's identity of a check: both fingerprints, and the probe only where it can tell.

``identify`` skips the probe when both sides are already one library, runs it on both sides
otherwise, and keeps its probes only when both sides gave a float32's four bytes for the
sum: a namespace that cannot sum (None) or that returns something else leaves the probe
"did not run", never an exception and never a half-recorded pair.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from diffcheck.provenance import Fingerprint, ProbeBits
from diffcheck.runner import identity
from diffcheck.runner.identity import Identity, identify

NUMPY = Fingerprint("numpy", "2.0", "numpy.ndarray", None, "array_api_compat.numpy")
TORCH = Fingerprint("torch", "2.0", "torch.Tensor", None, "array_api_compat.torch")
REFERENCE, CANDIDATE = object(), object()


def _probe(
    monkeypatch: pytest.MonkeyPatch, reference: bytes | None, candidate: bytes | None
) -> list[Any]:
    """Make the probe return ``reference``/``candidate`` per side; return the adapters asked."""
    asked: list[Any] = []

    def probe_bits(adapter: Any) -> ProbeBits | None:
        asked.append(adapter)
        found = reference if adapter is REFERENCE else candidate
        return None if found is None else ProbeBits(found, b"exp", b"matmul")

    monkeypatch.setattr(identity, "probe_bits", probe_bits)
    return asked


def _identify(reference: Fingerprint | None, candidate: Fingerprint | None) -> Identity:
    ours, theirs = SimpleNamespace(computed_by=reference), SimpleNamespace(computed_by=candidate)
    return identify(REFERENCE, CANDIDATE, ours, theirs)  # type: ignore[arg-type]


def test_one_library_is_not_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _probe(monkeypatch, b"\x01\x02\x03\x04", b"\x01\x02\x03\x04")
    assert _identify(NUMPY, NUMPY) == Identity(NUMPY, NUMPY, None)
    assert asked == []


@pytest.mark.parametrize(
    ("reference", "candidate"), [(NUMPY, TORCH), (NUMPY, None), (None, TORCH), (None, None)]
)
def test_two_libraries_or_an_unknown_side_are_probed_on_both_sides(
    monkeypatch: pytest.MonkeyPatch, reference: Fingerprint | None, candidate: Fingerprint | None
) -> None:
    asked = _probe(monkeypatch, b"\x01\x02\x03\x04", b"\x05\x06\x07\x08")
    found = _identify(reference, candidate)
    assert found == Identity(
        reference,
        candidate,
        (
            ProbeBits(b"\x01\x02\x03\x04", b"exp", b"matmul"),
            ProbeBits(b"\x05\x06\x07\x08", b"exp", b"matmul"),
        ),
    )
    assert asked == [REFERENCE, CANDIDATE]


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (None, b"\x05\x06\x07\x08"),  # the reference's namespace could not sum
        (b"\x01\x02\x03\x04", None),  # the candidate's could not
        (None, None),
        (b"\x01\x02\x03\x04\x00\x00\x00\x00", b"\x05\x06\x07\x08"),  # not a float32's bytes
        (b"\x01\x02\x03\x04", b"\x05\x06\x07"),
        (b"", b""),
    ],
)
def test_a_side_without_a_float32_sum_leaves_the_probe_not_run(
    monkeypatch: pytest.MonkeyPatch, reference: bytes | None, candidate: bytes | None
) -> None:
    _probe(monkeypatch, reference, candidate)
    assert _identify(NUMPY, TORCH) == Identity(NUMPY, TORCH, None)
