"""Run one function on two backends with inputs in their own dtypes, and judge the results.

This is ``diffcheck.compare(..., mode="values")``: no cast to float32 anywhere. Inputs go to
each device in their dtype, results come home in theirs (bfloat16, which NumPy cannot hold,
comes home widened to float32 exactly on the device, with its name kept), and a function
one namespace lacks, or a call that raises on one side only, is a verdict, not an exception.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..differ import host_array
from ..provenance import provenance_of
from .blame import astype_refusal_allowed, blame
from .bounds import bound_for
from .compare import compare_values, failed_call, host_value
from .complex_open import open_complex_elements
from .defaults import DefaultDtypes, declared_defaults
from .dtypes import (
    dtype_name,
    expected_result_dtype,
    expected_result_dtypes,
    promote,
    scalars_fit,
)
from .elements import reduction_magnitude
from .exact import left_open
from .may import either_allowed, without_choices
from .model import Blame, ValueVerdict
from .signatures import default_version, outside_documented_dtypes
from .ulp import round_to_bfloat16

if TYPE_CHECKING:  # the adapter registry loads only when a call runs
    from ..adapters import Adapter

__all__ = ["Outcome", "backend_voter", "call_on", "compare_call"]

_SCALARS = (bool, int, float, complex)


@dataclass(frozen=True)
class Outcome:
    """One side's result: host value(s), or the reason there are none."""

    value: Any = None
    missing: str | None = None
    raised: str | None = None
    #: The first result as the device returned it (its type says which library computed).
    device_result: Any = None

    @property
    def ok(self) -> bool:
        return self.missing is None and self.raised is None


def _tagged(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)


def host_inputs(inputs: Sequence[Any]) -> list[Any]:
    """Host copies of the inputs in their own dtypes; Python scalars stay scalars.

    An input ``(values, "bfloat16")`` (or any dtype name) is rounded to that dtype on the
    host, kept as a tagged float32 array for NumPy, and cast on each device after the move.
    """
    hosts: list[Any] = []
    for value in inputs:
        if isinstance(value, _SCALARS):
            hosts.append(value)
        elif _tagged(value):
            name = value[1]
            wide = np.asarray(host_array(value[0]), dtype=np.float32)
            exact = round_to_bfloat16(wide) if name == "bfloat16" else wide.astype(name)
            hosts.append((np.asarray(exact, dtype=np.float32), name))
        else:
            hosts.append(host_array(value))
    return hosts


def _to_device(adapter: Adapter, xp: Any, host: Any) -> Any:
    if isinstance(host, _SCALARS):
        return host
    if _tagged(host):  # float32 on the way, the tagged dtype on arrival (exact: pre-rounded)
        return xp.astype(adapter.to_device(host[0]), getattr(xp, host[1]))
    return adapter.to_device(host)


def resolve_function(xp: Any, name: str) -> Any:
    """``xp.linalg.vecdot`` from ``"linalg.vecdot"``; AttributeError when absent."""
    found = xp
    for part in name.split("."):
        found = getattr(found, part)
    return found


def _home(adapter: Adapter, output: Any, *, computed: bool = False) -> Any:
    """One device result on the host in its own dtype (bfloat16 as a tagged float32 array).

    ``computed``: the caller has synchronized it already (no second wait for the device).
    """
    if isinstance(output, _SCALARS):
        return np.asarray(output)
    if not computed:
        adapter.synchronize(output)
    name = dtype_name(getattr(output, "dtype", ""))
    shape = tuple(int(n) for n in getattr(output, "shape", ()))
    if name == "bfloat16":
        return (adapter.host_float32(output).reshape(shape), "bfloat16")
    try:
        return np.asarray(adapter.to_host(output)).reshape(shape)
    except (TypeError, ValueError, RuntimeError, BufferError):
        return np.asarray(output).reshape(shape)


def call_on(
    adapter: Adapter, fn: str | Callable[..., Any], hosts: Sequence[Any], kwargs: dict[str, Any]
) -> Outcome:
    """Call ``fn`` on ``adapter`` and bring the result home; never raises for the call."""
    xp = adapter.namespace()
    try:
        # On the adapter's own device (mlx:cpu on the CPU), the reads home included.
        with adapter.computing(), np.errstate(all="ignore"), warnings.catch_warnings():
            # NaN, inf and division by zero are values under test here, not warnings.
            warnings.simplefilter("ignore", RuntimeWarning)
            return _call(adapter, xp, fn, hosts, kwargs)
    except AttributeError as error:
        return Outcome(missing=f"{adapter.spec}: {error}")
    except Exception as error:  # a backend's refusal is a finding, not a crash of compare
        return Outcome(raised=f"{adapter.spec} raised {type(error).__name__}: {error}")


def _call(
    adapter: Adapter,
    xp: Any,
    fn: str | Callable[..., Any],
    hosts: Sequence[Any],
    kwargs: dict[str, Any],
) -> Outcome:
    """One call and its results brought home (exceptions go to :func:`call_on`)."""
    function = resolve_function(xp, fn) if isinstance(fn, str) else None
    arrays = [_to_device(adapter, xp, h) for h in hosts]
    if function is not None:
        result = function(*arrays, **kwargs)
    else:
        assert callable(fn)
        result = fn(xp, *arrays, **kwargs)
    if isinstance(result, tuple | list):
        first = result[0] if result else None
        return Outcome(value=tuple(_home(adapter, r) for r in result), device_result=first)
    return Outcome(value=_home(adapter, result), device_result=result)


def backend_voter(adapter: Adapter, fn: str | Callable[..., Any]) -> Callable[..., Any]:
    """A blame voter that runs ``fn`` on ``adapter``: ``voter(*hosts, **kwargs)`` -> result.

    It probes the backend when first asked; an unavailable backend, a missing function or
    an exception raises, which the vote records as that voter abstaining, with the reason.
    """

    def voter(*hosts: Any, **kwargs: Any) -> Any:
        probe = adapter.probe()
        if not probe.is_available:
            raise RuntimeError(f"{adapter.spec} is unavailable: {probe.reason}")
        outcome = call_on(adapter, fn, hosts, dict(kwargs))
        if not outcome.ok:
            raise RuntimeError(outcome.missing or outcome.raised)
        return outcome.value

    return voter


def _defaults(adapter: Adapter) -> DefaultDtypes:
    return declared_defaults(adapter.namespace())


def compare_call(
    fn: str | Callable[..., Any],
    inputs: Sequence[Any],
    reference: Adapter,
    candidate: Adapter,
    *,
    function: str | None = None,
    signed_zero: bool | None = None,
    kwargs: dict[str, Any] | None = None,
    voters: Sequence[tuple[str, Callable[..., Any]]] = (),
    provenance: bool = False,
    api_version: str | None = None,
) -> ValueVerdict:
    """Run ``fn`` on both backends from the same host inputs and judge faithfully.

    ``fn`` is a spec name (``"bitwise_left_shift"``) called as ``xp.<name>(*arrays,
    **kwargs)``, or a callable ``fn(xp, *arrays, **kwargs)``; ``function`` names the
    standard's function for bounds, dtype rules and blame (a spec-name ``fn`` names itself).
    Every failure carries its blame. ``provenance`` records which library computed each
    side and runs the independence probe (:mod:`diffcheck.provenance`). ``api_version`` is
    the standard's version whose documented input dtypes apply (default: the newest the
    reference declares): one side refusing an input outside them is not a finding.
    """
    name = fn if isinstance(fn, str) else function
    call_kwargs = dict(kwargs or {})
    hosts = host_inputs(inputs)
    ref = call_on(reference, fn, hosts, call_kwargs)
    cand = call_on(candidate, fn, hosts, call_kwargs)
    verdict = _blamed(
        name,
        fn,
        hosts,
        call_kwargs,
        ref,
        cand,
        signed_zero,
        (reference, candidate),
        voters,
        api_version,
    )
    if not provenance:
        return verdict
    found = provenance_of(reference, candidate, ref.device_result, cand.device_result)
    return replace(verdict, provenance=found)


def _blamed(
    name: str | None,
    fn: str | Callable[..., Any],
    hosts: Sequence[Any],
    call_kwargs: dict[str, Any],
    ref: Outcome,
    cand: Outcome,
    signed_zero: bool | None,
    sides: tuple[Adapter, Adapter],
    voters: Sequence[tuple[str, Callable[..., Any]]],
    api_version: str | None,
) -> ValueVerdict:
    """The verdict of both outcomes, with its blame when it failed."""
    reference, candidate = sides
    version = api_version or default_version(reference.namespace())

    def judged_against(outcome: Outcome) -> ValueVerdict:
        return _verdict(
            name,
            isinstance(fn, str),
            hosts,
            call_kwargs,
            ref,
            outcome,
            signed_zero,
            (_defaults(reference), _defaults(candidate)),
            version,
        )

    verdict = judged_against(cand)
    if verdict.passed or name is None:
        return verdict
    if ref.ok and cand.ok and verdict.kind in ("nan", "inf", "signed-zero"):
        opened = open_complex_elements(name, hosts, call_kwargs, ref.value, cand.value)
        if opened is not None:  # judge again without the elements the standard leaves open
            cand = replace(cand, value=opened[0])
            verdict = judged_against(cand)
            if verdict.passed:
                return replace(verdict, reason=f"not a finding: {opened[1]}")
    if verdict.kind == "raises" and name.removeprefix("xp.") == "astype":
        allowed = astype_refusal_allowed(hosts, dict(getattr(fn, "dtypes", ())))
        if allowed is not None:  # one side refusing a cast the standard discourages
            reason = f"not a finding: {allowed}, so refusing it is allowed ({verdict.reason})"
            return replace(verdict, status="passed", kind=None, reason=reason)
    open_reason = left_open(name, dict(getattr(fn, "dtypes", ())))
    if open_reason is not None and verdict.kind == "value":
        return replace(verdict, status="passed", kind=None, reason=f"not a finding: {open_reason}")
    if ref.ok and cand.ok and verdict.kind in ("value", "nan", "inf", "signed-zero"):
        chosen = either_allowed(name, hosts, ref.value, cand.value)
        if chosen is not None:
            return replace(verdict, status="passed", kind=None, reason=f"not a finding: {chosen}")
        rest = without_choices(name, hosts, ref.value, cand.value)
        if rest is not None:  # judge the rest alone, not an element where either is allowed
            cand = replace(cand, value=rest)
            verdict = judged_against(cand)
    try:
        judged = blame(
            name,
            hosts,
            call_kwargs,
            ref.value if ref.ok else None,
            cand.value if cand.ok else None,
            verdict,
            voters=voters,
            defaults=(_defaults(reference), _defaults(candidate)),
            dtype_args=dict(getattr(fn, "dtypes", ())),
            positional=tuple(getattr(fn, "positional", ())),
        )
    except Exception as error:  # the verdict stands; only the judgement of sides is lost
        judged = Blame(
            "undecided", f"blame could not decide: {type(error).__name__}: {error}", "none"
        )
    return replace(verdict, blame=judged)


def _verdict(
    name: str | None,
    named: bool,
    hosts: Sequence[Any],
    kwargs: dict[str, Any],
    ref: Outcome,
    cand: Outcome,
    signed_zero: bool | None,
    defaults: tuple[DefaultDtypes, DefaultDtypes],
    api_version: str,
) -> ValueVerdict:
    if ref.missing or cand.missing:
        return failed_call("missing", "; ".join(m for m in (ref.missing, cand.missing) if m))
    if ref.raised and cand.raised:
        verdict = failed_call("raises", f"{ref.raised}; {cand.raised}")
        return replace(verdict, status="passed", kind=None, reason=f"both raise: {verdict.reason}")
    dtypes = [host_value(h)[1] for h in hosts if not isinstance(h, _SCALARS)]
    outside = None if name is None else outside_documented_dtypes(name, dtypes, api_version)
    if ref.raised or cand.raised:
        returned = "candidate returned a result" if ref.raised else "reference returned a result"
        raised = f"{ref.raised or cand.raised}; the {returned}"
        if outside is not None:  # refusing an input the standard does not document is allowed
            reason = f"not a finding: {outside}, so refusing it is allowed ({raised})"
            return replace(failed_call("raises", reason), status="passed", kind=None)
        return failed_call("raises", raised)
    expected: list[str | tuple[str | None, ...] | None] = [None, None]
    if name is not None and named:  # a callable may cast inside: its inputs set no dtype rule
        # a scalar of another kind, or an input the standard does not document: left open
        fits = _scalars_fit(dtypes, hosts) and outside is None
        for side, own in enumerate(defaults):  # each side under its own declared defaults
            options = {"dtype": kwargs.get("dtype"), **own.options()}
            if not fits:
                continue
            if isinstance(ref.value, tuple) and not _tagged(ref.value):
                count = len(ref.value)
                expected[side] = expected_result_dtypes(name, *dtypes, outputs=count, **options)
            else:
                expected[side] = expected_result_dtype(name, *dtypes, **options)
    bound = None
    reduced = _reduced(name, hosts, kwargs)
    inputs = tuple(host_value(h)[1] for h in hosts if not isinstance(h, _SCALARS))
    if name is not None and (reduced > 1 or name in ("abs", "sign")):
        magnitude = reduction_magnitude(name, hosts, kwargs) if reduced > 1 else None
        dtype = host_value(_first_output(ref.value))[1]
        spread = _spread_atol(name, hosts, kwargs, dtype) if reduced > 1 else None
        bound = bound_for(
            name, dtype, reduced=reduced, magnitude=magnitude, inputs=inputs, atol=spread
        )
    return compare_values(
        ref.value,
        cand.value,
        function=name,
        bound=bound,
        expected_dtype=expected[0],
        candidate_expected_dtype=expected[1],
        signed_zero=signed_zero,
        reduced=reduced,
    )


def _scalars_fit(dtypes: Sequence[str], hosts: Sequence[Any]) -> bool:
    """Whether the standard's result dtype rule applies to a call with these inputs.

    With array inputs, every Python scalar must take the arrays' dtype by its kind. A call
    with no array input (``fft.fftfreq(n, d=...)``, ``linspace``, ``eye``) promotes nothing:
    its result is a declared default, except that a complex scalar makes ``linspace``'s
    result complex, which no rule here models, so a complex scalar leaves it open.
    """
    if dtypes:
        return scalars_fit(promote(dtypes), hosts)
    return not any(isinstance(h, complex) for h in hosts)


def _spread_atol(
    name: str, hosts: Sequence[Any], kwargs: dict[str, Any], dtype: str
) -> float | None:
    """The two-pass bound's absolute allowance for ``var``/``std`` (None for the rest)."""
    from .accuracy import spread_atol
    from .ulp import EPSILON

    if name.removeprefix("xp.") not in ("var", "std") or dtype not in EPSILON:
        return None
    x = host_value(hosts[0])[0]
    correction = float(kwargs.get("correction") or 0.0)
    try:
        return spread_atol(name, x, kwargs.get("axis"), correction, EPSILON[dtype])
    except (ValueError, TypeError, IndexError):
        return None


def _first_output(value: Any) -> Any:
    if isinstance(value, tuple) and not (len(value) == 2 and isinstance(value[1], str)):
        return value[0] if value else np.asarray([])
    return value


def _reduced(name: str | None, hosts: Sequence[Any], kwargs: dict[str, Any]) -> int:
    """How many terms each output element of a reduction sums (1 for other functions)."""
    from .bounds import REDUCTIONS

    if name is None or name.removeprefix("xp.") not in REDUCTIONS or not hosts:
        return 1
    first = host_value(hosts[0])[0]
    axis = kwargs.get("axis")
    if axis is None:
        if name.removeprefix("xp.") in ("vecdot", "linalg.vecdot", "matmul", "linalg.matmul"):
            return int(first.shape[-1]) if first.ndim else 1
        return max(int(first.size), 1)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return max(int(np.prod([first.shape[a] for a in axes])), 1)
