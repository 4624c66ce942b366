"""The conformance suite with a short shape fuzz of every op (``conformance_suite(...,
fuzz_examples=N)``): the tail cases pin a few edges, the fuzz draws more of them."""

from __future__ import annotations

from typing import ClassVar

import pytest

from ..adapters import Adapter
from ..ops.samples import OpCase
from ._cases import _usable
from ._tails import TAIL_BUDGET
from .conformance import ConformanceTests

__all__ = ["ConformanceFuzzTests"]


class ConformanceFuzzTests(ConformanceTests):
    """The adapter contract plus a short shape fuzz of every op (needs Hypothesis)."""

    #: Examples of the shape fuzz per op and backend (``diffcheck fuzz``).
    fuzz_examples: ClassVar[int] = 20

    def test_short_fuzz_finds_no_failing_shape(self, adapter: Adapter, fuzz_op: str) -> None:
        """``fuzz_examples`` shapes of the op drawn at its tiles' edges, each checked."""
        from ..fuzz import fuzz

        precision = adapter.capabilities().precisions[0]
        _usable(adapter, OpCase(fuzz_op), precision)
        found = fuzz(
            adapter,
            fuzz_op,
            reference=self.reference,
            precision=precision,
            examples=self.fuzz_examples,
            max_elements=TAIL_BUDGET,
        )
        if found.status == "not_run":
            pytest.skip(f"{fuzz_op} on {adapter.spec}: {found.reason}")
        if found.status != "passed":
            from ..differ.render import failure_line

            check = found.check
            message = f"{fuzz_op} fails at {check.params if check else '?'}: {found.reason}"
            if check is not None and found.verdict is not None:
                where = failure_line(found.verdict, check.op.output_shape(check.params))
                message += f"; where: {where}" if where else ""
            pytest.fail(message, pytrace=False)
