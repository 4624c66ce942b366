"""The conformance kit's tail shapes and short fuzz catch a kernel that drops a partial block.

A ``sum`` that leaves out the last element of an axis longer than 32 and not a multiple of
32 passes every op at its default shape (all multiples of 32); the kit must still fail it.
"""

from __future__ import annotations

import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.adapters.array_api import ArrayApiAdapter
from diffcheck.ops import OPS
from diffcheck.ops.samples import OpCase
from diffcheck.runner import run_check
from diffcheck.testing import op_cases
from diffcheck.testing._cases import _check
from diffcheck.testing._tails import TAIL_BUDGET, TAIL_LENGTHS, fuzz_ops, tail_cases

pytest.importorskip("array_api_strict", reason="the dropped-tail backend wraps array-api-strict")
pytest_plugins = ["pytester"]


def _dropping_sum(xp: Any) -> Any:
    real = xp.sum

    def sum_(x: Any, /, *, axis: Any = None, **kwargs: Any) -> Any:
        axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        for a in axes:
            n = x.shape[a]
            if n > 32 and n % 32:
                index = [slice(None)] * x.ndim
                index[a] = slice(0, n - 1)  # the last partial block loses its last element
                x = x[tuple(index)]
        return real(x, axis=axis, **kwargs)

    return sum_


class DropsTail(ArrayApiAdapter):
    """array-api-strict whose ``sum`` drops an axis's last element past a 32-wide block."""

    def __init__(self) -> None:
        super().__init__("array_api_strict", None)

    def namespace(self) -> Any:
        xp = super().namespace()
        wrapped = types.SimpleNamespace(
            **{n: getattr(xp, n) for n in dir(xp) if not n.startswith("__")}
        )
        wrapped.sum = _dropping_sum(xp)
        wrapped.__name__ = "drops_tail_strict"
        return wrapped


def _failed(case: OpCase) -> bool:
    adapter = DropsTail()
    document = run_check(_check(adapter, case, "f32", "numpy"), candidate=adapter)
    assert document.result is not None
    return document.result.status == "failed"


def test_every_newer_op_gets_tail_cases_in_the_kit() -> None:
    cases = op_cases()
    for op in ("softmax", "layer-norm", "rope", "attention", "add-rms-norm"):
        shapes = [case for case in cases if case.op == op]
        assert len(shapes) >= 1 + 2, (op, shapes)  # the default and at least two tails
        assert any(33 in dict(case.params).values() for case in shapes), op


def test_the_default_softmax_passes_the_dropped_tail_and_a_tail_case_catches_it() -> None:
    assert not _failed(OpCase("softmax"))  # default shape: every axis a multiple of 32
    tails = [case for case in op_cases() if case.op == "softmax" and case.params]
    assert any(_failed(case) for case in tails)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([name for name in fuzz_ops() if OPS[name].fuzz_space() is not None]))
def test_tail_cases_are_valid_checks_within_the_budget(op: str) -> None:
    space = OPS[op].fuzz_space()
    assert space is not None
    cases = tail_cases(op)
    assert 1 <= len(cases) <= len(TAIL_LENGTHS)
    for case in cases:
        params = OPS[op].params(**case.values)
        OPS[op].validate(params)  # raises on an invalid shape
        assert space.size(case.values) <= TAIL_BUDGET
    first = space.dims[0].name
    assert {case.values[first] for case in cases} >= {1}


def test_the_kit_fails_the_dropped_tail_and_its_short_fuzz_finds_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider -p no:hypothesispytest -ra\n")
    pytester.makepyfile(
        test_kit=textwrap.dedent(
            f"""
            import sys

            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from test_conformance_tails import DropsTail
            from diffcheck.testing import conformance_suite

            TestDropsTail = conformance_suite(DropsTail, fuzz_examples=15)
            """
        )
    )
    result = pytester.runpytest("-k", "softmax and (f32 or short_fuzz)")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 2, result.stdout.str()[-3000:]
    # The failure line says where: the worst element by row and column, and its neighbours.
    result.stdout.fnmatch_lines(
        [
            "*softmax-dim33-tokens33 at f32: failed: *where: worst |diff| * at [[]*, *[]] (flat index *) of output shape (33, 33)*reference *; actual *"
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "FAILED *test_op_matches_reference?DropsTail-softmax-dim33-tokens33-f32?*",
            "FAILED *test_short_fuzz_finds_no_failing_shape?DropsTail-softmax?*",
        ]
    )
