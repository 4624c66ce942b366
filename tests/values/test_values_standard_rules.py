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


def _i32(*values: int) -> np.ndarray[Any, Any]:
    return np.asarray(values, np.int32)


def _u8(*values: int) -> np.ndarray[Any, Any]:
    return np.asarray(values, np.uint8)


def _defined(function: str, inputs: str, result: str) -> str:
    return f"the standard defines {function} for {inputs} inputs (result {result}); the candidate raised"


_UNDEFINED = (
    "the standard specifies no result of {f} for these inputs (integer division by zero or "
    "a negative shift count), so raising is allowed"
)
_OUT_OF_RANGE = (
    "a Python integer argument of full_like lies outside uint8's range, which the standard "
    "leaves unspecified, so raising is allowed"
)
_NOBODY = (
    "no special case, oracle or standard rule decides this raises failure of astype, and no "
    "further backend voted"
)
_F32 = np.asarray([1.0, 2.0], np.float32)
_BF16 = (np.asarray([1.0, 2.0], np.float32), "bfloat16")  # NumPy holds no bfloat16


@pytest.mark.parametrize(
    ("function", "args", "dtype_args", "side", "evidence", "why"),
    [
        # integer division by zero and negative shift counts: the standard gives no result
        ("floor_divide", [_i32(1, 2), _i32(2, 0)], None, "undecided", "standard-rule", _UNDEFINED),
        ("remainder", [_i32(1, 2), _i32(2, 0)], None, "undecided", "standard-rule", _UNDEFINED),
        ("xp.remainder", [_i32(1, 2), 0], None, "undecided", "standard-rule", _UNDEFINED),
        ("bitwise_left_shift", [_i32(1), _i32(-1)], None, "undecided", "standard-rule", _UNDEFINED),
        ("bitwise_right_shift", [_i32(1), -1], None, "undecided", "standard-rule", _UNDEFINED),
        # a divisor without a zero, a shift count of 0, a float zero divisor, one argument
        (
            "floor_divide",
            [_i32(1, 2), _i32(2, 3)],
            None,
            "candidate",
            "standard-rule",
            _defined("floor_divide", "int32, int32", "int32"),
        ),
        (
            "remainder",
            [_i32(1, 2), 3],
            None,
            "candidate",
            "standard-rule",
            _defined("remainder", "int32", "int32"),
        ),
        (
            "bitwise_left_shift",
            [_i32(1), _i32(0)],
            None,
            "candidate",
            "standard-rule",
            _defined("bitwise_left_shift", "int32, int32", "int32"),
        ),
        (
            "bitwise_right_shift",
            [_i32(1), 0],
            None,
            "candidate",
            "standard-rule",
            _defined("bitwise_right_shift", "int32", "int32"),
        ),
        (
            "floor_divide",
            [_F32, _F32 * 0],
            None,
            "candidate",
            "standard-rule",
            _defined("floor_divide", "float32, float32", "float32"),
        ),
        (
            "floor_divide",
            [_BF16, _BF16],
            None,
            "candidate",
            "standard-rule",
            _defined("floor_divide", "bfloat16, bfloat16", "bfloat16"),
        ),
        (
            "negative",
            [_i32(1, 0)],
            None,
            "candidate",
            "standard-rule",
            _defined("negative", "int32", "int32"),
        ),
        # a Python integer fill is held to the dtype's range, both ends included
        (
            "full_like",
            [_u8(1, 2), 0],
            None,
            "candidate",
            "standard-rule",
            _defined("full_like", "uint8", "uint8"),
        ),
        (
            "full_like",
            [_u8(1, 2), 255],
            None,
            "candidate",
            "standard-rule",
            _defined("full_like", "uint8", "uint8"),
        ),
        ("full_like", [_u8(1, 2), 256], None, "undecided", "standard-rule", _OUT_OF_RANGE),
        ("full_like", [_u8(1, 2), -1], None, "undecided", "standard-rule", _OUT_OF_RANGE),
        # astype: every cast is defined but complex to real ("should not be permitted")
        (
            "xp.astype",
            [_F32],
            {"#": "int16"},
            "candidate",
            "standard-rule",
            "the standard defines astype from float32 to int16; the candidate raised",
        ),
        (
            "astype",
            [_BF16],
            {"#": "float32"},
            "candidate",
            "standard-rule",
            "the standard defines astype from bfloat16 to float32; the candidate raised",
        ),
        (
            "astype",
            [_F32.astype(np.complex64)],
            {"#": "bool"},
            "candidate",
            "standard-rule",
            "the standard defines astype from complex64 to bool; the candidate raised",
        ),
        ("astype", [_F32.astype(np.complex64)], {"#": "float32"}, "undecided", "none", _NOBODY),
        ("astype", [_F32.astype(np.complex64)], None, "undecided", "none", _NOBODY),
    ],
)
def test_a_raising_side_is_blamed_only_where_the_standard_defines_the_result(
    function: str,
    args: list[Any],
    dtype_args: dict[str, str] | None,
    side: str,
    evidence: str,
    why: str,
) -> None:
    from diffcheck.values.blame import blame
    from diffcheck.values.compare import failed_call

    verdict = failed_call("raises", "candidate raised TypeError")
    found = blame(function, args, {}, args[0], None, verdict, dtype_args=dtype_args)
    expected = why.format(f=function)
    assert (found.side, found.evidence, found.why) == (side, evidence, expected)
    # the same failure of the reference blames the reference
    mirrored = blame(function, args, {}, None, args[0], verdict, dtype_args=dtype_args)
    assert mirrored.side == {"candidate": "reference"}.get(side, side)
    assert mirrored.why == expected.replace("the candidate raised", "the reference raised")


@pytest.mark.parametrize(
    ("function", "reason", "missing", "side", "why"),
    [
        (
            "isin",
            "module 'x' has no attribute 'isin'",
            ("reference",),
            "reference",
            "the standard defines isin; the reference namespace lacks it",
        ),
        (
            "isin",
            "no such function",
            ("reference", "candidate"),
            "both",
            "the standard defines isin; the both namespace lacks it",
        ),
        (
            "isin",
            "module 'x' has no attribute 'fmod'",  # the attribute named decides
            ("candidate",),
            "undecided",
            "the candidate namespace lacks fmod, which the standard does not define",
        ),
        (
            "fmod",
            "",
            ("reference", "candidate"),
            "undecided",
            "the both namespace lacks fmod, which the standard does not define",
        ),
    ],
)
def test_a_missing_function_is_blamed_only_when_the_standard_defines_it(
    function: str, reason: str, missing: tuple[str, ...], side: str, why: str
) -> None:
    from diffcheck.values.blame import blame
    from diffcheck.values.compare import failed_call

    x = _i32(1, 2)
    ref = None if "reference" in missing else x
    cand = None if "candidate" in missing else x
    found = blame(function, [x, x], {}, ref, cand, failed_call("missing", reason))
    assert (found.side, found.evidence, found.why) == (side, "standard-rule", why)


def test_a_cast_of_no_array_is_no_refusal_the_standard_allows() -> None:
    from diffcheck.values.blame import astype_refusal_allowed

    complex_x = np.zeros(2, np.complex64)
    assert astype_refusal_allowed([complex_x], {"#": "float32"}) is not None
    assert astype_refusal_allowed([complex_x], None) is None
    assert astype_refusal_allowed([3], {"#": "float32"}) is None
