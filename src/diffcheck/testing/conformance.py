"""The adapter conformance suite: one set of tests that every backend adapter runs.

A backend package runs it against itself in one line of its tests::

    from diffcheck.testing import conformance_suite

    TestConformance = conformance_suite("mybackend:cpu")

The returned class is an ordinary pytest test class, a subclass of :class:`ConformanceTests`;
subclassing that directly (``backends = ("mybackend:cpu",)``) lets a package override a
test. An op case that matches a known divergence the adapter declares
(:meth:`Adapter.known_divergences <diffcheck.adapters.Adapter.known_divergences>`) is a
strict xfail that expects exactly :class:`~diffcheck.adapters.KnownDivergenceFailure`,
raised only for a failure the divergence explains (a measured NMSE over the tolerance and
within its ceiling): any other failure of the case (a crash, a NaN, a wrong length, an NMSE
above the ceiling) fails the run, and so does a pass (XPASS(strict): the declaration no
longer describes the backend). A backend that is the reference's own (``numpy:cpu`` against
``numpy``) fails every test unless the suite is a declared self-test
(``allow_self_test=True``). For each backend it checks that

* ``probe()`` never raises and returns a well-formed :class:`~diffcheck.adapters.Probe`
  (an unavailable backend skips every other test with the probe's reason, never silently;
  a probe ``error`` or a name that does not resolve fails). The backends are probed when the
  tests are collected: an unavailable one is one skipped item per test, and so is a
  precision it does not execute or an op it does not run, each reason saying how many
  cases it stands for (``probe_at_collection = False`` collects every case instead);
* the capabilities are well-formed and every precision they claim has a storage dtype;
* every registered op, at the contract's shapes including tails (gemm 64x33x35 and 1x3x5,
  silu-mul 3x257, rms-norm 3x33, the lifecycle at its default and at tokens=1), passes
  against the reference at every precision the backend claims, with the default tolerance;
* the executed storage dtypes are the requested precision;
* the report of each run survives a JSON round trip and replays (its stored verdict follows
  from its stored bits);
* and that the suite can fail: the backend's own output, corrupted by a wrapper (one segment
  scaled by a small factor, a NaN, a truncation, a skipped step, reversed elements), is
  caught as ``failed``; a backend whose probe says unavailable is recorded ``not_run`` and
  never dispatched; a tampered report does not replay.
"""

from __future__ import annotations

import re
import weakref
from typing import ClassVar, Final

import numpy as np
import pytest

from ..adapters import (
    Adapter,
    KnownDivergenceFailure,
    failure_of,
    matching_divergence,
    same_backend,
)
from ..ops import OPS, ContextLifecycle
from ..ops.samples import CONTRACT_CASES, OpCase
from ..precision import PRECISIONS, PrecisionName
from ..report.arrays import decode_output, encode_output
from ..report.models import ReportDocument
from ..report.read import parse_report
from ..report.replay import replay
from ..runner import execute_check, run_check
from ._cases import BackendSpec, _check, _label, _report_text, _Target, _target, _usable
from ._contract import capability_problems, probe_problems
from ._failure import failure_line_of
from ._perturb import PERTURBATIONS, Perturbation, perturb, unavailable
from ._plan import Axis, plan_params
from ._tails import fuzz_ops, tail_cases

__all__ = [
    "CONTRACT_CASES",
    "ConformanceTests",
    "OpCase",
    "conformance_suite",
    "op_cases",
]


def op_cases(*, tails: bool = True) -> tuple[OpCase, ...]:
    """The contract's cases, plus every other op of diffcheck's own at its default shape and
    at the tail shapes of its fuzz space (axes of 1, 33 and 127: see :mod:`._tails`).

    Ops that plugin packages add are not part of the adapter contract (each runs its own
    op conformance suite), so the cases do not change with what else is installed.
    ``tails=False`` leaves the tail shapes out: the wrong-output tests corrupt an output in
    ways (reversed, a segment scaled) that a one-element output cannot show.
    """
    from ..ops._registry import CORE_PACKAGE

    covered = {case.op for case in CONTRACT_CASES}
    others = [
        name for name in OPS if name not in covered and OPS.source(name).package == CORE_PACKAGE
    ]
    return CONTRACT_CASES + tuple(
        case for name in others for case in (OpCase(name), *(tail_cases(name) if tails else ()))
    )


_CASES: Final = op_cases()
_CASE_IDS: Final = [case.id for case in _CASES]
_DEFAULT_CASES: Final = op_cases(tails=False)
#: Tests whose cases leave the tail shapes out (see :func:`op_cases`).
_WITHOUT_TAILS: Final = frozenset({"test_wrong_output_is_caught"})
#: Each run's report, per adapter (dropped with it), shared by the tests that read it.
_RUNS: weakref.WeakKeyDictionary[
    Adapter, dict[tuple[OpCase, PrecisionName, str], ReportDocument]
] = weakref.WeakKeyDictionary()


class ConformanceTests:
    """The adapter contract as a pytest test class; subclass it and set ``backends``.

    ``backends`` holds backend names or zero-argument adapter factories; ``reference`` is the
    trusted backend. Op cases that match an active known divergence of the adapter are
    non-strict xfails. A subclass may also override a test to mark a divergence the adapter
    does not declare (with the upstream issue in the reason), for example with
    ``pytest.mark.xfail(strict=True)``; where both apply, the declared one is used.
    :func:`conformance_suite` makes such a subclass in one call.
    """

    backends: ClassVar[tuple[BackendSpec, ...]] = ()
    reference: ClassVar[str] = "numpy"
    #: Let a backend be the reference's own (a self-test of the machinery, so recorded).
    allow_self_test: ClassVar[bool] = False
    #: Probe each backend while the tests are collected, so that an unavailable backend, a
    #: precision it does not execute and an op it does not run are one skipped item per test
    #: (with the reason and how many cases it stands for), not one per case. Set it False
    #: where a fixture makes the backend available at setup (a stand-in runtime): the
    #: collection-time probe would see it missing.
    probe_at_collection: ClassVar[bool] = True

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        # pytest calls this hook on the class. Parametrizing by argument name here, not with
        # decorators, keeps the parameters when a subclass overrides a test.
        names = metafunc.fixturenames
        axes: list[Axis] = []
        if "case" in names:
            cases = _DEFAULT_CASES if metafunc.function.__name__ in _WITHOUT_TAILS else _CASES
            axes.append(("case", cases, lambda case: case.id))  # type: ignore[attr-defined]
        if "precision" in names:
            axes.append(("precision", PRECISIONS, str))
        if "kind" in names:
            axes.append(("kind", PERTURBATIONS, str))
        if "fuzz_op" in names:
            axes.append(("fuzz_op", fuzz_ops(), str))
        if "conformance_target" not in names:
            for name, values, _ in axes:
                metafunc.parametrize(name, values)
            return
        if not self.backends:
            raise pytest.Collector.CollectError(
                f"{type(self).__name__} sets no backends; set backends = ('name:device',)"
            )
        # Backend and case together: an unavailable backend, a precision it does not
        # execute or an op it does not run is one skipped item per test, not one per case
        # (see ._plan). Function-scoped, so pytest keeps the order (backend by backend);
        # the class's targets are cached by _conformance_targets.
        metafunc.parametrize(
            ["conformance_backend", *(name for name, _, _ in axes)],
            plan_params(
                self.backends,
                axes,
                probe=self.probe_at_collection,
                refused=None if self.allow_self_test else self.reference,
            ),
        )

    @pytest.fixture(scope="class")
    @classmethod
    def _conformance_targets(cls) -> dict[BackendSpec, _Target]:
        """The class's adapter per backend, made on first use: one per backend and class."""
        return {}

    @pytest.fixture
    def conformance_target(
        self,
        conformance_backend: BackendSpec,
        _conformance_targets: dict[BackendSpec, _Target],
    ) -> _Target:
        if conformance_backend not in _conformance_targets:
            _conformance_targets[conformance_backend] = _target(conformance_backend)
        return _conformance_targets[conformance_backend]

    def _run_case(self, adapter: Adapter, case: OpCase, precision: PrecisionName) -> ReportDocument:
        """Run once per adapter, case, precision and reference; later tests reuse the report."""
        runs = _RUNS.setdefault(adapter, {})
        key = (case, precision, self.reference)
        if key not in runs:
            runs[key] = run_check(
                _check(adapter, case, precision, self.reference), candidate=adapter
            )
        return runs[key]

    @pytest.fixture(autouse=True)
    def _known_divergence(self, request: pytest.FixtureRequest) -> None:
        """Mark an op case that matches the adapter's known divergence as a strict xfail.

        The mark expects exactly :class:`KnownDivergenceFailure`, which the test raises only
        for a failure the divergence explains; every other failure fails the test.
        """
        # An autouse fixture, not a parameter of the test, so an overriding subclass keeps
        # its signature. The adapter fixture (which may skip) is the one the test uses.
        if request.function.__name__ != "test_op_matches_reference":
            return
        adapter: Adapter = request.getfixturevalue("adapter")
        case: OpCase = request.getfixturevalue("case")
        precision: PrecisionName = request.getfixturevalue("precision")
        known = matching_divergence(
            adapter.known_divergences(), adapter.device, case.op, precision, failure=None
        )
        if known is not None:
            reason = (
                f"known divergence of {adapter.spec}: {known.reason} ({known.upstream}); "
                f"excused up to {known.bound}"
            )
            request.applymarker(
                pytest.mark.xfail(strict=True, raises=KnownDivergenceFailure, reason=reason)
            )

    @pytest.fixture
    def adapter(self, conformance_target: _Target) -> Adapter:
        if conformance_target.adapter is None:
            pytest.fail(str(conformance_target.problem), pytrace=False)
        if not self.allow_self_test and same_backend(conformance_target.adapter, self.reference):
            pytest.fail(
                f"{conformance_target.label} is the reference {self.reference}'s own backend: "
                "a backend cannot vouch for itself; use another reference, or set "
                "allow_self_test=True for a self-test",
                pytrace=False,
            )
        try:
            probe = conformance_target.adapter.probe()
        except Exception as error:  # test_probe_never_raises reports it; don't go on
            pytest.fail(f"probe() raised {type(error).__name__}: {error}", pytrace=False)
        if probe.status == "unavailable":
            pytest.skip(f"{conformance_target.label}: {probe.reason}")
        if probe.status == "error":
            pytest.fail(
                f"{conformance_target.label}: availability query failed: {probe.reason}",
                pytrace=False,
            )
        return conformance_target.adapter

    # -- identity, probe and capabilities ---------------------------------------------

    def test_probe_never_raises(self, conformance_target: _Target) -> None:
        if conformance_target.adapter is None:
            pytest.fail(str(conformance_target.problem), pytrace=False)
        try:
            probe = conformance_target.adapter.probe()
        except Exception as error:  # the contract: a probe reports, it never raises
            pytest.fail(f"probe() raised {type(error).__name__}: {error}", pytrace=False)
        problems = probe_problems(probe)
        if problems:
            pytest.fail("; ".join(problems), pytrace=False)
        if probe.status == "error":
            pytest.fail(f"availability query failed: {probe.reason}", pytrace=False)

    def test_capabilities_are_valid(self, adapter: Adapter) -> None:
        problems = capability_problems(adapter)
        if problems:
            pytest.fail("; ".join(problems), pytrace=False)

    def test_unavailable_backend_is_not_run(self, adapter: Adapter) -> None:
        wrapped = unavailable(adapter, "conformance: pretend the device is gone")
        check = _check(adapter, CONTRACT_CASES[0], "f32", self.reference)
        outcome = execute_check(check, candidate=wrapped)
        if outcome.status != "not_run" or outcome.reason != (
            "conformance: pretend the device is gone"
        ):
            pytest.fail(
                f"an unavailable backend must be not_run with the probe's reason, "
                f"got {outcome.status}: {outcome.reason}",
                pytrace=False,
            )
        if wrapped.calls:
            pytest.fail("an unavailable backend was dispatched", pytrace=False)

    # -- every op at every precision ------------------------------------------------

    def test_op_matches_reference(
        self, adapter: Adapter, case: OpCase, precision: PrecisionName
    ) -> None:
        _usable(adapter, case, precision)
        document = self._run_case(adapter, case, precision)
        result = document.result
        if result is not None and result.status == "passed":
            return
        message = f"{case.id} at {precision}: {_report_text(document)}"
        where = failure_line_of(document, replay(document).verdict)
        if where is not None:
            message += f"; where: {where}"
        if result is not None and result.status == "failed":
            failure = failure_of(
                result.reason,
                result.metrics.nmse if result.metrics else None,
                result.tolerance if result.tolerance is not None else float("nan"),
                [
                    s.metrics.nmse if s.metrics else None
                    for s in document.segments or ()
                    if s.status == "failed"
                ],
                floor.models if (floor := getattr(result, "floor", None)) is not None else (),
            )
            known = matching_divergence(
                adapter.known_divergences(), adapter.device, case.op, precision, failure=failure
            )
            if known is not None:
                raise KnownDivergenceFailure(message)
        pytest.fail(message, pytrace=False)

    def test_executed_storage_matches_precision(
        self, adapter: Adapter, case: OpCase, precision: PrecisionName
    ) -> None:
        _usable(adapter, case, precision)
        executed = self._run_case(adapter, case, precision).executed_precision
        if executed is None:
            pytest.fail("the report records no executed precision", pytrace=False)
        stored = (executed.backend_input_storage, executed.backend_output_storage)
        if stored != (precision, precision):
            pytest.fail(
                f"asked for {precision}, executed with inputs {stored[0]} and output {stored[1]}",
                pytrace=False,
            )

    def test_report_replays(self, adapter: Adapter, case: OpCase, precision: PrecisionName) -> None:
        _usable(adapter, case, precision)
        document = self._run_case(adapter, case, precision)
        reread = parse_report(document.to_json(), "the conformance case's report")
        outcome = replay(reread)
        if not outcome.agrees:
            pytest.fail("; ".join(outcome.disagreements), pytrace=False)

    # -- the suite can fail -----------------------------------------------------------

    def test_wrong_output_is_caught(
        self, adapter: Adapter, case: OpCase, kind: Perturbation
    ) -> None:
        precision = adapter.capabilities().precisions[0]
        _usable(adapter, case, precision)
        check = _check(adapter, case, precision, self.reference)
        document = run_check(check, candidate=perturb(adapter, kind))
        result = document.result
        if result is None or result.status != "failed":
            pytest.fail(f"{kind} output was not caught: {_report_text(document)}", pytrace=False)
        if not replay(document).agrees:
            pytest.fail("a failed report must replay too", pytrace=False)
        if kind == "scale_segment" and isinstance(check.op, ContextLifecycle):
            segments = document.segments
            if not segments:
                pytest.fail(
                    f"the lifecycle report judged no phases: {_report_text(document)}",
                    pytrace=False,
                )
            failing = [s.name for s in segments if s.status == "failed"]
            if failing != [segments[-1].name]:
                pytest.fail(
                    f"only the scaled phase {segments[-1].name} should fail, got {failing}",
                    pytrace=False,
                )

    def test_tampered_report_does_not_replay(self, adapter: Adapter) -> None:
        precision = adapter.capabilities().precisions[0]
        case = CONTRACT_CASES[0]
        _usable(adapter, case, precision)
        document = self._run_case(adapter, case, precision)
        result = document.result
        if result is None or result.actual is None:
            pytest.fail(f"the report stores no output: {_report_text(document)}", pytrace=False)
        values = decode_output(result.actual, "result.actual").copy()
        values.view(np.uint32)[0] ^= 1 << 22  # a large change in one element's mantissa
        # Re-encoded consistently (sizes and digest), as a forger would: replay must catch
        # the change from the values themselves.
        tampered = document.model_copy(
            update={"result": result.model_copy(update={"actual": encode_output(values)})}
        )
        opposite = (
            {"status": "failed", "reason": "tampered"}
            if result.status == "passed"
            else {"status": "passed", "reason": None}
        )
        flipped = document.model_copy(update={"result": result.model_copy(update=opposite)})
        for label, changed in (("changed output bits", tampered), ("changed status", flipped)):
            if replay(changed).agrees:
                pytest.fail(f"a report with {label} still replays", pytrace=False)


def conformance_suite(
    *backends: BackendSpec,
    reference: str = "numpy",
    allow_self_test: bool = False,
    fuzz_examples: int = 0,
) -> type[ConformanceTests]:
    """A pytest test class that checks each backend against the adapter contract.

    Parameters
    ----------
    *backends
        Backend names as users write them (``"mybackend:cpu"``), or zero-argument callables
        that make an adapter (for an adapter that is not registered, such as a test double).
    reference
        The trusted backend every op is compared with.
    allow_self_test
        Let a backend be the reference's own (by adapter identity); without it such a
        backend fails every test, since a backend cannot vouch for itself.
    fuzz_examples
        Also fuzz each op's shapes with this many examples per backend (0: no fuzz).

    Returns
    -------
    type[ConformanceTests]
        A test class; assign it to a module-level name that starts with ``Test`` (or
        subclass :class:`ConformanceTests` directly and set ``backends``).

    Raises
    ------
    ValueError
        When no backend is given.

    Examples
    --------
    In a backend package's tests::

        from diffcheck.testing import conformance_suite

        TestConformance = conformance_suite("mybackend:cpu", "mybackend:gpu")
    """
    if not backends:
        raise ValueError("conformance_suite needs at least one backend")
    name = "TestConformance_" + re.sub(r"\W+", "_", "_".join(_label(b) for b in backends))
    attributes: dict[str, object] = {
        "backends": tuple(backends),
        "reference": reference,
        "allow_self_test": allow_self_test,
        "__module__": __name__,
    }
    if fuzz_examples > 0:
        from ._fuzz_suite import ConformanceFuzzTests

        attributes["fuzz_examples"] = fuzz_examples
        return type(name, (ConformanceFuzzTests,), attributes)
    return type(name, (ConformanceTests,), attributes)
