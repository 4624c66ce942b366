"""Rules found by auditing a real search run against the standard's text, one test each."""

from __future__ import annotations

import numpy as np

from diffcheck.values.blame import blame
from diffcheck.values.compare import compare_values
from diffcheck.values.spec import is_standard_name


def test_functions_of_later_versions_are_standard_names() -> None:
    assert is_standard_name("isin")  # 2025.12: a backend lacking it is blamed, not excused
    assert not is_standard_name("fmod")


def test_an_overflow_to_infinity_is_blamed_alone_when_the_other_side_is_within_the_bound() -> None:
    x = np.asarray([88.722824], np.float32)
    ref = np.asarray([np.nextafter(np.float32(3.4027725e38), np.float32(0))], np.float32)
    cand = np.asarray([np.inf], np.float32)
    verdict = compare_values(ref, cand, function="exp")
    assert verdict.kind == "inf"
    found = blame("exp", [x], {}, ref, cand, verdict)
    assert found.side == "candidate", found
    swapped = blame("exp", [x], {}, cand, ref, compare_values(cand, ref, function="exp"))
    assert swapped.side == "reference", swapped


def test_the_sign_of_a_zero_chosen_by_max_or_min_is_left_open() -> None:
    ref, cand = np.asarray(-0.0, np.float32), np.asarray(0.0, np.float32)
    for function in ("min", "max", "minimum", "maximum"):
        assert compare_values(ref, cand, function=function).passed, function
    assert compare_values(ref, cand, function="negative").kind == "signed-zero"


def test_floor_divide_choices_the_standard_allows_are_no_finding() -> None:
    from diffcheck.values.may import either_allowed

    f32 = np.float32
    cases = [
        ([np.inf], [1.0], [np.nan], [np.inf]),  # +inf // 1: +inf, or NaN as Python
        ([1.1754944e-38], [-np.inf], [-1.0], [-0.0]),  # x // -inf: -0, or -1 as Python
        ([1.1754944e-38], [-3.4028235e38], [-1.0], [-0.0]),  # an underflowing quotient
    ]
    for x1, x2, ref, cand in cases:
        args = [np.asarray(x1, f32), np.asarray(x2, f32)]
        assert either_allowed("floor_divide", args, np.asarray(ref, f32), np.asarray(cand, f32))
    # A choice outside them is still a finding: 5 // 2 is 2, never 3; inf // 1 is never 0.
    args = [np.asarray([5.0, np.inf], f32), np.asarray([2.0, 1.0], f32)]
    wrong = np.asarray([3.0, 0.0], f32)
    assert either_allowed("floor_divide", args, np.asarray([2.0, np.inf], f32), wrong) is None
    assert either_allowed("divide", args, np.asarray([2.5, np.inf], f32), wrong) is None


def test_fftfreq_returns_each_sides_declared_default_float() -> None:
    from diffcheck.values.dtypes import expected_result_dtype

    assert expected_result_dtype("fft.fftfreq", default_float="float32") == "float32"
    assert expected_result_dtype("fft.rfftfreq") == "float64"


def test_sign_of_a_complex_input_is_rounded_math_not_a_copy() -> None:
    from diffcheck.values.bounds import bound_for

    assert bound_for("sign", "complex64", inputs=("complex64",)).kind == "ulp"
    assert bound_for("sign", "float32", inputs=("float32",)).kind == "exact"
    z = np.asarray([1.1754944e-38 + 4.498235e06j], np.complex64)
    ref = z / np.abs(z)
    cand = ref.copy()
    cand.real = np.nextafter(cand.real, np.float32(1))
    verdict = compare_values(
        ref, cand, function="sign", bound=bound_for("sign", "complex64", inputs=("complex64",))
    )
    assert verdict.passed, verdict


def test_a_complex_result_whose_true_components_overflow_is_right_as_infinities() -> None:
    # (3e19-1e37j) * (-1e28-7e36j) = (-7e73 + 1e65j): both true components overflow
    # float32, so (-inf, +inf) is the rounded truth; (NaN, +inf) is wrong.
    x1 = np.asarray([3.0e19 - 1.0e37j], np.complex64)
    x2 = np.asarray([-1.0e28 - 7.0e36j], np.complex64)
    truth = complex(x1[0]) * complex(x2[0])
    assert abs(truth.real) > 3.5e38, truth
    assert abs(truth.imag) > 3.5e38, truth
    right = np.asarray([complex(-np.inf, np.inf)], np.complex64)
    wrong = np.asarray([complex(np.nan, np.inf)], np.complex64)
    verdict = compare_values(right, wrong, function="multiply")
    assert verdict.kind == "nan"
    found = blame("multiply", [x1, x2], {}, right, wrong, verdict)
    assert found.side == "candidate", found
    swapped = blame("multiply", [x1, x2], {}, wrong, right, compare_values(wrong, right))
    assert swapped.side == "reference", swapped


def _c64(*values: complex) -> np.ndarray:
    return np.asarray(values, np.complex64)


def test_complex_special_values_the_standard_leaves_to_the_library_are_open() -> None:
    from diffcheck.values.complex_open import open_complex_elements

    nan, inf = np.nan, np.inf
    cases = [
        # finite / (NaN + inf j): implementation dependent (2022.12 divide notes)
        ("divide", [_c64(-1 + 1j), _c64(complex(nan, inf))], complex(nan, nan), 0j),
        # textbook product of finite operands whose true components both overflow
        (
            "multiply",
            [_c64(-3.4028235e38 + 7.322753e11j), _c64(-6302.3257 + 4.0512798e35j)],
            complex(-inf, -inf),
            complex(nan, -inf),
        ),
        ("square", [_c64(complex(-1.8446746e19, nan))], complex(nan, nan), complex(inf, nan)),
        ("reciprocal", [_c64(0j)], complex(nan, nan), complex(inf, nan)),  # 1 / 0
        # an exact zero imaginary part: its sign is the formula's
        ("reciprocal", [_c64(1.1754944e-38 + 0j)], complex(8.507059e37, -0.0), 8.507059e37 + 0j),
        ("pow", [_c64(0j), np.asarray(-inf, np.float32)], complex(nan, nan), complex(inf, nan)),
        (
            "prod",
            [np.asarray(complex(1.1754944e-38, inf), np.complex64)],
            complex(nan, inf),
            complex(1.1754944e-38, inf),
        ),
    ]
    for function, args, ref, cand in cases:
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        r = np.full(shape, ref, np.complex64)
        c = np.full(shape, cand, np.complex64)
        opened = open_complex_elements(function, args, {}, r, c)
        assert opened is not None, function
        assert np.array_equal(opened[0], r, equal_nan=True), function


def test_complex_nan_where_the_true_product_is_ordinary_stays_a_finding() -> None:
    from diffcheck.values.complex_open import open_complex_elements

    args = [_c64(1.5 + 2j), _c64(-3 + 0.5j)]
    ref = args[0] * args[1]
    wrong = ref.copy()
    wrong.real = np.nan
    assert open_complex_elements("multiply", args, {}, ref, wrong) is None
    # the product's real part is -5.5: a -0 or +inf there is wrong too
    assert open_complex_elements("multiply", args, {}, ref, _c64(complex(np.inf, -5.5))) is None
    # all-NaN operands fix NaN + NaN j
    nans = [_c64(complex(np.nan, np.nan)), _c64(complex(np.nan, np.nan))]
    assert (
        open_complex_elements("divide", nans, {}, _c64(complex(np.nan, np.nan)), _c64(0j)) is None
    )
    # real results are never opened by this rule
    x = np.asarray([np.inf], np.float32)
    assert (
        open_complex_elements("multiply", [x, x], {}, x, np.asarray([np.nan], np.float32)) is None
    )


def test_an_open_complex_element_is_no_finding_but_another_in_the_same_call_is() -> None:
    from diffcheck.adapters.numpy_ref import NumpyAdapter
    from diffcheck.values.call import compare_call

    class Textbook:
        """NumPy whose complex64 multiply is the standard's textbook formula in float32."""

        def __init__(self, spoil: bool) -> None:
            self.spoil = spoil

        def __getattr__(self, name: str) -> object:
            import array_api_compat.numpy as cnp

            return getattr(cnp, name)

        def multiply(self, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
            a, b, c, d = x1.real, x1.imag, x2.real, x2.imag
            with np.errstate(all="ignore"):
                out = (a * c - b * d).astype(np.complex64)
                out.imag = b * c + a * d
            if self.spoil:
                out[-1] = complex(np.nan, out[-1].imag)
            return out

    class TextbookAdapter(NumpyAdapter):
        name = "textbook"

        def __init__(self, spoil: bool = False) -> None:
            super().__init__(None)
            self._namespace = Textbook(spoil)

        def namespace(self) -> object:
            return self._namespace

    x1 = _c64(-3.4028235e38 + 7.322753e11j, 1.5 + 2j)
    x2 = _c64(-6302.3257 + 4.0512798e35j, -3 + 0.5j)
    fine = compare_call("multiply", [x1, x2], NumpyAdapter(), TextbookAdapter())
    assert fine.passed, str(fine)
    assert "not a finding" in (fine.reason or "")
    spoiled = compare_call("multiply", [x1, x2], NumpyAdapter(), TextbookAdapter(spoil=True))
    assert spoiled.kind == "nan", str(spoiled)
    assert spoiled.first is not None
    assert spoiled.first.index == (1,)
    assert spoiled.blame is not None
    assert spoiled.blame.side == "candidate", spoiled.blame


def test_complex_sign_is_judged_by_the_oracle() -> None:
    z = _c64(3e-45 + 2.2194e-39j)
    wide = z.astype(np.complex128)
    right = (wide / np.abs(wide)).astype(np.complex64)
    wrong = _c64(complex(np.inf, np.inf))
    verdict = compare_values(wrong, right, function="sign")
    assert verdict.kind == "inf"
    found = blame("sign", [z], {}, wrong, right, verdict)
    assert found.side == "reference", found


def test_a_complex_zero_component_below_the_dtype_has_no_required_sign() -> None:
    """The true real part (2.2e-77) rounds to +0, but the standard sets no accuracy for
    complex results: within the bound relative to |z| either zero conforms."""
    z = _c64(complex(-0.0, -6.584619e-39))
    right = _c64(complex(0.0, -6.584619e-39))
    wrong = _c64(complex(-0.0, -6.584619e-39))
    verdict = compare_values(right, wrong, function="log1p")
    assert verdict.kind == "signed-zero"
    found = blame("log1p", [z], {}, right, wrong, verdict)
    assert (found.side, found.evidence) == ("undecided", "standard-rule"), found


def test_full_like_refusing_a_fill_its_dtype_holds_is_blamed() -> None:
    from diffcheck.values.compare import failed_call

    x = np.zeros((), np.uint64)
    verdict = failed_call("raises", "candidate raised RuntimeError: std::bad_cast")
    found = blame("full_like", [x, 2**64 - 2], {}, x, None, verdict)
    assert found.side == "candidate", found
    # a fill outside the dtype's range is unspecified: raising is allowed
    small = np.zeros((), np.uint8)
    found = blame("full_like", [small, 300], {}, small, None, verdict)
    assert found.side == "undecided", found


def test_complex_pow_is_judged_by_the_oracle() -> None:
    # pow(z, 1) is z; a side 32 ULP off in the subnormal range is wrong.
    z = _c64(1.1754944e-38 + 1.1754944e-38j)
    one = np.asarray(1.0, np.float32)
    off = _c64(1.1754899e-38 + 1.1754899e-38j)
    verdict = compare_values(z, off, function="pow")
    assert verdict.kind == "value", str(verdict)
    found = blame("pow", [z, one], {}, z, off, verdict)
    assert found.side == "candidate", found


def test_refusing_complex_to_real_astype_is_allowed_but_complex_to_bool_is_not() -> None:
    from diffcheck.adapters.numpy_ref import NumpyAdapter
    from diffcheck.search.recipes import SpecCall
    from diffcheck.values.call import compare_call

    class Refusing:
        """NumPy refusing every cast from a complex dtype, as array_api_strict does."""

        def __getattr__(self, name: str) -> object:
            import array_api_compat.numpy as cnp

            return getattr(cnp, name)

        def astype(self, x: np.ndarray, dtype: object, /) -> np.ndarray:
            if x.dtype.kind == "c":
                raise TypeError("casting complex64 should not be permitted")
            return x.astype(dtype)

    class RefusingAdapter(NumpyAdapter):
        name = "refusing"

        def __init__(self) -> None:
            super().__init__(None)

        def namespace(self) -> object:
            return Refusing()

    x = _c64(0j, 1 + 2j)
    for target in ("float32", "int16"):  # "should not be permitted": either way conforms
        verdict = compare_call(
            SpecCall("astype", dtypes=(("#", target),)),
            [x],
            NumpyAdapter(),
            RefusingAdapter(),
            function="astype",
        )
        assert verdict.passed, str(verdict)
    # "a value of 0 + 0j must cast to False": refusing it is the refusing side's fault
    to_bool = compare_call(
        SpecCall("astype", dtypes=(("#", "bool"),)),
        [x],
        NumpyAdapter(),
        RefusingAdapter(),
        function="astype",
    )
    assert to_bool.kind == "raises", str(to_bool)
    assert to_bool.blame is not None
    assert to_bool.blame.side == "candidate", to_bool.blame


def test_a_complex_long_sum_is_judged_by_fsum_per_component() -> None:
    from diffcheck.values.bounds import bound_for

    x = np.full((1, 5000), 0.73696166 + 0.3697867j, np.complex64)
    right = x.astype(np.complex128).sum(axis=-1).astype(np.complex64)
    wrong = np.zeros(1, np.complex64)
    total = np.complex64(0)
    for value in x[0]:  # left to right in complex64
        total = np.complex64(total + value)
    wrong[0] = total
    for function, ref, cand in (("sum", right, wrong), ("mean", right / 5000, wrong / 5000)):
        bound = bound_for(function, "complex64", reduced=5000)
        verdict = compare_values(ref, cand, function=function, bound=bound, reduced=5000)
        assert verdict.kind == "value", str(verdict)
        found = blame(function, [x], {"axis": -1}, ref, cand, verdict)
        assert found.side == "candidate", found
