"""The op conformance suite: one set of tests every op (first-party or a plugin's) passes.

An op package runs it against its own ops in one line of its tests::

    from diffcheck.ops.conformance import op_conformance_suite

    TestGelu = op_conformance_suite("gelu")

It checks that the op is registered through the ``diffcheck.ops`` entry points under its
own name; that its params model is strict and documented and its default shape validates
to the output shape's element count; that its inputs are float32 and fully determined by the
seed; that the NumPy reference is finite and as long as the output; that its segments tile
the output; that its default tolerances are finite and positive; that its raw-GPU launch,
if it has one, dispatches registered kernels whose sources declare the constants of their
plans and reads back exactly the output; that its fuzz space draws
only shapes the op accepts, within the budget; that a candidate (``array_api_strict`` by
default: the strictest namespace, so a definition that leaves the Array API fails here)
passes with a report that replays; and that the suite can fail: the candidate's output
corrupted in every way :func:`diffcheck.testing.perturb` knows is caught.

This module imports pytest; nothing in the core imports it.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

import numpy as np
import pytest

from ..config import make_check
from ..precision import PRECISIONS
from . import OPS, Op, OpParams, get_op

__all__ = ["OpConformanceTests", "op_conformance_suite"]


class OpConformanceTests:
    """The op contract as a pytest test class; subclass it and set ``ops``."""

    ops: ClassVar[tuple[str, ...]] = ()
    #: The backend the op must pass on (an Array-API library or a registered adapter).
    candidate: ClassVar[str] = "array_api_strict"
    #: Examples drawn from the fuzz space.
    fuzz_examples: ClassVar[int] = 25

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "op" in metafunc.fixturenames:
            if not self.ops:
                raise pytest.Collector.CollectError(
                    f"{type(self).__name__} sets no ops; set ops = ('my-op',)"
                )
            metafunc.parametrize("op", list(self.ops), ids=list(self.ops), indirect=True)

    @pytest.fixture
    def op(self, request: pytest.FixtureRequest) -> Op[Any]:
        # Looked up per test, not at collection: the registry may be rediscovered between.
        found: Op[Any] = get_op(request.param)
        return found

    # -- registration and params --------------------------------------------------------------

    def test_registered_through_the_entry_point(self, op: Op[Any]) -> None:
        source = OPS.source(op.name)
        assert OPS[op.name] is op
        assert source.name == op.name
        assert re.fullmatch(r"[a-z][a-z0-9-]*", op.name), f"CLI token {op.name!r} is not kebab-case"
        assert re.fullmatch(r"[a-z][a-z0-9_]*", op.report_name), op.report_name
        assert op.execution_path

    def test_params_are_strict_and_documented(self, op: Op[Any]) -> None:
        assert issubclass(op.params_model, OpParams)
        assert op.options == tuple(op.params_model.model_fields)
        for name, field in op.params_model.model_fields.items():
            assert field.description, f"{op.name} --{name} has no description"
        with pytest.raises(ValueError, match="Extra inputs are not permitted"):
            op.params(not_a_param=1)

    def test_default_shape_validates_to_the_output_shape(self, op: Op[Any]) -> None:
        params = op.params()
        rows, cols = op.output_shape(params)
        assert rows >= 1
        assert cols >= 1
        assert op.validate(params) == rows * cols

    def test_default_tolerances_are_finite_and_positive(self, op: Op[Any]) -> None:
        for precision in PRECISIONS:
            tolerance = op.default_max_nmse(precision)
            assert math.isfinite(tolerance)
            assert tolerance > 0.0

    # -- inputs, reference, segments ----------------------------------------------------------

    def test_inputs_are_float32_and_seeded(self, op: Op[Any]) -> None:
        params = op.params()
        first, again, other = op.inputs(params, 7), op.inputs(params, 7), op.inputs(params, 8)
        assert first, "an op needs at least one input"
        assert list(first) == list(again)
        for name, values in first.items():
            assert values.dtype == np.float32, f"input {name} is {values.dtype}"
            assert np.isfinite(values).all(), f"input {name} is not finite"
            assert np.array_equal(values.view(np.uint32), again[name].view(np.uint32))
        assert any(not np.array_equal(first[n], other[n]) for n in first), "the seed is ignored"

    def test_reference_is_finite_and_as_long_as_the_output(self, op: Op[Any]) -> None:
        from ..adapters import resolve

        params = op.params()
        run = resolve("numpy").execute(op, params, op.inputs(params, 42), "f32", role="reference")
        assert run.output.dtype == np.float32
        assert run.output.size == op.validate(params)
        assert np.isfinite(run.output).all()

    def test_segments_tile_the_output(self, op: Op[Any]) -> None:
        params = op.params()
        segments = op.segments(params)
        names = [s.name for s in segments]
        assert len(names) == len(set(names)), f"segment names repeat: {names}"
        end = 0
        for segment in sorted(segments, key=lambda s: s.start):
            assert segment.start >= end, f"segment {segment.name} overlaps the one before"
            assert segment.start < segment.stop <= op.validate(params)
            end = segment.stop

    def test_raw_launch_is_registered_and_covers_the_output(self, op: Op[Any]) -> None:
        """Its raw-GPU launch (if any): registered kernels, sources that match their plans,
        inputs the op makes, and outputs exactly as long as the op's."""
        from ..launch import (
            MAX_WORKGROUPS_PER_DIMENSION,
            Filled,
            Input,
            check_kernel_source,
            kernel_named,
        )

        params = op.params()
        launch = op.raw_launch(params, MAX_WORKGROUPS_PER_DIMENSION)
        if launch is None:
            pytest.skip(f"{op.name} has no raw-GPU kernels (its raw_launch returns None)")
        inputs = op.inputs(params, 1)
        produced = 0
        for chain in launch.chains:
            output = chain.buffers[chain.output]
            assert isinstance(output, Filled), "a chain reads back a Filled buffer"
            produced += output.count
            for buffer in chain.buffers.values():
                if isinstance(buffer, Input):
                    assert buffer.name in inputs, f"the launch uploads unknown input {buffer.name}"
        assert produced == op.validate(params)
        for kernel in launch.kernels:
            assert kernel_named(kernel.name) == kernel, f"kernel {kernel.name} is not registered"
            for language, source in kernel.sources.items():
                check_kernel_source(kernel, source.text, origin=f"{kernel.name} ({language})")
                assert source.entry in source.text, f"no entry point {source.entry} ({language})"

    def test_fuzz_space_draws_only_valid_shapes(self, op: Op[Any]) -> None:
        space = op.fuzz_space()
        if space is None:
            # fuzz_space() is optional (Op's default is None): nothing to draw, and the skip
            # says so where `pytest -ra` lists it.
            pytest.skip(
                f"{op.name} has no fuzz space (its fuzz_space() returns None), so "
                f"'diffcheck fuzz --op {op.name}' cannot draw it; return an OpSpace to fuzz it"
            )
        pytest.importorskip(
            "hypothesis",
            reason="hypothesis is not installed (the fuzz extra of diffcheck-numerics)",
        )
        from hypothesis import HealthCheck, given, settings

        budget = 50_000

        @settings(
            max_examples=self.fuzz_examples,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(space.strategy(budget))
        def draw(drawn: tuple[dict[str, Any], int]) -> None:
            values, _ = drawn
            assert space.size(values) <= budget
            op.validate(op.params(**values))

        draw()

    # -- a candidate passes, and the suite can fail ---------------------------------------------

    def _candidate(self) -> Any:
        from ..adapters import resolve

        adapter = resolve(self.candidate)
        probe = adapter.probe()
        if not probe.is_available:
            pytest.skip(f"{self.candidate}: {probe.reason}")
        return adapter

    def test_candidate_passes_and_the_report_replays(self, op: Op[Any]) -> None:
        from ..report.replay import replay
        from ..runner import run_check

        adapter = self._candidate()
        document = run_check(make_check(self.candidate, op.name), candidate=adapter)
        assert document.result is not None
        assert document.result.status == "passed", document.result.reason
        assert replay(document).agrees

    def test_wrong_output_is_caught(self, op: Op[Any]) -> None:
        from ..report.replay import replay
        from ..runner import run_check
        from ..testing import PERTURBATIONS, perturb

        adapter = self._candidate()
        check = make_check(self.candidate, op.name)
        for kind in PERTURBATIONS:
            document = run_check(check, candidate=perturb(adapter, kind))
            assert document.result is not None
            assert document.result.status == "failed", f"{kind} output was not caught"
            assert replay(document).agrees


def op_conformance_suite(
    *ops: str, candidate: str = "array_api_strict"
) -> type[OpConformanceTests]:
    """A pytest test class that checks each op against the op contract.

    Parameters
    ----------
    *ops
        Op names (CLI tokens) as their entry points register them.
    candidate
        The backend each op must pass on; ``array_api_strict`` by default.

    Returns
    -------
    type[OpConformanceTests]
        Assign it to a module-level name that starts with ``Test``.

    Raises
    ------
    ValueError
        When no op is given.
    """
    if not ops:
        raise ValueError("op_conformance_suite needs at least one op")
    name = "TestOpConformance_" + re.sub(r"\W+", "_", "_".join(ops))
    attributes = {"ops": tuple(ops), "candidate": candidate, "__module__": __name__}
    return type(name, (OpConformanceTests,), attributes)
