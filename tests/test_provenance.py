"""compare records which library computed each side, and flags a pair that is not independent."""

from __future__ import annotations

import sys
import types
from typing import Any

import array_api_compat.numpy as compat_numpy
import numpy as np
import pytest

import diffcheck
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.provenance import (
    Fingerprint,
    Provenance,
    fingerprint_of,
    judge,
    namespace_name,
    provenance_of,
)

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


def test_judge_keeps_both_fingerprints_and_says_why() -> None:
    a = Fingerprint("numpy", "2", "numpy.ndarray")
    b = Fingerprint("otherlib", "1", "otherlib.Array")
    same = Fingerprint("numpy", "2", "numpy.ndarray", namespace="otherlib.xp")
    # One side's namespace unknown: the same module is one library, whatever the sums say.
    assert judge(a, same, (b"x", b"y")) == Provenance(
        a, same, False, "NOT INDEPENDENT: both sides returned numpy arrays", one_library=True
    )
    # Both namespaces known and different: NumPy's arrays with NumPy's sum is NumPy under
    # another name; a sum of its own leaves the pair independent.
    known = Fingerprint("numpy", "2", "numpy.ndarray", namespace="array_api_compat.numpy")
    wrapped = judge(known, same, (b"x", b"x"))
    assert wrapped.one_library
    assert wrapped.note.endswith("a 131072-element float32 sum is bit-identical on both sides")
    assert not judge(known, same, (b"x", b"y")).one_library
    assert judge(a, b, None) == Provenance(a, b, None, "independence probe did not run")
    identical = judge(a, b, (b"x", b"x"))
    assert (identical.reference, identical.candidate, identical.independent) == (a, b, False)
    assert identical.note.startswith("NOT INDEPENDENT: a ")


@pytest.mark.parametrize(
    ("fingerprint", "text"),
    [
        (
            Fingerprint(
                "numpy", "2.1.0", "numpy.ndarray", "openblas 0.3", "array_api_compat.numpy"
            ),
            "numpy 2.1.0 (numpy.ndarray; BLAS openblas 0.3; via array_api_compat.numpy)",
        ),
        (Fingerprint("builtins", None, "builtins.float"), "builtins (builtins.float)"),
    ],
)
def test_a_fingerprint_reads_as_library_version_type_blas_and_namespace(
    fingerprint: Fingerprint, text: str
) -> None:
    assert str(fingerprint) == text


class _NamelessNamespace:
    """A namespace object without a module name of its own."""


def test_a_fingerprint_names_the_version_the_module_states_and_its_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A library that is imported but not installed as a distribution: its own __version__.
    module = types.ModuleType("fakelib_for_provenance")
    module.__version__ = "9.8.7"  # type: ignore[attr-defined]
    array_type = type("Array", (), {"__module__": module.__name__})
    monkeypatch.setitem(sys.modules, module.__name__, module)
    found = fingerprint_of(array_type())
    assert (found.module, found.version, found.namespace) == (module.__name__, "9.8.7", None)
    assert namespace_name(compat_numpy) == "array_api_compat.numpy"
    assert namespace_name(_NamelessNamespace()) == __name__
    assert fingerprint_of(np.zeros(1), _NamelessNamespace()).namespace == __name__


class _Unprobeable(NumpyAdapter):
    """A backend whose namespace cannot compute the probe's sum."""

    def namespace(self) -> Any:
        raise RuntimeError("no sum here")


@pytest.mark.parametrize("unprobed", ["reference", "candidate"])
def test_the_probe_did_not_run_when_one_side_cannot_sum(unprobed: str) -> None:
    sides = [NumpyAdapter(), NumpyAdapter()]
    sides[0 if unprobed == "reference" else 1] = _Unprobeable()
    found = provenance_of(sides[0], sides[1], 1.0, np.zeros(1))
    assert (found.independent, found.note) == (None, "independence probe did not run")


def test_patterns_of_one_library_need_both_sides_probed_one_module_and_agreeing_probes() -> None:
    from diffcheck.provenance import ProbeBits, pattern_one_library

    bits = ProbeBits(b"\x01\x02\x03\x04", b"e" * 32, b"m" * 32)
    other = ProbeBits(b"\x04\x03\x02\x01", b"E" * 32, b"M" * 32)
    assert pattern_one_library(("numpy", bits), ("numpy", bits))
    assert not pattern_one_library(("numpy", bits), ("numpy", other))
    assert not pattern_one_library(("numpy", bits), ("torch", bits))
    # One side that could not be probed is no evidence of one library, whichever side.
    assert not pattern_one_library(None, ("numpy", bits))
    assert not pattern_one_library(("numpy", bits), None)
    assert not pattern_one_library(None, None)


def test_probes_agree_by_exp_only_with_a_matmul_probed_too() -> None:
    from diffcheck.provenance import ProbeBits, probes_agree

    exp, matmul = b"e" * 32, b"m" * 32
    # Sums apart, exp alike: without the matmul probe on our side, exp alone says nothing.
    assert not probes_agree(
        ProbeBits(b"\x00\x00\x00\x01", exp), ProbeBits(b"\x00\x00\x00\x02", exp)
    )
    assert not probes_agree(
        ProbeBits(b"\x00\x00\x00\x01", None, matmul), ProbeBits(b"\x00\x00\x00\x02", None, matmul)
    )
    assert probes_agree(
        ProbeBits(b"\x00\x00\x00\x01", exp, matmul), ProbeBits(b"\x00\x00\x00\x02", exp, matmul)
    )


def test_probe_patterns_name_the_top_level_module_of_the_arrays_a_namespace_returns() -> None:
    from diffcheck.provenance import probe_patterns

    pytest.importorskip("array_api_strict")
    from diffcheck.adapters import resolve

    found = probe_patterns(resolve("array_api_strict"))  # arrays of array_api_strict._array_object
    assert found is not None
    assert found[0] == "array_api_strict"
    numpy_found = probe_patterns(NumpyAdapter())
    assert numpy_found is not None
    assert numpy_found[0] == "numpy"


class _WideSum(NumpyAdapter):
    """A namespace whose sum of a vector returns two values: no float32 sum to compare."""

    name = "widesum"
    namespace_label = "widesum"

    def namespace(self) -> Any:
        class Wide:
            def __getattr__(self, name: str) -> Any:
                return getattr(compat_numpy, name)

            def sum(self, x: Any, /, **kw: Any) -> Any:
                total = np.sum(x, **kw)
                return np.stack([total, total])

        return Wide()


def test_a_namespace_whose_sum_is_not_one_float32_is_not_probed() -> None:
    from diffcheck.provenance import probe_bits, probe_patterns

    assert probe_patterns(_WideSum()) is None
    assert probe_bits(_WideSum()) is None
