"""A bundle's stored outcomes as backends, so the value model judges the stored evidence again.

Replay must re-derive every field a bundle states from what it stores, not trust it: the
verdict's kind, reason, bound and blame follow from the inputs and the two stored outputs.
:class:`StoredSide` is an adapter whose namespace "computes" the bundle's function by
returning one side's stored outcome (its arrays, or the missing attribute or the exception
it stored), and everything else (dtypes, the inspection API) from NumPy. Judged through the
same path the search used (:func:`~diffcheck.search.runner.judge`), the two stored sides
give the verdict that the bundle should have stored; :func:`rederive` says which stored
fields differ from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..adapters.numpy_ref import NumpyAdapter
from ..errors import BundleError
from ..values.model import ValueVerdict
from .bundle import Bundle, Output, decode_array
from .isolation import CallFailure
from .recipes import Example
from .runner import failure_verdict, judge

__all__ = ["StoredSide", "rederive", "stored_verdict"]


@dataclass(frozen=True)
class _Widened:
    """A stored output that was bfloat16 on its device: float32 values with that name."""

    values: np.ndarray[Any, Any]
    dtype: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.values.shape)


class _StoredNamespace:
    """NumPy's namespace, but the bundle's function returns (or raises) what was stored."""

    def __init__(self, side: StoredSide, path: tuple[str, ...] = ()) -> None:
        self._side, self._path = side, path

    def __getattr__(self, name: str) -> Any:
        import array_api_compat.numpy as xp

        path = (*self._path, name)
        function = self._side.function.split(".")
        if list(path) == function:
            return self._side.result
        if list(path) == function[: len(path)]:  # "linalg" of "linalg.vecdot"
            return _StoredNamespace(self._side, path)
        if path == ("__array_namespace_info__",) and self._side.info is not None:
            return self._side.info  # the backend's own default dtypes, when it runs here
        found = xp
        for part in path:  # dtypes, astype, the inspection API elsewhere: NumPy's own
            found = getattr(found, part)
        return found


class StoredSide(NumpyAdapter):
    """One side of a bundle, under the name it was stored with, answering with its outcome."""

    def __init__(self, spec: str, function: str, output: Output, live: Any = None) -> None:
        """``live``: the backend's adapter when it runs here (its default dtypes are used)."""
        super().__init__("cpu")
        self._spec, self.function, self._output = spec, function, output
        self.info = None
        if live is not None:
            self.info = getattr(live.namespace(), "__array_namespace_info__", None)

    @property
    def spec(self) -> str:
        return self._spec

    def namespace(self) -> Any:
        return _StoredNamespace(self)

    def host_float32(self, array: Any) -> np.ndarray[Any, Any]:
        if isinstance(array, _Widened):
            return np.asarray(array.values, dtype=np.float32).reshape(-1)
        return super().host_float32(array)

    def to_host(self, array: Any) -> np.ndarray[Any, Any]:
        return np.asarray(array.values if isinstance(array, _Widened) else array)

    def result(self, *args: Any, **kwargs: Any) -> Any:
        """The stored outcome, as the call that made it returned or raised it."""
        output = self._output
        if output.missing is not None:
            raise AttributeError(_after(output.missing, f"{self._spec}: ", "missing"))
        if output.raised is not None:
            text = _after(output.raised, f"{self._spec} raised ", "raised")
            name, _, message = text.partition(": ")
            if not name.isidentifier():
                raise BundleError(f"raised {output.raised!r} names no exception type")
            raise type(name, (Exception,), {})(message)
        arrays: list[Any] = []
        for index, stored in enumerate(output.arrays or []):
            values = decode_array(stored, where=f"output {index}")
            arrays.append(
                _Widened(values, stored.stored_as) if stored.stored_as == "bfloat16" else values
            )
        return tuple(arrays) if output.several else arrays[0] if arrays else None


def _after(text: str, prefix: str, field: str) -> str:
    """``text`` without the backend's prefix that the call path puts before it."""
    if not text.startswith(prefix):
        raise BundleError(
            f"the stored {field} text does not start with {prefix!r}, as this side's would"
        )
    return text[len(prefix) :]


def stored_verdict(
    bundle: Bundle, example: Example, live: tuple[Any, Any] = (None, None)
) -> ValueVerdict:
    """The value model's verdict, with blame, on the bundle's two stored outcomes.

    ``live`` holds the adapters of the two sides where they run here: their namespaces'
    declared default dtypes then apply, as they did when the bundle was written.
    """
    outputs, name = bundle.outputs, bundle.function
    reference = StoredSide(bundle.reference.backend, name, outputs["reference"], live[0])
    candidate = StoredSide(bundle.candidate.backend, name, outputs["candidate"], live[1])
    return judge(bundle.function, example, reference, candidate)


def _stored_failure(output: Output) -> CallFailure | None:
    """The crash or hang a side's stored ``raised`` text records (``"crash: ..."``), if any."""
    kind, _, reason = (output.raised or "").partition(": ")
    if output.arrays is None and kind in ("crash", "hang") and reason:
        return CallFailure(kind, reason)  # type: ignore[arg-type]
    return None


def failure_verdict_of(bundle: Bundle) -> ValueVerdict | None:
    """The verdict a crash or hang bundle's stored outcomes give (None: no crash or hang
    stored): the candidate's stored fate, and whether the reference alone returned."""
    failure = _stored_failure(bundle.outputs["candidate"])
    if failure is None:
        return None
    reference = _stored_failure(bundle.outputs["reference"])
    if reference is None and bundle.outputs["reference"].arrays is None:
        return None  # the reference neither returned nor crashed: not a crash finding
    return failure_verdict(failure, reference)


def rederive(bundle: Bundle, example: Example, live: tuple[Any, Any] = (None, None)) -> list[str]:
    """Every stored field of the verdict that differs from the one re-derived, one phrase each."""
    failed = failure_verdict_of(bundle)
    try:
        # Not ``failed or ...``: a verdict's truth is whether it passed.
        verdict = failed if failed is not None else stored_verdict(bundle, example, live)
    except BundleError as error:
        return [f"stored outputs: {error}"]
    finding, bound = bundle.finding, bundle.bound
    blame = verdict.blame
    pairs: list[tuple[str, Any, Any]] = [
        ("finding.dtype", finding.dtype, example.input_dtypes()),
        ("finding.kind", finding.kind, _kind(verdict, failed, bundle)),
        ("finding.reason", finding.reason, verdict.reason or ""),
        ("finding.blame.side", _get(finding.blame, "side"), _get(blame, "side")),
        ("finding.blame.evidence", _get(finding.blame, "evidence"), _get(blame, "evidence")),
        ("finding.blame.why", _get(finding.blame, "why"), _get(blame, "why")),
        ("bound.kind", bound.kind, verdict.bound.kind),
        ("bound.ulps", bound.ulps, verdict.bound.ulps),
        ("bound.nmse", bound.nmse, verdict.bound.nmse),
        ("bound.atol", bound.atol, verdict.bound.atol),
        ("bound.provenance", bound.provenance, verdict.bound.provenance),
    ]
    return [
        f"{name}: stored {_short(stored)}, re-derived {_short(derived)}"
        for name, stored, derived in pairs
        if not _same(stored, derived)
    ]


def _kind(verdict: ValueVerdict, failed: ValueVerdict | None, bundle: Bundle) -> str | None:
    if failed is not None:  # the candidate's stored fate names it: crash or hang
        return (bundle.outputs["candidate"].raised or "").partition(": ")[0]
    return verdict.kind if not verdict.passed else "none (passes)"


def _get(blame: Any, field: str) -> Any:
    return None if blame is None else getattr(blame, field)


def _same(a: Any, b: Any) -> bool:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    if numbers:
        return bool(a == b or (a != a and b != b))  # NaN stored for NaN derived is the same
    return type(a) is type(b) and bool(a == b)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
