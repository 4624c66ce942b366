"""Judging one recorded call: its carried error and its local re-run's, under its bound."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..values.bounds import bound_for
from ..values.compare import compare_values
from ..values.gauge import GAUGED, align_and_explain, align_to_reference
from ..values.model import Bound
from ._accuracy import SCANS, published_bound, reduction_bounds, scan_check
from ._arrays import arrays_in, cast, dtype_of, error_of, host_dtype, map_arrays, map_call
from ._batched import Assessed, Pair, assess
from ._floor_bounds import matmul_bounds, with_floor
from ._homes import homes
from ._moves import Mover
from ._proxy import RawCall, is_array
from ._records import Kept, Pending, arrays_of, reduced_terms
from ._rerun import (
    comparable,
    differ,
    dtype_problem,
    gives_default_floating,
    has_float_scalar,
    own_objects,
    round_scalars,
)
from ._result import CallError
from ._unspecified import UNSPECIFIED, unspecified_errors

__all__ = ["Comparer", "Kept", "Pending", "reduced_terms"]

_FLOATS = frozenset(["float16", "bfloat16", "float32", "float64"])
#: Contractions: bounded by the storage precision's NMSE bucket (overridable per name).
_MATMUL_LIKE = frozenset(
    ["matmul", "tensordot", "vecdot", "linalg.matmul", "linalg.tensordot", "linalg.vecdot"]
)
#: Indexing and transposes: they move values, so the result is exact.
_MOVES = frozenset(["__getitem__", "__setitem__", "T", "mT"])
#: The values model's bounds (no caller's NMSE) by (name, dtype, terms reduced, narrowed):
#: pure functions of the key, the same every run, kept once (about 40 a locate). Frozen.
_MODEL_BOUNDS: dict[tuple[str, str, int, bool, bool], Bound] = {}


class Comparer(Mover):
    """Judges one candidate call against the reference's record of it."""

    def __init__(self, candidate: Adapter, nmse_bounds: Mapping[str, float]) -> None:
        super().__init__(candidate)
        self.nmse_bounds = nmse_bounds
        self._bounds: dict[tuple[str, str, int, bool, bool], Bound] = {}
        #: "beyond the bound ..." by the identity of a bound in ``_bounds``.
        self._beyond: dict[int, str] = {}

    def _bound(self, name: str, dtype: str) -> Bound | None:
        if name in self.nmse_bounds:
            return Bound(
                "nmse", None, float(self.nmse_bounds[name]), f"{name}: NMSE given by the caller"
            )
        if name in _MATMUL_LIKE:
            # Their rounding depends on the summation order each library picks: the NMSE
            # bucket of the storage precision, not a per-element ULP bound.
            return bound_for(None, dtype)
        if name in _MOVES:
            return Bound("exact", None, None, f"{name} selects or moves values: exact")
        return published_bound(name, dtype)

    def _pair(
        self,
        name: str,
        reference: Any,
        candidate: Any,
        reduced: int,
        scalar: bool = False,
        bases: Callable[[str], Bound | None] | None = None,
    ) -> Pair:
        """The reference's output as the candidate's dtype expects it, and the bound.

        ``scalar``: a local re-run's pair whose call takes a Python float with narrowed
        arrays (see :meth:`_chosen_bound`).
        """
        wanted, have = host_dtype(candidate), host_dtype(reference)
        if differ(have, wanted):  # an integer or bool result in another dtype: its values
            both = comparable(reference, candidate)
            if both is not None:
                reference, candidate = both
                wanted, have = host_dtype(candidate), host_dtype(reference)
        narrowed = have != wanted
        expected = cast(reference, wanted) if narrowed else reference
        base = bases(wanted) if bases is not None and wanted in _FLOATS else None
        if base is not None:
            # Its allowance comes from this call's inputs: not one for every call of the name.
            chosen = self._chosen_bound(name, wanted, reduced, narrowed, scalar, base)
            return Pair(reference, expected, candidate, chosen)
        key = (name, wanted, reduced, narrowed, scalar)
        bound = self._bounds.get(key)
        if bound is None:
            if name in self.nmse_bounds:  # the caller's: this comparer's own
                bound = self._chosen_bound(name, wanted, reduced, narrowed, scalar)
            else:  # the values model's, the same for every run (see _MODEL_BOUNDS)
                bound = _MODEL_BOUNDS.get(key)
                if bound is None:
                    if len(_MODEL_BOUNDS) > 4096:
                        _MODEL_BOUNDS.clear()
                    bound = self._chosen_bound(name, wanted, reduced, narrowed, scalar)
                    _MODEL_BOUNDS[key] = bound
            self._bounds[key] = bound
        return Pair(reference, expected, candidate, bound)

    def _chosen_bound(
        self,
        name: str,
        wanted: str,
        reduced: int,
        narrowed: bool,
        scalar: bool = False,
        base: Bound | None = None,
    ) -> Bound:
        function = None if name.startswith("_") or name in _MOVES else name
        bound = self._bound(name, wanted)
        if base is not None and name not in self.nmse_bounds:
            bound = base
        if scalar and name not in self.nmse_bounds:
            # The standard converts a Python scalar to the array's dtype first (the
            # reference does); torch keeps it in float32 for float16 and bfloat16
            # arithmetic. The two results are at most 1 ULP apart.
            bound = bound or bound_for(function, wanted, reduced=reduced)
            if bound.ulps is not None:
                bound = replace(
                    bound,
                    ulps=bound.ulps + 1.0,
                    provenance=f"{bound.provenance}; +1 ULP for a Python scalar rounded "
                    f"to {wanted} first or kept wider",
                )
        if narrowed and name not in self.nmse_bounds:
            # The expected value is the reference's, rounded into the candidate's dtype: a
            # second rounding (and a Python scalar converted to the narrower dtype first, as
            # the standard says) may put a correct result 1 ULP from it.
            bound = bound or bound_for(function, wanted, reduced=reduced)
            if bound.ulps is not None:
                bound = replace(
                    bound,
                    ulps=bound.ulps + 1.0,
                    provenance=f"{bound.provenance}; +1 ULP for the reference rounded into {wanted}",
                )
        return bound or bound_for(function, wanted, reduced=reduced)

    def _judge(
        self, name: str, pair: Pair, assessed: Assessed, reduced: int, detailed: bool
    ) -> CallError:
        """One output's error under its bound, from what :func:`assess` found."""
        if assessed.same_bits or assessed.quick:  # the common cases: no model needed
            return assessed.figures
        if assessed.quick is False and not detailed:  # beyond it, and no reason will be shown
            f = assessed.figures
            reason = self._beyond.get(id(pair.bound))
            if reason is None:  # bounds are kept in self._bounds: their identities stay theirs
                reason = self._beyond[id(pair.bound)] = f"beyond the bound {pair.bound}"
            return CallError(
                f.nmse,
                f.max_abs,
                f.worst_index,
                False,
                reason,
                f.reference_around,
                f.candidate_around,
            )
        function = None if name.startswith("_") or name in _MOVES else name
        with np.errstate(all="ignore"):  # infinities meet an absolute allowance: no warning
            verdict = compare_values(
                pair.expected, pair.candidate, function=function, bound=pair.bound, reduced=reduced
            )
        f = assessed.figures
        if not f.passed:  # shapes differ: error_of's one failing answer without a verdict
            return error_of(pair.reference, pair.candidate, verdict)
        reason = with_floor(verdict.reason, name in _MATMUL_LIKE, pair.bound)
        # error_of(reference, candidate, verdict): the figures assess found, with the verdict
        # (about 60 us a pair not spent on measuring them again).
        return CallError(
            f.nmse,
            f.max_abs,
            f.worst_index,
            verdict.passed,
            reason,
            f.reference_around,
            f.candidate_around,
        )

    def start_local(self, kept: Kept, call: RawCall) -> Pending:
        """Queue the candidate's function on the reference's inputs (not yet evaluated).

        The reference's inputs are cast to the dtypes the candidate's own call received;
        where those are narrower (an f16/bf16 candidate), the expected output is the
        reference's function re-run on the same rounded inputs, so input rounding is not
        blamed on the call.
        """
        assert kept.args is not None
        assert kept.kwargs is not None
        assert kept.outputs is not None
        received = tuple([dtype_of(a.dtype) for a in arrays_in(call.args, call.kwargs)])
        targets = iter(received)
        casts: list[tuple[str, str]] = []
        planned: list[Any] = []
        narrowing: list[str] = []  # the dtypes an input is rounded into
        moved = self._moved

        def plan_and_move(host: Any) -> Any:
            # One walk of the arguments plans each input's dtype and moves it.
            have = host_dtype(host)
            target = next(targets, have)
            casts.append((have, target))
            if have != target:
                narrowing.append(target)
                host = cast(host, target)
            planned.append(host)
            found = moved.get(id(host))
            return found[1] if found is not None else self._move(host)

        args, kwargs, _ = map_call(kept.args, kept.kwargs, plan_and_move)
        # The candidate's own dtype objects and devices, never the reference's.
        args, kwargs = own_objects(self.xp, args, kwargs, (call.args, call.kwargs), casts)
        scalar = bool(narrowing) and has_float_scalar(kept.args, kept.kwargs)
        hosts: tuple[tuple[Any, ...], dict[str, Any]] = (kept.args, kept.kwargs)
        expected: list[Any] = list(kept.outputs)
        if narrowing:  # the re-run's hosts are the rounded ones, in the same places
            walk = iter(planned)
            hosts = map_arrays(hosts, lambda _: next(walk))
            if kept.function is not None:
                expected = self._reference_on(kept, hosts, dict(casts))
        try:  # inside the candidate's run, which ignores floating-point errors (Recorder.running)
            result = call.function(*args, **kwargs)
        except Exception as error:  # the call refuses inputs its own side accepted
            reason = f"re-run on the reference's inputs raised {type(error).__name__}: {error}"
            reason = " ".join(reason.split())[:300]
            return Pending(kept, call, reason, dict(casts), expected, hosts, received, scalar)
        if isinstance(result, np.generic):  # NumPy's whole reduction, as Recorder.call has it
            result = np.asarray(result)
        outputs = list(result) if isinstance(result, tuple | list) else [result]
        arrays = [o for o in outputs if is_array(o)]
        return Pending(kept, call, arrays, dict(casts), expected, hosts, received, scalar)

    def _reference_on(self, kept: Kept, hosts: Any, casts: dict[str, str]) -> list[Any]:
        """The reference's function on inputs rounded into the candidate's dtypes, rounded."""

        def widen(host: Any) -> Any:
            return host[0] if isinstance(host, tuple) else host  # bfloat16 values, in float32

        args, kwargs = map_arrays(hosts, widen)
        if "bfloat16" in casts.values():  # float32 holders of bfloat16 values: NumPy would
            args, kwargs = round_scalars(args, kwargs)  # take a scalar as float32
        assert kept.function is not None
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = kept.function(*args, **kwargs)
        outputs = list(result) if isinstance(result, tuple | list) else [result]
        rounded = []
        for out, ref in zip(outputs, kept.outputs or [], strict=False):
            target = casts.get(host_dtype(ref), host_dtype(ref))
            rounded.append(cast(np.asarray(out), target))
        return rounded

    def judge_all(self, queue: Sequence[Pending]) -> list[tuple[CallError, CallError]]:
        """The carried and the local error of every queued call.

        The window's outputs are evaluated and come to the host together, and are assessed
        (:func:`._batched.assess`); each error is then judged as for a single call.
        """
        # One evaluation and one copy per dtype for the whole window: both sides' outputs.
        every = homes(self.candidate, arrays_of(queue))
        own = 0  # the queued calls' own outputs come first, then their re-runs'
        rerun = sum([len(p.call.outputs) for p in queue])
        sides: list[tuple[Pending, int, list[Any], list[Any] | None]] = []
        pairs: list[Pair] = []
        pair = self._pair
        for pending in queue:
            name, kept, count = pending.call.name, pending.kept, len(pending.call.outputs)
            reduced = reduced_terms(name, kept)
            base = reduction_bounds(name, reduced, *pending.inputs) if reduced > 1 else None
            base = matmul_bounds(name, *pending.inputs) if name in _MATMUL_LIKE else base
            carried, own = every[own : own + count], own + count
            local = None
            if not isinstance(pending.local, str):
                local, rerun = every[rerun : rerun + len(pending.local)], rerun + len(pending.local)
            assert kept.outputs is not None
            if name in GAUGED:  # a decomposition's vectors, in the reference's choice
                carried = align_to_reference(name, kept.outputs, carried)
                if local is not None:  # the verdict says which vectors were judged apart
                    local, pending.note = align_and_explain(name, pending.expected, local)
            sides.append((pending, reduced, carried, local))
            if name in UNSPECIFIED:  # judged by shape alone (_errors): no pair to assess
                continue
            if len(carried) == len(kept.outputs):
                pairs += [
                    pair(name, r, h, reduced, False, base)
                    for r, h in zip(kept.outputs, carried, strict=True)
                ]
            if local is not None and len(local) == len(pending.expected):
                scalar = pending.scalar
                made = [
                    pair(name, r, h, reduced, scalar, base)
                    for r, h in zip(pending.expected, local, strict=True)
                ]
                if made:
                    pending.bound = made[0].bound
                pairs += made
        found = iter(zip(pairs, assess(pairs), strict=True))
        return [
            self._errors(p, reduced, carried, local, found) for p, reduced, carried, local in sides
        ]

    def _errors(
        self,
        pending: Pending,
        reduced: int,
        carried_hosts: list[Any],
        local_hosts: list[Any] | None,
        found: Iterator[tuple[Pair, Assessed]],
    ) -> tuple[CallError, CallError]:
        kept = pending.kept
        assert kept.outputs is not None
        if pending.call.name in UNSPECIFIED:
            return unspecified_errors(pending, carried_hosts, local_hosts)
        # The carried error's reason is never shown (only its figures): no detailed verdict.
        carried = self._worst(kept, kept.outputs, carried_hosts, reduced, found, detailed=False)
        if local_hosts is None:
            # The re-run raised where the candidate's own call did not: no local error was
            # measured, and a crash is not a wrong result (the carried error still counts).
            reason = f"not re-run: {pending.local}"
            nan = float("nan")
            return carried, CallError(nan, nan, None, True, reason, (), ())
        problem, casts = None, pending.casts
        default = gives_default_floating(pending.call.name, kept.args, kept.kwargs)
        for ref, got in zip(kept.outputs, local_hosts, strict=False):
            problem = problem or dtype_problem(host_dtype(ref), host_dtype(got), casts, default)
        local = self._worst(kept, pending.expected, local_hosts, reduced, found, detailed=True)
        if pending.call.name in SCANS and len(local_hosts) == 1:
            # A scan's element i sums an (i + 1)-term prefix: its bound grows with i.
            carried = self._scanned(
                pending, kept.args, kept.kwargs, kept.outputs, carried_hosts, carried
            )
            args, kwargs = pending.inputs
            local = self._scanned(pending, args, kwargs, pending.expected, local_hosts, local)
            pending.bound_text = "prefix bound"
        if pending.note is not None:  # null-space vectors judged by what is determined
            local = replace(local, reason="; ".join(filter(None, [local.reason, pending.note])))
        if problem is not None:  # wrong by its dtype; a wrong value is said too
            reason = problem if local.passed else f"{local.reason}; {problem}"
            local = replace(local, passed=False, reason=reason)
        return carried, local

    @staticmethod
    def _scanned(
        pending: Pending,
        args: Any,
        kwargs: Any,
        expected: Sequence[Any],
        hosts: Sequence[Any],
        error: CallError,
    ) -> CallError:
        """``error`` judged by the scan's prefix bound (:func:`._accuracy.scan_check`)."""
        if len(hosts) != 1 or len(expected) != 1:
            return error
        found = scan_check(
            pending.call.name, tuple(args or ()), kwargs or {}, expected[0], hosts[0]
        )
        if found is None:
            return error
        passed, reason = found
        return replace(error, passed=passed, reason=reason or None)

    def _worst(
        self,
        kept: Kept,
        reference: Sequence[Any],
        hosts: Sequence[Any],
        reduced: int,
        found: Iterator[tuple[Pair, Assessed]],
        *,
        detailed: bool,
    ) -> CallError:
        if len(hosts) != len(reference):  # no pairs were made for these outputs
            reason = f"{len(hosts)} outputs, the reference has {len(reference)}"
            return CallError(float("inf"), float("inf"), None, False, reason, (), ())
        if len(hosts) == 1:  # most calls: the one output's error is the call's
            pair, assessed = next(found)
            if assessed.same_bits or assessed.quick:  # _judge's common case, without a call
                return assessed.figures
            return self._judge(kept.name, pair, assessed, reduced, detailed)
        errors = []
        for _ in hosts:
            pair, assessed = next(found)
            errors.append(self._judge(kept.name, pair, assessed, reduced, detailed))
        failing = [e for e in errors if not e.passed]
        return failing[0] if failing else max(errors, key=lambda e: e.nmse)
