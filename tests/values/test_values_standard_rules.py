"""Rules the standard states decide before anything else: refusals it allows, exact answers."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.values.call import compare_call
from diffcheck.values.signatures import KINDS, outside_documented_dtypes, signature

#: One-array functions whose input dtype the standard documents.
ONE_ARRAY = ("fft.fftshift", "fft.ifftshift", "diff", "exp", "abs", "sum", "cumulative_sum")
DTYPES = ("bool", "int8", "int32", "uint8", "float32", "float64", "complex64")


class RefusingNamespace:
    """NumPy, but every function in ``refuses`` raises (a backend declining a dtype)."""

    __name__ = "fake_refusing_namespace"

    def __init__(self, refuses: str) -> None:
        self.refuses = refuses
        self.fft = self
        self.linalg = cnp.linalg

    def __getattr__(self, name: str) -> Any:
        if name == self.refuses.rsplit(".", 1)[-1]:

            def refuse(*args: Any, **kwargs: Any) -> Any:
                raise TypeError(f"{name} does not take this dtype")

            return refuse
        return getattr(cnp.fft if hasattr(cnp.fft, name) else cnp, name)


class RefusingAdapter(NumpyAdapter):
    name = "refusing"
    namespace_label = "fake_refusing_namespace"

    def __init__(self, refuses: str) -> None:
        super().__init__(None)
        self._namespace = RefusingNamespace(refuses)

    @property
    def spec(self) -> str:
        return f"refusing[{self._namespace.refuses}]"

    def namespace(self) -> Any:
        return self._namespace


@settings(max_examples=40, deadline=None)
@given(function=st.sampled_from(ONE_ARRAY), dtype=st.sampled_from(DTYPES))
def test_a_refusal_is_a_finding_exactly_when_the_input_is_documented(
    function: str, dtype: str
) -> None:
    x = np.arange(1, 5).astype(dtype)
    verdict = compare_call(
        function, [x], NumpyAdapter(), RefusingAdapter(function), api_version="2024.12"
    )
    sig = signature(function, "2024.12")
    assert sig is not None
    documented = dtype in KINDS[sig.input_kinds["x"][1]]
    assert documented == (outside_documented_dtypes(function, [dtype], "2024.12") is None)
    if documented:
        assert verdict.kind == "raises", str(verdict)
    else:
        assert verdict.passed, str(verdict)
        assert "not a finding" in (verdict.reason or "")


@pytest.mark.parametrize(("function", "dtype"), [("fft.fftshift", "int8"), ("diff", "bool")])
def test_the_issues_examples_of_should_are_not_findings(function: str, dtype: str) -> None:
    x = np.ones(4, dtype)
    verdict = compare_call(function, [x], NumpyAdapter(), RefusingAdapter(function))
    assert verdict.passed, str(verdict)
