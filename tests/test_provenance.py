"""compare records which library computed each side, and flags a pair that is not independent."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as compat_numpy
import numpy as np
import pytest

import diffcheck
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.provenance import Fingerprint, fingerprint_of, judge

X = np.linspace(-1.0, 1.0, 32, dtype=np.float32)


class Renamed(NumpyAdapter):
    """NumPy under another label: the name-based self-test check lets it through."""

    name = "fastlib"
    namespace_label = "fastlib"


class CompatPlugin(NumpyAdapter):
    """A plugin computing with array-api-compat's NumPy under a label of its own."""

    name = "compatlib"
    namespace_label = "compatlib"

    def namespace(self) -> Any:
        return compat_numpy


@pytest.mark.parametrize("candidate", [Renamed(), CompatPlugin()])
@pytest.mark.parametrize("mode", ["nmse", "values"])
def test_numpy_under_another_name_is_flagged_not_independent(candidate: Any, mode: str) -> None:
    kwargs: dict[str, Any] = {"function": "exp"} if mode == "values" else {}
    verdict = diffcheck.compare(
        lambda xp, x: xp.exp(x), X, candidate=candidate, mode=mode, **kwargs
    )
    assert verdict.provenance is not None
    assert verdict.provenance.candidate.module == "numpy"
    assert verdict.provenance.independent is False
    assert "NOT INDEPENDENT" in str(verdict.provenance)


def test_a_delegating_wrapper_is_caught_by_the_probe() -> None:
    pytest.importorskip("array_api_strict")
    verdict = diffcheck.compare(lambda xp, x: xp.exp(x), X, candidate="array_api_strict")
    assert verdict.provenance is not None
    assert verdict.provenance.candidate.module == "array_api_strict"
    assert verdict.provenance.independent is False  # it computes with NumPy underneath
    assert "bit-identical" in verdict.provenance.note
    assert "computed by:" in str(verdict)
    assert "computed by:" in verdict._repr_html_()


def test_an_independent_library_is_recorded_as_such() -> None:
    pytest.importorskip("torch")
    verdict = diffcheck.compare(lambda xp, x: xp.exp(x), X, candidate="torch:cpu")
    assert verdict.provenance is not None
    assert verdict.provenance.reference.module == "numpy"
    assert verdict.provenance.candidate.module == "torch"
    assert verdict.provenance.candidate.version
    assert verdict.provenance.independent is True


def test_judge_reads_modules_then_the_probe() -> None:
    a = Fingerprint("numpy", "2", "numpy.ndarray")
    b = Fingerprint("otherlib", "1", "otherlib.Array")
    assert judge(a, a, (b"x", b"y")).independent is False
    assert judge(a, b, (b"x", b"x")).independent is False
    assert judge(a, b, (b"x", b"y")).independent is True
    assert judge(a, b, None).independent is None
    assert fingerprint_of(np.zeros(1)).module == "numpy"
    assert fingerprint_of(1.0).module == "builtins"
