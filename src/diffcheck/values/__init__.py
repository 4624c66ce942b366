"""The faithful value model: results keep their dtype, and a divergence names its kind.

A comparison binds the result's **dtype** (against the Array API standard's promotion and
result-dtype rules and against the reference), then its **shape**, then its **values**:
exact equality for bool and integers; for floats (complex componentwise) NaN where the
reference has NaN and nowhere else, infinities with their sign, signed zeros where the
standard specifies them, then an error bound chosen per function and dtype, with its
provenance. :mod:`diffcheck.values.blame` then decides which side is wrong.
"""

from __future__ import annotations

from .blame import Blame, Evidence, Side, blame
from .bounds import bound_for
from .call import Outcome, call_on, compare_call
from .compare import compare_values, failed_call, host_value
from .dtypes import dtype_name, expected_result_dtype, expected_result_dtypes, promote
from .model import FAILURE_KINDS, Bound, FailureKind, Location, ValueVerdict

__all__ = [
    "FAILURE_KINDS",
    "Blame",
    "Bound",
    "Evidence",
    "FailureKind",
    "Location",
    "Outcome",
    "Side",
    "ValueVerdict",
    "blame",
    "bound_for",
    "call_on",
    "compare_call",
    "compare_values",
    "dtype_name",
    "expected_result_dtype",
    "expected_result_dtypes",
    "failed_call",
    "host_value",
    "promote",
]
