"""Code that asks its arrays for the namespace (no ``xp`` parameter) is compared and located.

The ecosystem's Array API code (scikit-learn, SciPy, array-api-extra) finds its namespace
with ``array_api_compat.array_namespace(x)``; the recording proxy's arrays answer it with the
recording namespace, so every call is recorded, and the namespace names no library, so code
that branches on which library it runs on takes the same path on both sides.
"""

from __future__ import annotations

import inspect
import itertools
import math
from typing import Any

import array_api_compat
import numpy as np
import pytest

import diffcheck
from diffcheck._program import as_program, takes_namespace
from diffcheck.errors import ConfigError
from diffcheck.localize import locate
from diffcheck.localize._proxy import Recorder, RecordingNamespace, Tracked
from localize_fakes import BuggyAdapter

RNG = np.random.default_rng(11)
LOGITS = RNG.standard_normal((4, 16)).astype(np.float32) * 6  # some past float16's exp range


def softmax_of_arrays(logits: Any) -> Any:
    """A softmax that takes no namespace: it asks its array, as library code does."""
    xp = array_api_compat.array_namespace(logits)
    e = xp.exp(logits)  # planted: exp-f16
    return e / xp.sum(e, axis=-1, keepdims=True)


def _site(fn: Any, mark: str) -> str:
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if mark in line)
    return f"{__file__}:{start + offset}"


def test_a_function_of_arrays_alone_is_located_at_its_planted_call() -> None:
    result = locate(softmax_of_arrays, LOGITS, candidate=BuggyAdapter("exp-f16"))
    first = result.first_wrong
    assert first is not None, result.table()
    assert (first.function, first.site) == (
        "exp",
        _site(softmax_of_arrays, "# planted: exp-f16"),
    )
    assert [c.index for c in result.calls if c.status == "wrong"] == [first.index]
    clean = locate(softmax_of_arrays, LOGITS, candidate=BuggyAdapter("none"))
    assert clean.passed, clean.table()
    assert [c.function for c in clean.calls] == ["exp", "sum", "divide"]


def test_compare_runs_a_function_of_arrays_alone_and_locates_inside_it() -> None:
    # compare hands each side its backend's own arrays, which name their library's
    # namespace; locate records through them. MLX computes float64 exp at float32.
    pytest.importorskip("mlx.core")
    wide = LOGITS.astype(np.float64)
    assert diffcheck.compare(softmax_of_arrays, LOGITS, candidate="array_api_strict")
    verdict = diffcheck.compare(
        softmax_of_arrays, wide, candidate="mlx:cpu", mode="values", locate=True
    )
    assert not verdict.passed
    located = verdict.located
    assert located is not None, verdict.locate_note
    assert located.first_wrong is not None
    assert (located.first_wrong.function, located.first_wrong.site) == (
        "exp",
        _site(softmax_of_arrays, "# planted: exp-f16"),
    )


@pytest.mark.parametrize("candidate", ["array_api_strict", "torch:cpu"])
def test_each_recorded_array_answers_array_namespace_with_the_recording_namespace(
    candidate: str,
) -> None:
    seen: list[Any] = []

    def program(x: Any) -> Any:
        xp = array_api_compat.array_namespace(x)
        seen.append(
            (
                xp,
                x.__array_namespace__(),
                array_api_compat.is_array_api_obj(x),
                [
                    check(xp)
                    for check in (
                        array_api_compat.is_numpy_namespace,
                        array_api_compat.is_torch_namespace,
                        array_api_compat.is_array_api_strict_namespace,
                    )
                ],
            )
        )
        return xp.sin(x)

    result = locate(program, LOGITS, candidate=candidate)
    assert result.passed, result.table()
    assert len(seen) >= 2  # the reference's run and the candidate's (and any re-run)
    for xp, asked, is_array, library_checks in seen:
        assert isinstance(xp, RecordingNamespace)
        assert asked is xp
        assert is_array
        assert library_checks == [False, False, False]
    assert seen[0][0] is not seen[-1][0]


def test_code_that_branches_on_the_library_takes_the_same_path_on_both_sides() -> None:
    # array-api-extra's cov calls numpy.cov on NumPy and its generic code elsewhere: both
    # sides must make the same calls, or the paths split at the first.
    def library_cov(x: Any) -> Any:
        xp = array_api_compat.array_namespace(x)
        if array_api_compat.is_numpy_namespace(xp):
            return xp.asarray(np.cov(np.asarray(x)))
        centred = x - xp.mean(x, axis=-1, keepdims=True)
        return centred @ centred.T / (x.shape[-1] - 1)

    x = RNG.standard_normal((3, 8)).astype(np.float32)
    result = locate(library_cov, x, candidate="array_api_strict")
    assert result.path_split is None, str(result)
    assert result.passed, result.table()
    assert [c.function for c in result.calls] == [
        "mean",
        "subtract",
        "T",
        "matmul",
        "divide",
    ]


@pytest.mark.parametrize("candidate", ["numpy", "torch:cpu", "array_api_strict"])
def test_the_recording_namespace_offers_no_module_beyond_linalg_and_fft(candidate: str) -> None:
    from diffcheck.adapters import resolve

    xp = resolve(candidate).namespace()
    recording = RecordingNamespace(xp, Recorder(lambda call: None))
    modules = [name for name in dir(xp) if inspect.ismodule(getattr(xp, name, None))]
    for name in modules:
        assert hasattr(recording, name) == (name in ("linalg", "fft")), name
    assert not hasattr(recording, "special")


def test_a_recorded_array_hides_the_raw_arrays_protocols_but_converts_to_numpy() -> None:
    import torch

    recorder = Recorder(lambda call: None)
    RecordingNamespace(array_api_compat.torch, recorder)
    tracked = Tracked(torch.arange(4.0), recorder)
    for protocol in ("__torch_function__", "__array_interface__", "__cuda_array_interface__"):
        assert not hasattr(tracked, protocol), protocol
    assert np.asarray(tracked).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError):
        torch.special.xlogy(tracked, tracked)


def test_a_name_outside_the_standard_is_not_offered_so_both_sides_take_the_standard_path() -> None:
    # torch's median returns (values, indices), NumPy's the values: scikit-learn's
    # hasattr(xp, "median") would send each side its own way.
    import array_api_compat.torch as ctorch

    for xp in (array_api_compat.numpy, ctorch):
        recording = RecordingNamespace(xp, Recorder(lambda call: None))
        assert hasattr(xp, "median")
        assert not hasattr(recording, "median")
        with pytest.raises(AttributeError, match="median is not in the Array API standard"):
            recording.median  # noqa: B018
        assert callable(recording.exp)
        assert callable(recording.linalg.svd)
        assert recording.float32 is xp.float32
        assert recording.pi == xp.pi


def test_numpy_operators_with_a_recorded_array_are_recorded() -> None:
    # A library's NumPy constant on the left of an operator: NumPy defers to the recorded
    # array, so the call is recorded (and compared) instead of run on a converted copy.
    scale = np.linspace(1, 2, 16).astype(np.float32)

    def program(x: Any) -> Any:
        xp = array_api_compat.array_namespace(x)
        return xp.exp(scale * x)

    result = locate(program, LOGITS, candidate=BuggyAdapter("none"))
    assert [c.function for c in result.calls] == ["multiply", "exp"], result.table()
    assert result.passed, result.table()


@pytest.mark.parametrize("candidate", ["numpy-like", "torch:cpu"])
def test_a_numpy_scalar_result_is_recorded_and_judged_as_a_0d_array(candidate: str) -> None:
    # NumPy's mean of a float64 vector is np.float64 (a float): recorded as a 0-d array on
    # the reference, as torch's 0-d tensor is on the candidate, and its re-run judged.
    x = RNG.standard_normal(12)
    chosen: Any = BuggyAdapter("none") if candidate == "numpy-like" else candidate
    result = locate(lambda xp, x: xp.mean(x) * x, x, candidate=chosen)
    assert [c.function for c in result.calls] == ["mean", "multiply"], result.table()
    assert result.calls[0].output_shapes == ((),)
    assert result.passed, result.table()
    planted = locate(
        lambda xp, x: xp.multiply(xp.mean(x), x), x, candidate=BuggyAdapter("multiply-f32")
    )
    assert planted.first_wrong is not None
    assert planted.first_wrong.function == "multiply"


def test_a_struct_sequence_result_is_rebuilt_with_its_arrays_recorded() -> None:
    # torch.linalg.svd returns a struct sequence, whose constructor takes one sequence.
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    result = locate(lambda xp, x: xp.linalg.svd(x, full_matrices=False).S, x, candidate="torch:cpu")
    assert result.passed, result.table()
    assert [c.function for c in result.calls] == ["linalg.svd"]


# --- how a program is called: generated signatures -------------------------------------


def _function(names: list[str], defaults: int, varargs: bool) -> Any:
    """A function of these positional parameters, the last ``defaults`` of them optional."""
    required = names[: len(names) - defaults]
    optional = [f"{n}=None" for n in names[len(names) - defaults :]]
    star = ["*rest"] if varargs else []
    source = f"def f({', '.join(required + optional + star)}): return None"
    scope: dict[str, Any] = {}
    exec(source, scope)  # a signature of each shape, built from its parts
    return scope["f"]


@pytest.mark.parametrize(
    ("params", "defaults", "varargs", "first"),
    [
        (p, d, v, f)
        for p, d, v, f in itertools.product(range(4), range(3), (False, True), ("xp", "a"))
        if d <= p
    ],
)
def test_the_call_form_follows_the_documented_rule_for_every_signature(
    params: int, defaults: int, varargs: bool, first: str
) -> None:
    names = [first, *(f"p{i}" for i in range(1, params))] if params else []
    fn = _function(names, defaults, varargs)
    least, most = params - defaults, math.inf if varargs else params
    for count in range(4):
        if names and names[0] == "xp":
            expected: bool | None = True
        elif least <= count <= most:
            expected = False
        elif least <= count + 1 <= most:
            expected = True
        else:
            expected = None
        if expected is None:
            with pytest.raises(ConfigError, match=f"there are {count} inputs"):
                takes_namespace(fn, count)
            continue
        assert takes_namespace(fn, count) is expected, (names, defaults, varargs, count)
        program = as_program(fn, count)
        assert (program is fn) is expected
        assert takes_namespace(program, count)  # the wrapped form is taken as it is


def test_a_builtin_without_a_signature_takes_the_namespace() -> None:
    with pytest.raises(ValueError, match="no signature found"):
        inspect.signature(max)
    assert takes_namespace(max, 2)
    assert not takes_namespace(np.add, 2)  # a ufunc's signature is read: x1, x2


def test_a_program_that_fits_no_call_form_is_one_config_error_before_anything_runs() -> None:
    def two(a: Any, b: Any) -> Any:
        return a

    x = np.ones(3, np.float32)
    for run in (
        lambda: locate(two, x, x, x, x, candidate="array_api_strict"),
        lambda: diffcheck.compare(two, x, x, x, x, candidate="array_api_strict"),
    ):
        with pytest.raises(ConfigError) as caught:
            run()
        message = str(caught.value)
        assert "\n" not in message
        assert "two takes 2 positional arguments, but there are 4 inputs" in message


def test_the_wrapped_program_keeps_the_functions_name() -> None:
    program = as_program(softmax_of_arrays, 1)
    assert program is not softmax_of_arrays
    assert program.__name__ == "softmax_of_arrays"
    assert program(None, LOGITS).shape == LOGITS.shape
