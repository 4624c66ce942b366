"""locate on the ecosystem's own code: third-party functions and estimators, unchanged.

The corpus (``ecosystem_corpus``) runs each function of array-api-extra, SciPy and
scikit-learn on array_api_strict, torch:cpu and mlx:cpu (where the library accepts MLX) at
float32, and on torch:cpu and mlx:cpu at float16 and bfloat16; a clean library gives no
wrong call, and every wrong call on a real library is a real deviation. Then one namespace function at a time is planted wrong in a NumPy
candidate, for every function each program calls: the first wrong call is a call of that
function and no call of any other function is wrong.
"""

from __future__ import annotations

import re
from typing import Any

import array_api_compat.numpy as cnp
import numpy as np
import pytest

from diffcheck.adapters import resolve
from diffcheck.adapters.numpy_ref import NumpyAdapter
from diffcheck.localize import Localization, locate

# First: it sets SCIPY_ARRAY_API before SciPy is imported (scikit-learn imports SciPy).
corpus = pytest.importorskip("ecosystem_corpus")

# torch warns when a re-run's input is a read-only NumPy view (it never writes to it): a
# warning of the local re-run's move (the judge's), not of the library under test.
pytestmark = pytest.mark.filterwarnings("ignore:The given NumPy array is not writable:UserWarning")

CELLS = [
    (name, candidate)
    for name, case in corpus.CORPUS.items()
    for candidate in corpus.CANDIDATES
    if candidate in case.expect
]
#: The candidates that execute float16 and bfloat16 (array_api_strict executes f32 only).
NARROW_CANDIDATES = ("torch:cpu", "mlx:cpu")
NARROW_CELLS = [
    (name, candidate, precision)
    for precision in corpus.NARROW
    for name, candidate in CELLS
    if candidate in NARROW_CANDIDATES
]


def test_scipy_was_imported_with_its_array_api_dispatch_on() -> None:
    assert corpus.scipy_dispatches(), (
        "SciPy was imported before SCIPY_ARRAY_API=1 was set: its functions would convert "
        "every input to NumPy"
    )


def test_the_corpus_holds_at_least_thirty_functions_of_three_libraries() -> None:
    assert len(corpus.CORPUS) >= 30
    assert {case.library for case in corpus.CORPUS.values()} == {
        "array-api-extra",
        "scipy",
        "scikit-learn",
    }
    clean = [cell for cell in CELLS if corpus.CORPUS[cell[0]].expect[cell[1]] == corpus.CLEAN]
    assert len({name for name, _ in clean}) >= 20
    assert {candidate for _, candidate in clean} == set(corpus.CANDIDATES)


class UnexplainedFailure(Exception):
    """A case marked with a known cause failed for another reason (never an expected xfail)."""


def _only_the_known_cause(case: Any, candidate: str, known: Any) -> None:
    """Fail outright unless every failure of the case is the known cause's; then fail as
    that cause fails (the xfail), so a second, unknown false alarm cannot hide behind it."""
    try:
        result = locate(case.fn, *case.inputs(), candidate=candidate)
    except known.raises as error:
        if not re.search(known.explained, str(error)):
            raise UnexplainedFailure(f"{type(error).__name__}: {error}") from error
        raise
    wrong = [c for c in result.calls if c.status == "wrong"]
    other = [c for c in wrong if not re.search(known.explained, c.local.reason or "")]
    if other or result.path_split is not None:
        raise UnexplainedFailure(str(result))
    assert result.passed, str(result)  # the known cause's failure: the xfail


def _compared(result: Localization) -> None:
    """Every recorded call was compared: the library ran through the recording namespace."""
    assert result.total_calls > 0, "no call was recorded: the library bypassed the namespace"
    assert len(result.calls) == result.total_calls, str(result)


@pytest.mark.parametrize(("name", "candidate"), CELLS, ids=[f"{n}-{c}" for n, c in CELLS])
def test_each_corpus_function_is_located_as_expected_at_f32(
    name: str, candidate: str, request: pytest.FixtureRequest
) -> None:
    case = corpus.CORPUS[name]
    expected = case.expect[candidate]
    probe = resolve(candidate).probe()
    if not probe.is_available:
        pytest.skip(f"{candidate}: {probe.reason}")
    if isinstance(expected, corpus.Known):
        request.applymarker(
            pytest.mark.xfail(strict=True, raises=expected.raises, reason=expected.cause)
        )
        _only_the_known_cause(case, candidate, expected)
    result = locate(case.fn, *case.inputs(), candidate=candidate)
    _found_as_expected(result, expected)


def _found_as_expected(result: Localization, expected: Any) -> None:
    """``result`` is what ``expected`` says, and no call is wrong that it does not name."""
    wrong = {c.function for c in result.calls if c.status == "wrong"}
    if isinstance(expected, corpus.Raises):  # the candidate stops: the library or the dtype
        raised = result.raised
        assert raised is not None, str(result)
        assert raised.function == expected.function, str(result)
        assert re.search(expected.error, raised.error), str(result)
        assert result.path_split is None, str(result)
        assert not wrong, str(result)
        return
    if isinstance(expected, corpus.Splits):  # the library branches on the dtype
        split = result.path_split
        assert split is not None, str(result)
        assert split.reference is not None, str(result)
        assert split.reference[0] == expected.reference, str(result)
        assert result.raised is None, str(result)
        assert not wrong, str(result)
        return
    assert result.path_split is None, str(result)
    assert result.raised is None, str(result)
    _compared(result)
    if isinstance(expected, corpus.Real):
        first = result.first_wrong
        assert first is not None, result.table()
        assert first.function == expected.function, str(result)
        assert wrong == {expected.function}, str(result)
    else:
        assert expected == corpus.CLEAN, expected
        assert result.passed, str(result)
        assert {c.status for c in result.calls} <= {"ok", "inherits"}


@pytest.mark.parametrize(
    ("name", "candidate", "precision"),
    NARROW_CELLS,
    ids=[f"{n}-{c}-{p}" for n, c, p in NARROW_CELLS],
)
def test_each_corpus_function_is_located_as_expected_at_f16_and_bf16(
    name: str, candidate: str, precision: str
) -> None:
    # The candidate's floating inputs in float16 or bfloat16, the reference's in float32.
    case = corpus.CORPUS[name]
    probe = resolve(candidate).probe()
    if not probe.is_available:
        pytest.skip(f"{candidate}: {probe.reason}")
    result = locate(case.fn, *case.inputs(), candidate=candidate, precision=precision)
    _found_as_expected(result, case.expected(candidate, precision))


@pytest.mark.parametrize("precision", corpus.NARROW)
def test_array_api_strict_runs_no_corpus_case_below_f32(precision: str) -> None:
    # Not a silent gap: array_api_strict has no float16 or bfloat16, and says so.
    pytest.importorskip("array_api_strict", reason="array-api-strict is not installed here")
    executes = resolve("array_api_strict").capabilities().precisions
    assert precision not in executes, f"array_api_strict executes {precision}: run the corpus"
    count = sum(1 for _, candidate in CELLS if candidate == "array_api_strict")
    pytest.skip(
        f"array_api_strict executes {', '.join(executes)} only, not {precision} "
        f"({count} cases, collected as one)"
    )


# --- planted bugs inside the libraries' code ---------------------------------------------


class _PlantedNamespace:
    """``array_api_compat.numpy`` whose function ``planted`` is off by a relative 1e-3."""

    __name__ = "planted_namespace"

    def __init__(self, planted: str | None) -> None:
        self.planted = planted
        self.changed = False  # whether the bug changed any value the program asked for
        self.linalg = cnp.linalg
        self.fft = cnp.fft

    def _off(self, value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            off = (value * (1 + 1e-3)).astype(value.dtype)
            self.changed |= not np.array_equal(off, value, equal_nan=True)
            return off
        return value

    def __getattr__(self, name: str) -> Any:
        function = getattr(cnp, name)
        if name != self.planted:
            return function

        def wrong(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            if hasattr(result, "_fields"):  # a named tuple (eigh, svd, unique_*)
                return type(result)(*map(self._off, result))
            if isinstance(result, tuple | list):  # broadcast_arrays, meshgrid
                return type(result)(map(self._off, result))
            return self._off(result)

        return wrong


class _PlantedAdapter(NumpyAdapter):
    """A NumPy candidate with one namespace function planted wrong."""

    name = "planted"
    namespace_label = "planted_namespace"  # another library than NumPy's: no self-test

    def __init__(self, planted: str | None) -> None:
        super().__init__(None)
        self._namespace = _PlantedNamespace(planted)

    @property
    def spec(self) -> str:
        return f"planted[{self._namespace.planted}]"

    def namespace(self) -> Any:
        return self._namespace


#: The standard leaves these functions' output values unspecified (shape and dtype only).
UNSPECIFIED = frozenset(["empty", "empty_like"])

#: Every case runs on a NumPy candidate.
PLANTABLE = list(corpus.CORPUS)


@pytest.mark.parametrize("name", PLANTABLE)
def test_a_bug_planted_in_each_function_a_library_calls_is_found_at_that_function(
    name: str,
) -> None:
    case = corpus.CORPUS[name]
    inputs = case.inputs()
    clean = locate(case.fn, *inputs, candidate=_PlantedAdapter(None))
    assert clean.passed, str(clean)
    _compared(clean)
    # Operators (x * y) are recorded under the standard's names too but never reach the
    # namespace: a function whose bug changed nothing must leave every call right.
    # asarray also moves every input to the candidate (the re-runs' too): planted there,
    # every call's inputs would be off, which is no bug of one call.
    called = {c.function for c in clean.calls if "." not in c.function} - {"asarray"}
    for function in sorted(called):
        candidate = _PlantedAdapter(function)
        result = locate(case.fn, *inputs, candidate=candidate)
        wrong = {c.function for c in result.calls if c.status == "wrong"}
        assert wrong <= {function}, (function, result.table())
        if function in UNSPECIFIED:  # its values are any: changed ones are no bug
            assert result.passed, (function, str(result))
        elif candidate.namespace().changed:  # the bug showed in a value: it must be found
            assert result.first_wrong is not None, (function, str(result))
            assert result.first_wrong.function == function
        else:
            assert result.passed, (function, str(result))
