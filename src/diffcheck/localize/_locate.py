"""Locate the first wrong Array API call of a program run on two backends.

The program runs once on the reference and once on the candidate, each through a recording
proxy (:mod:`._proxy`). For every call, in program order, two errors are measured against
the reference's output of that call:

- the *carried* error: the candidate's own output (fed the candidate's own inputs);
- the *local* error: the candidate's function re-run on the reference's exact inputs of that
  call, moved over (and cast to the dtypes the candidate's call received), so only this
  call's own arithmetic differs.

A call whose local error breaks its bound is *wrong*; one whose carried error breaks it but
whose local error does not only *inherits* an earlier divergence. Bounds are the values
model's (:func:`~diffcheck.values.bound_for`: ULPs for elementwise functions, a length-aware
bound for reductions, an NMSE bucket of the storage precision for the rest, matmul among
them), or an NMSE the caller gives per function.

Memory: the reference's inputs and outputs of a call are kept on the host until the
candidate's same call is compared, and only for a window of calls that fits half of
``max_memory``; the candidate's outputs and re-runs of the window (about as large) are held
until the window ends, so that a lazy library evaluates them as one graph. When the program
needs more, it runs again, both sides, for the next window (``passes`` says how many runs of
each side it took).
Both sides must be deterministic: a call sequence that differs between the sides (control
flow on values) is reported at the first call where the paths split, and no later call is
compared.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..errors import ConfigError
from ..values.call import _home, _to_device, host_inputs
from ._arrays import arrays_in, cast, digest, dtype_of, map_call, nbytes, shape_of
from ._bundle import bundle_for_call
from ._guard import Deadline, returned_arrays
from ._judge import Comparer, Kept, Pending
from ._proxy import RawCall, Recorder, RecordingNamespace, is_array, unwrap
from ._rerun import short_bound
from ._result import CandidateRaised, Localization, LocatedCall, PathSplit
from ._twins import MATMULS, call_twin

__all__ = ["DEFAULT_MAX_MEMORY", "locate_on"]

DEFAULT_MAX_MEMORY = 1 << 30
_PRECISION_DTYPES = {"f32": None, "f16": "float16", "bf16": "bfloat16"}


class _Stop(Exception):
    """Raised inside the candidate's program to end it (paths split, or window done)."""


@dataclass
class _Pass:
    """One window's run of both sides."""

    start: int
    budget: int
    kept: list[Kept] = field(default_factory=list)
    stored: int = 0
    stop: int | None = None  # first call index not stored (the next window's start)


def _host_of(reference: Adapter, array: Any) -> Any:
    """The reference's array on the host: a NumPy array is its own host copy already."""
    if type(array) is np.ndarray and array.dtype.kind in "biufc":
        return array  # what _home would give: a view of the very same values
    return _home(reference, array)


def _raised(
    recorder: Recorder, error: BaseException, files: frozenset[str]
) -> tuple[int, str, str]:
    """(index, function, site) of the recorded call or namespace attribute that raised.

    An error raised by the program's own code between calls is placed at its innermost line
    in the program's file (``files``), else at the innermost line of its traceback.
    """
    failed = recorder.failed
    if failed is not None and (failed[0] is error or failed[0] is error.__context__):
        return failed[1], failed[2], failed[3]
    frames, own = [], []
    tb = error.__traceback__
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        frames.append(f"{path}:{tb.tb_lineno}")
        if path in files:
            own.append(frames[-1])
        tb = tb.tb_next
    site = (own or frames or ["<unknown>"])[-1]
    return recorder.count, "(the program's own code)", site


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:300]


def _run_reference(
    fn: Callable[..., Any],
    reference: Adapter,
    hosts: list[Any],
    window: _Pass,
    deadline: Deadline,
) -> list[Kept]:
    xp = reference.namespace()
    # Host copies of the window's outputs by the identity of their device array (held with
    # it, so the identity stays unique): a later call's input is mostly an earlier output.
    homes: dict[int, tuple[Any, Any]] = {}

    def home(array: Any) -> Any:
        found = homes.get(id(array))
        return found[1] if found is not None else _host_of(reference, array)

    def observe(call: RawCall) -> None:
        deadline.check()
        arrays = arrays_in(call.args, call.kwargs)
        produced = call.outputs
        kept = Kept(
            call.name,
            call.site,
            tuple([shape_of(a) for a in arrays]),
            tuple([dtype_of(a.dtype) for a in arrays]),
            tuple([shape_of(o) for o in produced]),
            tuple([dtype_of(o.dtype) for o in produced]),
            "",  # read only for a stored call (its LocatedCall): taken for those alone
        )
        window.kept.append(kept)
        if call.index < window.start or window.stop is not None:
            return
        outputs = [_host_of(reference, o) for o in produced]
        args, kwargs, hosts = map_call(call.args, call.kwargs, home)
        size = sum([nbytes(h) for h in outputs + hosts])
        if window.stored + size > window.budget and window.stored > 0:
            window.stop = call.index
            return
        kept.args, kept.kwargs = args, kwargs
        kept.outputs = outputs
        kept.function = call.function
        kept.nbytes = size
        window.stored += size
        kept.digest = digest(outputs)
        for array, host in zip(produced, outputs, strict=True):
            homes[id(array)] = (array, host)

    recorder = Recorder(observe)
    namespace = RecordingNamespace(xp, recorder)
    with reference.computing():  # the device the name says, and no other
        raw = [_to_device(reference, xp, h) for h in hosts]
        # The program's inputs are their hosts already: a call that takes one keeps that
        # very host array (so the candidate can reuse its own copy of it, see below).
        homes.update((id(a), (a, h)) for a, h in zip(raw, hosts, strict=True) if is_array(a))
        side = f"the reference {reference.spec}"
        with deadline.running(side, lambda: f"after {recorder.count} calls"), recorder.running():
            try:
                returned = fn(namespace, *[recorder.wrap(a) for a in raw])
            except Exception as error:  # the program's own fault: both sides run it as is
                index, name, site = _raised(recorder, error, deadline.files)
                raise ConfigError(
                    f"the program raised {_one_line(error)} on {side} at call #{index} {name} "
                    f"({site}); fix the program: locate runs it unchanged on both sides"
                ) from None
            outputs = returned_arrays(returned, side)
            if window.start == 0:  # once: a program that gives another result on a re-run
                _check_deterministic(fn, xp, raw, outputs, reference, side)
    return window.kept


def _check_deterministic(
    fn: Callable[..., Any],
    xp: Any,
    raw: list[Any],
    outputs: list[Any],
    reference: Adapter,
    side: str,
) -> None:
    """ConfigError unless a second, unrecorded run gives the very same outputs (bits)."""
    first = digest([_host_of(reference, o) for o in outputs])
    try:
        # Through a silent recording namespace, as the recorded run: library code that asks
        # its arrays for the namespace takes the same branch both times.
        silent = Recorder(lambda call: None)
        again = returned_arrays(
            unwrap(fn(RecordingNamespace(xp, silent), *[silent.wrap(a) for a in raw])), side
        )
    except Exception as error:  # ran once, raised the second time: no fixed program either
        raise ConfigError(
            f"the program is not deterministic: run again on {side} it raised "
            f"{_one_line(error)}; locate runs it more than once, so it must give the same "
            "result each time"
        ) from None
    if len(again) != len(outputs) or digest([_host_of(reference, o) for o in again]) != first:
        raise ConfigError(
            f"the program is not deterministic: two runs on {side} gave different results "
            "(an unseeded random draw?); locate compares calls on both sides, so seed it or "
            "pass the random values in as inputs"
        )


def _run_candidate(
    fn: Callable[..., Any],
    candidate: Adapter,
    hosts: list[Any],
    reference_hosts: list[Any],
    window: _Pass,
    comparer: Comparer,
    located: dict[int, LocatedCall],
    wrong_inputs: dict[int, Pending],
    deadline: Deadline,
    raised: list[CandidateRaised],
) -> PathSplit | None:
    xp = candidate.namespace()
    kept = window.kept
    split: list[PathSplit] = []
    queue: list[Pending] = []

    def observe(call: RawCall) -> None:
        deadline.check()
        i = call.index
        if i >= len(kept) or (kept[i].name, kept[i].site) != (call.name, call.site):
            ref = (kept[i].name, kept[i].site) if i < len(kept) else None
            split.append(PathSplit(i, ref, (call.name, call.site)))
            raise _Stop
        record = kept[i]
        if record.outputs is None or i in located:
            return
        queue.append(comparer.start_local(record, call))
        if window.stop is not None and i + 1 >= window.stop:
            raise _Stop  # the rest of this window's calls are not stored: the next pass

    comparer.new_window()
    recorder = Recorder(observe)
    namespace = RecordingNamespace(xp, recorder)
    with candidate.computing():  # the device the name says (mlx:cpu never runs on a GPU)
        raw = [_to_device(candidate, xp, h) for h in hosts]
        for host, reference_host, array in zip(hosts, reference_hosts, raw, strict=True):
            if host is reference_host and is_array(array):  # the reference's exact input
                comparer.moved(host, array)
        if hosts is reference_hosts:
            # The re-runs take the reference's hosts as they are (see Comparer.prefetch).
            comparer.prefetch_window(kept)
        side = f"the candidate {candidate.spec}"
        with (
            deadline.running(side, lambda: f"after {recorder.count} calls"),
            contextlib.suppress(_Stop),
            recorder.running(),
        ):
            try:
                fn(namespace, *[recorder.wrap(a) for a in raw])
            except _Stop:
                raise
            except Exception as error:  # the reference ran it: a finding, not a crash
                index, name, site = _raised(recorder, error, deadline.files)
                raised.append(CandidateRaised(index, name, site, _one_line(error)))
        judged = list(zip(queue, comparer.judge_all(queue), strict=True))
    comparer.new_window()
    for pending, (carried, local) in judged:
        call, record = pending.call, pending.kept
        status: Any = "wrong" if not local.passed else "inherits" if not carried.passed else "ok"
        if status == "wrong" and not wrong_inputs:
            wrong_inputs[call.index] = pending  # the first wrong call: its bundle is made
        located[call.index] = LocatedCall(
            index=call.index,
            function=call.name,
            site=call.site,
            input_shapes=record.input_shapes,
            input_dtypes=record.input_dtypes,
            candidate_input_dtypes=pending.received,
            output_shapes=record.output_shapes,
            output_dtypes=record.output_dtypes,
            candidate_output_dtypes=tuple([dtype_of(o.dtype) for o in call.outputs]),
            reference_digest=record.digest,
            carried=carried,
            local=local,
            status=status,
            bound=pending.bound_text or short_bound(pending.bound),
        )
    if split:
        return split[0]
    if recorder.count < len(kept) and window.stop is None and not raised:
        return PathSplit(
            recorder.count, (kept[recorder.count].name, kept[recorder.count].site), None
        )
    return None


def _candidate_hosts(hosts: list[Any], precision: str) -> list[Any]:
    target = _PRECISION_DTYPES[precision]
    if target is None:
        return hosts
    out = []
    for host in hosts:
        if isinstance(host, np.ndarray) and host.dtype.kind == "f":
            out.append(cast(host, target))
        else:
            out.append(host)
    return out


def _before_first_wrong_ok(calls: tuple[LocatedCall, ...]) -> tuple[LocatedCall, ...]:
    """A call before the first wrong one is ``ok``: there is nothing yet to inherit.

    Its carried error may break its bound (a float64 multiply fed a matmul's rounding), but
    every call before it is right on its inputs: ``first_drift`` says where that begins.
    """
    first = next((i for i, c in enumerate(calls) if c.status == "wrong"), len(calls))
    if not any(c.status == "inherits" for c in calls[:first]):
        return calls
    return tuple(
        replace(c, status="ok") if i < first and c.status == "inherits" else c
        for i, c in enumerate(calls)
    )


def locate_on(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    reference: Adapter,
    candidate: Adapter,
    *,
    precision: str = "f32",
    max_memory: int = DEFAULT_MAX_MEMORY,
    nmse_bounds: Mapping[str, float] | None = None,
    time_limit: float | None = None,
) -> Localization:
    """Run ``fn`` on both adapters and judge every call (see the module docstring)."""
    if precision not in _PRECISION_DTYPES:
        raise ConfigError(
            f'precision "{precision}" is not supported; it must be one of {", ".join(_PRECISION_DTYPES)}'
        )
    if type(max_memory) is not int or max_memory <= 0:
        raise ConfigError(f"max_memory={max_memory!r}, but it must be a positive number of bytes")
    deadline = Deadline(time_limit, fn)
    hosts = host_inputs(inputs)
    candidate_hosts = _candidate_hosts(hosts, precision)
    comparer = Comparer(candidate, dict(nmse_bounds or {}))
    located: dict[int, LocatedCall] = {}
    first_pending: dict[int, Pending] = {}
    start, passes, peak, split, total = 0, 0, 0, None, 0
    raised: list[CandidateRaised] = []
    while True:
        # Half for the reference's kept inputs and outputs, half for the candidate's queued
        # outputs and re-runs (about as large), which wait for one evaluation per window.
        window = _Pass(start, max(1, max_memory // 2))
        kept = _run_reference(fn, reference, hosts, window, deadline)
        total = len(kept)
        split = _run_candidate(
            fn,
            candidate,
            candidate_hosts,
            hosts,
            window,
            comparer,
            located,
            first_pending,
            deadline,
            raised,
        )
        passes += 1
        peak = max(peak, window.stored)
        if raised or split is not None or window.stop is None or window.stop >= total:
            break
        start = window.stop
    calls = _before_first_wrong_ok(tuple(located[i] for i in sorted(located)))
    first = next((c for c in calls if c.status == "wrong"), None)
    make_bundle: Callable[[], tuple[Any, str]] | None = None
    make_diagnosis: Callable[[], str | None] | None = None
    if first is not None and first.index in first_pending:
        pending = first_pending[first.index]
        function, via = first.function, pending.call.via

        def bundle_first() -> tuple[Any, str]:
            args, kwargs = pending.inputs
            return bundle_for_call(function, via, args, kwargs, reference, candidate)

        make_bundle = bundle_first
        if function in MATMULS:

            def diagnose_first() -> str | None:
                return call_twin(function, pending, candidate, precision)  # type: ignore[arg-type]

            make_diagnosis = diagnose_first

    return Localization(
        reference=reference.spec,
        candidate=candidate.spec,
        precision=precision,
        calls=calls,
        total_calls=total,
        first_wrong=first,
        path_split=split,
        passes=passes,
        peak_stored_bytes=peak,
        max_memory=max_memory,
        make_bundle=make_bundle,
        make_diagnosis=make_diagnosis,
        raised=raised[0] if raised else None,
    )
