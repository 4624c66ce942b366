"""The Python API for research scripts and tests: :func:`compare` and :func:`run`.

:func:`compare` runs any function written against the Array API on two backends and returns
the differ's :class:`~diffcheck.differ.Verdict` (float32 NMSE, the contract of the
registered checks), or with ``mode="values"`` the faithful
:class:`~diffcheck.values.ValueVerdict` (every dtype kept, failure kinds named, blame
decided); :func:`run` runs one registered check exactly as ``diffcheck run`` does and
returns its report document.

The two differ on purpose in how they treat a backend that cannot run. A script that asks
``compare`` for ``mlx:gpu`` on a machine without one gets a :class:`~diffcheck.BackendError`
(an exception is the honest answer to a direct request), while ``run`` and the CLI record the
check as ``not_run`` with the probe's reason, because a report must exist either way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any, Literal, TypeAlias, overload

import numpy as np
import numpy.typing as npt

from ._lossless import float32_input, lossy_output, refuse_lossy_reference
from ._numbers import short_float
from ._program import as_program
from .adapters import Adapter, resolve, same_backend, storage_name
from .adapters._registry import entry_point_snapshot
from .config import Check, make_check
from .differ import Segment, Verdict, diff, host_array, on_device
from .differ.tolerance import positive_tolerance
from .errors import BackendError, ConfigError
from .floor import Floor, FunctionTruth, NoFloor, bind_floor, function_floor, function_truth
from .precision import PRECISIONS, PrecisionName, default_max_nmse
from .provenance import provenance_of
from .report.models import ReportDocument
from .runner import run_check
from .text import rounded
from .values import ValueVerdict
from .values.front import call_failure, named_function

__all__ = ["CompareMode", "Segments", "compare", "run"]

#: ``nmse``: inputs cast to float32, one NMSE verdict; ``values``: dtypes kept, faithful verdict.
CompareMode: TypeAlias = Literal["nmse", "values"]

#: What ``segments=`` accepts: a count of equal parts, Segment objects, or name -> (start, stop).
Segments: TypeAlias = int | Sequence[Segment] | Mapping[str, tuple[int, int]]


def _adapter(backend: str | Adapter, role: str) -> Adapter:
    """Resolve and probe ``backend``; BackendError unless it can run here."""
    adapter = resolve(backend) if isinstance(backend, str) else backend
    probe = adapter.probe()
    if probe.status == "unavailable":
        raise BackendError(adapter.spec, probe.reason or "unavailable (no reason given)")
    if probe.status == "error":
        raise BackendError(adapter.spec, f"{role} availability query failed: {probe.reason}")
    return adapter


def _run(
    adapter: Adapter,
    fn: Callable[..., Any],
    inputs: Sequence[npt.NDArray[np.float32]],
    precision: PrecisionName,
) -> list[Any]:
    """Run ``fn`` on ``adapter`` from host inputs; the outputs stay on the device."""
    xp = adapter.namespace()
    storage = adapter.storage_dtype(xp, precision)
    moved = [adapter.to_device(host) for host in inputs]
    # astype copies even to the same dtype (400 MB at 10^8 float32 on the reference).
    arrays = [a if a.dtype == storage else xp.astype(a, storage) for a in moved]
    result = fn(xp, *arrays)
    return list(result) if isinstance(result, tuple | list) else [result]


def _hosts(adapter: Adapter, outputs: list[Any]) -> list[npt.NDArray[np.float32]]:
    """Float32 host copies of device outputs, shapes kept."""
    return [
        adapter.host_float32(output).reshape(tuple(int(n) for n in output.shape))
        for output in outputs
    ]


#: Inputs from this many elements on run the NumPy reference on a second thread while the
#: candidate runs: NumPy releases the GIL, so the two overlap. Smaller calls stay in order.
OVERLAP_ELEMENTS = 1 << 20
#: Inputs of at least this many elements in all get the floor's float64 truth computed on a
#: second thread while the candidate runs (about one more reference run, hidden there).
TRUTH_OVERLAP_ELEMENTS = 1 << 16


def _overlaps(hosts: Sequence[npt.NDArray[np.float32]], reference: Adapter) -> bool:
    """Whether the reference runs beside the candidate: a NumPy reference on large inputs."""
    return reference.spec == "numpy" and sum(h.size for h in hosts) >= OVERLAP_ELEMENTS


def _reference_side(
    adapter: Adapter, fn: Callable[..., Any], hosts: Sequence[npt.NDArray[np.float32]]
) -> tuple[list[Any], list[npt.NDArray[np.float32]]]:
    """The reference's outputs as it returned them and as float32 host arrays (inside its
    :meth:`~Adapter.computing` scope); a lossy output is refused."""
    with adapter.computing():
        produced = _run(adapter, fn, hosts, "f32")
        refuse_lossy_reference(produced, adapter.spec)
        return produced, _hosts(adapter, produced)


def _flat(outputs: list[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
    """All outputs as one flat array (no copy for a single output)."""
    if len(outputs) == 1:
        return outputs[0].reshape(-1)
    return np.concatenate([o.reshape(-1) for o in outputs]) if outputs else np.empty(0, np.float32)


def _exact_bounds(name: object, bounds: object, elements: int) -> Segment:
    """One ``name -> (start, stop)`` entry, exactly typed and inside the output."""
    if not isinstance(name, str):
        raise ValueError(f"segments: the name {name!r} is not a str")
    if not (
        isinstance(bounds, tuple | list)
        and len(bounds) == 2
        and all(type(v) is int for v in bounds)  # exactly int: True is not 1, nor 2.0 two
    ):
        raise ValueError(f"segments[{name!r}] = {bounds!r} is not a (start, stop) pair of ints")
    start, stop = bounds
    if not 0 <= start < stop <= elements:
        raise ValueError(
            f"segments[{name!r}] = ({start}, {stop}) is not a non-empty range inside the "
            f"{elements} elements compared"
        )
    return Segment(name, start, stop)


def _segments(
    segments: Segments | None, outputs: int, sizes: list[int]
) -> int | Sequence[Segment] | None:
    if isinstance(segments, Mapping):
        # Strict: counted before anything is built (each segment holds an element at least),
        # and no name or bound is coerced (str(name), int(True) would hide a mistake).
        elements = sum(sizes)
        if len(segments) > elements:
            raise ValueError(
                f"segments names {len(segments)} segments, more than the {elements} elements "
                "compared"
            )
        return [_exact_bounds(name, bounds, elements) for name, bounds in segments.items()]
    if segments is None and outputs > 1:
        # Several outputs are judged one by one, so a small wrong one cannot hide behind a big one.
        bounds = np.cumsum([0, *sizes]).tolist()
        return [Segment(f"output{i}", bounds[i], bounds[i + 1]) for i in range(outputs)]
    return segments


def _bind_shapes(
    verdict: Verdict,
    reference: list[npt.NDArray[np.float32]],
    actual: list[npt.NDArray[np.float32]],
) -> Verdict:
    """Fail a verdict whose outputs have equal sizes but different shapes (a transpose)."""
    ref_shapes = [r.shape for r in reference]
    act_shapes = [a.shape for a in actual]
    if ref_shapes == act_shapes:
        return verdict
    if len(ref_shapes) == 1 and len(act_shapes) == 1:
        problem = f"output shape mismatch: reference {ref_shapes[0]}, actual {act_shapes[0]}"
    else:
        problem = f"output shapes differ: reference {ref_shapes}, actual {act_shapes}"
    reason = f"{verdict.reason}; {problem}" if verdict.reason else problem
    return replace(verdict, status="failed", reason=reason)


@overload
def compare(
    fn: str | Callable[..., Any],
    *inputs: Any,
    reference: str | Adapter = ...,
    candidate: str | Adapter | None = ...,
    max_nmse: float | None = ...,
    precision: PrecisionName = ...,
    segments: Segments | None = ...,
    allow_self_test: bool = ...,
    mode: Literal["nmse"] = ...,
    locate: bool = ...,
) -> Verdict: ...


@overload
def compare(
    fn: str | Callable[..., Any],
    *inputs: Any,
    reference: str | Adapter = ...,
    candidate: str | Adapter | None = ...,
    allow_self_test: bool = ...,
    mode: Literal["values"],
    function: str | None = ...,
    signed_zero: bool | None = ...,
    kwargs: Mapping[str, Any] | None = ...,
    voters: Sequence[str | Adapter | tuple[str, Callable[..., Any]]] = ...,
    locate: bool = ...,
) -> ValueVerdict: ...


def compare(
    fn: str | Callable[..., Any],
    *inputs: Any,
    reference: str | Adapter = "numpy",
    candidate: str | Adapter | None = None,
    max_nmse: float | None = None,
    precision: PrecisionName = "f32",
    segments: Segments | None = None,
    allow_self_test: bool = False,
    mode: CompareMode = "nmse",
    function: str | None = None,
    signed_zero: bool | None = None,
    kwargs: Mapping[str, Any] | None = None,
    voters: Sequence[str | Adapter | tuple[str, Callable[..., Any]]] = (),
    locate: bool = False,
) -> Verdict | ValueVerdict:
    """Run ``fn(xp, *arrays)`` on two backends from the same inputs and compare the outputs.

    Parameters
    ----------
    fn
        A function written against the Array API: it receives the backend's namespace ``xp``
        and one array per input, and returns an array (or a tuple or list of arrays); or a
        function of the arrays alone that asks them for their namespace
        (``array_api_compat.array_namespace(x)``, as scikit-learn, SciPy and
        array-api-extra do), told apart by its signature
        (:func:`diffcheck._program.takes_namespace`). Or the
        standard's name of one function (``"bitwise_left_shift"``, ``"linalg.vecdot"``),
        called as ``xp.<name>(*arrays, **kwargs)``.
    *inputs
        Host inputs: NumPy arrays, DLPack or buffer-protocol objects, nested lists. Each is
        converted to a float32 host array, moved to each backend with ``to_device`` and cast
        to the storage dtype (float32 on the reference, ``precision`` on the candidate).
    reference
        The trusted backend (name or adapter instance); it always stores float32.
    candidate
        The backend under test (name or adapter instance), required: there is no backend
        every machine has, and a default that raises elsewhere would hide that choice.
        ``diffcheck backends`` lists those available here.
    max_nmse
        The tolerance; the check passes only when NMSE is strictly below it. By default the
        precision's bucket (:func:`diffcheck.precision.default_max_nmse`).
    precision
        The candidate's storage precision: ``"f32"``, ``"f16"`` or ``"bf16"``.
    segments
        Ranges of the flattened (row-major) output judged on their own: an int for that many
        equal parts, a sequence of :class:`~diffcheck.Segment`, or a mapping
        ``name -> (start, stop)``. When ``fn`` returns several arrays and this is None, each
        output is its own segment (``output0``, ``output1``...).
    allow_self_test
        Let ``candidate`` be the reference's own backend (by adapter identity, see
        :func:`~diffcheck.adapters.same_backend`); refused otherwise.
    mode
        ``"nmse"`` (the default): the float32 NMSE comparison above. ``"values"``: the
        faithful value model: inputs and outputs keep their dtypes (bool, integers,
        float16/bfloat16, float32/64, complex), the result's dtype is bound against the
        standard and the reference, then its shape, then its values (exact for bool and
        integers; NaN placement, infinities, signed zeros and a per-function bound for
        floats), and each failure is blamed on a side (see :mod:`diffcheck.values`).
        ``max_nmse``, ``precision`` and ``segments`` belong to ``nmse`` mode only.
    function
        ``values`` mode: the standard's name of what ``fn`` computes (chooses the bound, the
        signed-zero policy, the dtype rule and the blame); a string ``fn`` names itself.
    signed_zero
        ``values`` mode: whether ``-0.0`` and ``+0.0`` must match (by default they must,
        except where the standard leaves the sign open).
    kwargs
        ``values`` mode: keyword arguments passed to the function (``axis=``, ``dtype=``).
    voters
        ``values`` mode: further backends (names such as ``"torch:cpu"``, adapters, or
        ``(name, call)`` pairs with ``call(*host_inputs, **kwargs)``), asked to vote on
        blame only when no rule or oracle decides; one that cannot run abstains, with its
        reason recorded.
    locate
        When the verdict fails, also run :func:`diffcheck.locate` on the same function,
        inputs (as this mode gives them to the backends) and backends, and attach its
        :class:`~diffcheck.localize.Localization` as ``verdict.located``: the first wrong
        call inside ``fn``, shown under the verdict's text. A passing verdict costs nothing
        more (``located`` is None); a locate that cannot run leaves ``located`` None and
        says why in ``verdict.locate_note``.

    Returns
    -------
    Verdict or ValueVerdict
        ``nmse`` mode: passed or failed with metrics and a reason; an output shape that
        differs from the reference's (even with the same element count) fails the verdict.
        A candidate that lacks a function the reference has, or raises where the reference
        returned, fails with a reason starting ``missing:`` or ``raises:`` (an error on the
        reference is the function's own and propagates).
        ``values`` mode: a :class:`~diffcheck.values.ValueVerdict` whose ``kind`` is one of
        ``missing``, ``raises``, ``dtype``, ``shape``, ``nan``, ``signed-zero``, ``inf``,
        ``value``, with the first and worst element and ``blame``. A divergence is never an
        exception, nor is a function missing from one namespace.
        Either way ``bool(verdict)`` is ``verdict.passed`` (``assert compare(...)`` fails on
        a failure), and ``verdict.provenance`` records which library computed each side
        and whether the two are independent (:mod:`diffcheck.provenance`).

    Raises
    ------
    BackendError
        When either backend is unavailable or its probe fails (``.adapter`` and ``.reason``
        say which and why), or the candidate does not store ``precision``. ``diffcheck run``
        and :func:`run` record such a check as ``not_run`` instead.
    UnknownBackendError
        When a backend name is not registered.
    ConfigError
        When ``precision`` or ``max_nmse`` is invalid (a bool or text is not a tolerance),
        the candidate is the reference's own backend without ``allow_self_test``, or, in
        ``nmse`` mode, an input or a reference output would lose value in the cast to
        float32 (complex, integer or bool outputs; integers float32 cannot hold): the
        message points to ``mode="values"``, which compares them exactly.
    ValueError
        When ``segments`` is malformed.

    Examples
    --------
    >>> import numpy as np, diffcheck
    >>> x = np.linspace(-3, 3, 1024, dtype=np.float32)
    >>> verdict = diffcheck.compare(lambda xp, x: xp.exp(x), x, candidate="array_api_strict")
    >>> verdict.passed
    True
    """
    if callable(fn):
        fn = as_program(fn, len(inputs))
    verdict = _compare(
        fn,
        inputs,
        reference,
        candidate,
        max_nmse,
        precision,
        segments,
        allow_self_test,
        mode,
        function,
        signed_zero,
        kwargs,
        voters,
    )
    verdict = _name_the_pair(verdict, reference, candidate, max_nmse, precision, mode, locate)
    if locate:
        return _locate_failure(verdict, fn, inputs, reference, candidate, precision, mode, kwargs)
    return verdict


#: Reasons that begin with their kind, which callers match on.
_KIND_FIRST = frozenset({"missing", "raises"})


def _name_the_pair(
    verdict: Verdict | ValueVerdict,
    reference: str | Adapter,
    candidate: str | Adapter | None,
    max_nmse: float | None,
    precision: PrecisionName,
    mode: CompareMode,
    locate: bool,
) -> Verdict | ValueVerdict:
    """A failure's reason led by the pair and precision and followed by the next step, with
    its figures as a person reads them (the pytest header and ``diffcheck run`` say as much)."""
    # A values-mode verdict's reason leads with its kind and names its sides already.
    if not isinstance(verdict, Verdict) or verdict.passed or verdict.reason is None:
        return verdict
    if candidate is None or mode != "nmse":
        return verdict
    names = [side if isinstance(side, str) else side.spec for side in (candidate, reference)]
    pair = f"{names[0]} at {precision} against {names[1]}"
    reason = rounded(verdict.reason)
    # A reason that starts with its kind keeps it first (documented: ``missing:``, ``raises:``).
    kind = reason.split(":", 1)[0]
    reason = f"{reason}; {pair}" if kind in _KIND_FIRST else f"{pair}: {reason}"
    default = default_max_nmse(precision)
    if max_nmse is not None and max_nmse != default:
        reason += f"; tolerance {short_float(max_nmse)} given, {precision}'s default is {short_float(default)}"
    measured = verdict.metrics
    if not locate and measured is not None and not measured.nmse < verdict.tolerance:
        # An error in the values, not in a shape or a dtype: a call inside made it.
        reason += "; locate=True names the call inside the function that went wrong"
    return replace(verdict, reason=reason)


def _compare(
    fn: str | Callable[..., Any],
    inputs: tuple[Any, ...],
    reference: str | Adapter,
    candidate: str | Adapter | None,
    max_nmse: float | None,
    precision: PrecisionName,
    segments: Segments | None,
    allow_self_test: bool,
    mode: CompareMode,
    function: str | None,
    signed_zero: bool | None,
    kwargs: Mapping[str, Any] | None,
    voters: Sequence[str | Adapter | tuple[str, Callable[..., Any]]],
) -> Verdict | ValueVerdict:
    """:func:`compare` without ``locate`` and before the pair is named."""
    if candidate is None:
        raise ConfigError(
            "compare() needs candidate=, the backend under test, such as "
            '"mlx:cpu", "torch:cpu" or "array_api_strict"; '
            "'diffcheck backends' lists the backends available here"
        )
    _refuse_self_test(candidate, reference, allow_self_test)
    if isinstance(fn, str):
        _refuse_unknown_function(fn, reference)
    if mode == "values":
        return _compare_values(
            fn,
            inputs,
            reference,
            candidate,
            max_nmse,
            precision,
            segments,
            function,
            signed_zero,
            kwargs,
            voters,
        )
    if mode != "nmse":
        raise ConfigError(f'mode "{mode}" is not supported; it must be "nmse" or "values"')
    if function is not None or signed_zero is not None or kwargs or voters:
        raise ConfigError(
            'function, signed_zero, kwargs and voters belong to mode="values"; '
            'pass mode="values" to use them'
        )
    if isinstance(fn, str):
        fn = named_function(fn)
    if precision not in PRECISIONS:
        raise ConfigError(
            f'precision "{precision}" is not supported; it must be one of {", ".join(PRECISIONS)}'
        )
    tolerance = default_max_nmse(precision) if max_nmse is None else positive_tolerance(max_nmse)
    with entry_point_snapshot():  # one scan of the installed plugins, not one per name
        candidate_adapter = _adapter(candidate, "candidate")
        reference_adapter = _adapter(reference, "reference")
    executes = candidate_adapter.capabilities().precisions
    if precision not in executes:
        raise BackendError(
            candidate_adapter.spec,
            f"it does not execute precision {precision} (it executes: {', '.join(executes)})",
        )
    hosts = [float32_input(host_array(value), index) for index, value in enumerate(inputs)]
    overlap = _overlaps(hosts, reference_adapter)
    with ThreadPoolExecutor(1, thread_name_prefix="diffcheck-reference") as pool:
        # A large NumPy reference runs on a second thread while this one drives the candidate
        # (whose library may bind streams or devices to the calling thread); otherwise in
        # order, so a reference error stops the call before the candidate runs.
        pending = pool.submit(_reference_side, reference_adapter, fn, hosts) if overlap else None
        # The floor's truth needs nothing of either side: it runs there too, after the
        # reference, while this thread drives the candidate.
        truth = (
            pool.submit(
                function_truth,
                fn,
                hosts,
                precision,
                honest_needed=reference_adapter.spec != "numpy" or precision != "f32",
            )
            if sum(h.size for h in hosts) >= TRUTH_OVERLAP_ELEMENTS
            else None
        )
        produced, expected = (
            ([], []) if pending is not None else _reference_side(reference_adapter, fn, hosts)
        )
        with candidate_adapter.computing():
            try:
                raw, failure = _run(candidate_adapter, fn, hosts, precision), None
            except Exception as error:  # the reference runs: the candidate's failure is a verdict
                raw, failure = [], error
            if pending is not None:
                produced, expected = pending.result()  # a reference error propagates
            verdict = _judge_candidate(
                candidate_adapter,
                raw,
                failure,
                produced,
                expected,
                tolerance,
                precision,
                segments,
                _floor_of(fn, hosts, precision, expected, reference_adapter, truth),
            )
    if produced and raw:
        found = provenance_of(reference_adapter, candidate_adapter, produced[0], raw[0])
        verdict = replace(verdict, provenance=found)
    return _bind_storage(verdict, candidate_adapter, precision)


def _locate_failure(
    verdict: Verdict | ValueVerdict,
    fn: str | Callable[..., Any],
    inputs: Sequence[Any],
    reference: str | Adapter,
    candidate: str | Adapter | None,
    precision: PrecisionName,
    mode: CompareMode,
    kwargs: Mapping[str, Any] | None,
) -> Verdict | ValueVerdict:
    """``verdict`` carrying where inside ``fn`` it diverged, when it failed (see compare)."""
    from .localize import locate as locate_first_wrong
    from .localize._attached import attach
    from .values.call import resolve_function

    if verdict.passed or candidate is None:
        return attach(verdict, None, "")
    program: Callable[..., Any]
    if isinstance(fn, str):
        name, options = fn, dict(kwargs or {})

        def program(xp: Any, *arrays: Any) -> Any:
            return resolve_function(xp, name)(*arrays, **options)
    else:
        program = fn
    # nmse mode gives both backends float32 inputs (the candidate then casts to precision);
    # values mode gives them the inputs in their own dtypes.
    given = (
        list(inputs)
        if mode == "values"
        else [float32_input(host_array(v), i) for i, v in enumerate(inputs)]
    )
    try:
        located = locate_first_wrong(
            program,
            *given,
            reference=reference,
            candidate=candidate,
            precision=precision if mode == "nmse" else "f32",
            allow_self_test=True,  # compare refused a self-test already, unless allowed
        )
    except Exception as error:  # the verdict stands; only the location is missing
        return attach(verdict, None, f"{type(error).__name__}: {error}")
    return attach(verdict, located)


FloorOf = Callable[[npt.NDArray[np.float32], bool], Floor | NoFloor | None]


def _floor_of(
    fn: Callable[..., Any],
    hosts: Sequence[npt.NDArray[np.float32]],
    precision: PrecisionName,
    expected: list[npt.NDArray[np.float32]],
    reference: Adapter,
    truth: Future[FunctionTruth | NoFloor] | None = None,
) -> FloorOf:
    """How the candidate's flat output is measured against its precision floor: the NumPy
    reference's own output is the float32 twin, where the reference is NumPy; ``truth`` is
    the float64 truth being computed on another thread (computed here when None)."""

    def measure(flat_act: npt.NDArray[np.float32], failed: bool) -> Floor | NoFloor | None:
        honest = _flat(expected) if reference.spec == "numpy" and expected else None
        return function_floor(
            fn,
            hosts,
            precision,
            flat_act,
            honest=honest,
            diagnose=failed,
            truth=None if truth is None else truth.result(),
        )

    return measure


def _judge_candidate(
    adapter: Adapter,
    raw: list[Any],
    failure: Exception | None,
    produced: list[Any],
    expected: list[npt.NDArray[np.float32]],
    tolerance: float,
    precision: PrecisionName,
    segments: Segments | None,
    floor_of: FloorOf | None = None,
) -> Verdict:
    """Judge the candidate's outputs (or its failure) against the reference's, inside the
    candidate's :meth:`~Adapter.computing` scope; then against its precision floor."""
    if failure is not None:
        return Verdict("failed", call_failure(adapter, failure), None, tolerance)
    if (lossy := lossy_output(raw, produced)) is not None:
        return Verdict("failed", lossy, None, tolerance)
    flat_ref = _flat(expected)
    if segments is None and len(raw) == 1 and on_device(raw[0]):
        # One copy of the output into reused page-locked memory, then the host differ: cheaper
        # than moving the reference over (the copy runs at full bus speed; measured on an
        # H200, bench/compare_end_to_end.py), and it keeps every metric of the host differ.
        shape = tuple(int(n) for n in raw[0].shape)
        with adapter.host_float32_staged(raw[0]) as flat_act:
            verdict = diff(flat_ref, flat_act, max_nmse=tolerance, ulp_dtype=precision)
            verdict = _hint_values_mode(verdict, flat_ref, flat_act)
            verdict = _bind_floor(verdict, flat_act, floor_of)
        return _bind_shapes(verdict, expected, [np.broadcast_to(np.float32(0), shape)])
    actual = _hosts(adapter, raw)
    flat_act = _flat(actual)
    chosen = _segments(segments, len(expected), [r.size for r in expected])
    verdict = diff(flat_ref, flat_act, max_nmse=tolerance, segments=chosen, ulp_dtype=precision)
    verdict = _hint_values_mode(verdict, flat_ref, flat_act)
    return _bind_shapes(_bind_floor(verdict, flat_act, floor_of), expected, actual)


def _bind_floor(
    verdict: Verdict, flat_act: npt.NDArray[np.float32], floor_of: FloorOf | None
) -> Verdict:
    """The verdict judged against the precision floor too, where its figures are finite."""
    if floor_of is None or verdict.metrics is None or not np.isfinite(flat_act).all():
        return verdict
    return bind_floor(verdict, floor_of(flat_act, verdict.status == "failed"))


def _refuse_unknown_function(name: str, reference: str | Adapter) -> None:
    """A function name in neither the standard nor the reference's namespace is a typo:
    an error with the nearest standard name, never a ``missing`` verdict on both sides."""
    from .suggest import did_you_mean
    from .values.call import resolve_function
    from .values.spec import STANDARD_FUNCTIONS, is_standard_name

    if is_standard_name(name):
        return
    try:
        resolve_function(_adapter(reference, "reference").namespace(), name)
    except AttributeError:
        known = [n for names in STANDARD_FUNCTIONS.values() for n in names]
        raise ConfigError(
            f'function "{name}" is neither in the Array API standard nor in the reference\'s '
            f"namespace{did_you_mean(name, known)}; pass a standard name or a callable"
        ) from None


def _hint_values_mode(verdict: Verdict, reference: Any, actual: Any) -> Verdict:
    """A failure over NaN at the same places on both sides says that values mode compares
    NaN placement (nmse mode measures finite values only)."""
    if verdict.passed or reference.shape != actual.shape:
        return verdict
    nan_ref, nan_act = np.isnan(reference), np.isnan(actual)
    if not nan_ref.any() or not np.array_equal(nan_ref, nan_act):
        return verdict
    hint = (
        "both sides are NaN at the same places; nmse mode measures finite values only, "
        'while mode="values" compares NaN placement'
    )
    return dataclasses.replace(verdict, reason=f"{verdict.reason}; {hint}")


def _bind_storage(verdict: Verdict, adapter: Adapter, precision: PrecisionName) -> Verdict:
    """Fail a verdict whose candidate stores another precision than ``precision``.

    An f16-rounded result measures NMSE ~8e-8, under f32's 1e-7: values alone cannot show
    that the candidate ran at the precision asked, so the storage it used is compared.
    """
    stored = storage_name(adapter.storage_dtype(adapter.namespace(), precision))
    if stored == precision:
        return verdict
    problem = (
        f"executed precision differs from the configured {precision}: inputs stored as {stored}"
    )
    reason = f"{verdict.reason}; {problem}" if verdict.reason else problem
    return replace(verdict, status="failed", reason=reason)


def _refuse_self_test(
    candidate: str | Adapter, reference: str | Adapter, allow_self_test: bool
) -> None:
    if not allow_self_test and same_backend(candidate, reference):
        name = candidate if isinstance(candidate, str) else candidate.spec
        other = reference if isinstance(reference, str) else reference.spec
        raise ConfigError(
            f'candidate "{name}" and reference "{other}" are the same backend; a backend cannot '
            "vouch for itself (pass allow_self_test=True for a self-test)"
        )


def _compare_values(
    fn: str | Callable[..., Any],
    inputs: Sequence[Any],
    reference: str | Adapter,
    candidate: str | Adapter,
    max_nmse: float | None,
    precision: PrecisionName,
    segments: Segments | None,
    function: str | None,
    signed_zero: bool | None,
    kwargs: Mapping[str, Any] | None,
    voters: Sequence[str | Adapter | tuple[str, Callable[..., Any]]],
) -> ValueVerdict:
    """``compare(..., mode="values")``: the faithful value model (see :mod:`diffcheck.values`)."""
    from .values.call import compare_call
    from .values.front import refuse_nmse_options, voter_calls

    refuse_nmse_options(max_nmse, precision, segments)
    candidate_adapter = _adapter(candidate, "candidate")
    reference_adapter = _adapter(reference, "reference")
    return compare_call(
        fn,
        inputs,
        reference_adapter,
        candidate_adapter,
        function=function,
        signed_zero=signed_zero,
        kwargs=dict(kwargs or {}),
        voters=voter_calls(voters, fn),
        provenance=True,
    )


def run(
    config: Check | Mapping[str, Any],
    *,
    report: str | PathLike[str] | None = None,
    max_memory: int | None = None,
    allow_self_test: bool = False,
) -> ReportDocument:
    """Run one check exactly as ``diffcheck run`` does and return its report document.

    Parameters
    ----------
    config
        A :class:`~diffcheck.config.Check` from :func:`~diffcheck.config.make_check`, or a
        mapping of ``make_check`` keyword arguments, e.g.
        ``{"require_backend": "torch:cpu", "op": "gemm", "m": 8}``.
    report
        A path for the JSON report; it must not exist (it is created new, never overwritten).
        None keeps the document in memory only.
    max_memory
        The most bytes the check may need; by default half the memory available now. A
        check estimated over it is refused before anything is allocated.
    allow_self_test
        Let the candidate be the reference's own backend (recorded in the report).

    Returns
    -------
    ReportDocument
        ``document.result.status`` is ``passed``, ``failed`` or ``not_run`` (an unavailable
        backend is recorded, not raised), with the reason and the exact output bits.

    Raises
    ------
    ConfigError
        When the configuration is invalid, the candidate is the reference's own backend
        without ``allow_self_test``, or the check exceeds ``max_memory`` (before anything
        runs or any file exists).
    ReportError
        When the report file exists already or cannot be written.
    """
    if isinstance(config, Check):
        # A Check built directly skips make_check's validation: its pair is checked here, so
        # numpy:cpu against numpy cannot pass without the self-test marker.
        check = config
        _refuse_self_test(check.require_backend, check.reference, check.allow_self_test)
    else:
        missing = [key for key in ("require_backend", "op") if key not in config]
        if missing:
            raise ConfigError(
                f"config {dict(config)!r} has no {' or '.join(missing)}; "
                "it needs at least require_backend and op"
            )
        check = make_check(**({"allow_self_test": allow_self_test} | dict(config)))
    return run_check(check, None if report is None else Path(report), max_memory=max_memory)
